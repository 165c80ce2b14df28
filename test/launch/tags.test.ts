import { describe, expect, it } from 'vitest';
import { instanceTags, launchTags } from '../../shared/launch/tags';
import { nodeClass } from './fixtures';

describe('launch tags', () => {
  const nc = nodeClass({
    tags: {
      team: 'platform',
      'eks:eks-cluster-name': 'evil',
      'kubernetes.io/cluster/prod': 'shared',
      'karpenter.sh/nodepool': 'other',
      'karpenter.k8s.aws/ec2nodeclass': 'other',
      'karpenter.sh/nodeclaim': 'other',
      Name: 'custom-name',
    },
  });

  it('overlays spec.tags with the static keys, which always win', () => {
    expect(launchTags({ clusterName: 'prod', nodePool: 'general', nodeClass: nc })).toEqual({
      'kubernetes.io/cluster/prod': 'owned',
      'eks:eks-cluster-name': 'prod',
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      team: 'platform',
      'karpenter.sh/nodeclaim': 'other',
      Name: 'custom-name',
    });
  });

  it('adds the NodeClaim tag, which node class tags cannot override, and a Name they can', () => {
    const tags = instanceTags({
      clusterName: 'prod',
      nodePool: 'general',
      nodeClass: nc,
      nodeClaimName: 'general-x7k2p',
    });
    expect(tags).toMatchObject({
      'kubernetes.io/cluster/prod': 'owned',
      'eks:eks-cluster-name': 'prod',
      'karpenter.sh/nodepool': 'general',
      'karpenter.k8s.aws/ec2nodeclass': 'default',
      'karpenter.sh/nodeclaim': 'general-x7k2p',
      // Karpenter's tagging controller only adds a missing Name: the user's value wins.
      Name: 'custom-name',
      team: 'platform',
    });
    const { Name: _user, ...withoutName } = nc.spec.tags ?? {};
    const defaulted = instanceTags({
      clusterName: 'prod',
      nodePool: 'general',
      nodeClass: nodeClass({ tags: withoutName }),
      nodeClaimName: 'general-x7k2p',
    });
    expect(defaulted.Name).toBe('general-x7k2p');
    expect(Object.keys(tags).slice(0, 6)).toEqual([
      'kubernetes.io/cluster/prod',
      'eks:eks-cluster-name',
      'karpenter.sh/nodepool',
      'karpenter.k8s.aws/ec2nodeclass',
      'karpenter.sh/nodeclaim',
      'Name',
    ]);
  });

  it('never sets karpenter.sh/managed-by', () => {
    const tags = instanceTags({ clusterName: 'c', nodePool: 'p', nodeClass: nodeClass(), nodeClaimName: 'n' });
    expect(Object.keys(tags)).not.toContain('karpenter.sh/managed-by');
  });
});
