// The gc function's part of the Provisioner: its schedule, least-privilege IAM (deletions only of
// what carries the cluster's tags, describes only in the stack's region), Kubernetes access, its
// alarm and dashboard widget.

import { Duration } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it, vi } from 'vitest';
import { KUBE } from '../../shared/contracts';
import { actionsOf, exampleTemplate, statementsOf, synthProvisioner } from './stack';

vi.setConfig({ testTimeout: 180_000 });

const gcArn = { 'Fn::GetAtt': [Match.stringLikeRegexp('^ProvisionerGc'), 'Arn'] };

describe('Provisioner: gc function', () => {
  it('runs every 2 minutes by default, one run at a time, without retries', () => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(2 minutes)',
      Targets: [
        Match.objectLike({ Arn: gcArn, RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 120 } }),
      ],
    });
    const gc = Object.entries(template.findResources('AWS::Lambda::Function')).find(([id]) =>
      id.startsWith('ProvisionerGc'),
    );
    expect(gc?.[1].Properties.ReservedConcurrentExecutions).toBe(1);
    expect(gc?.[1].Properties.Timeout).toBe(90);
  });

  it('runs at the given gcInterval', () => {
    const { template } = synthProvisioner({ gcInterval: Duration.minutes(10) });
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(10 minutes)',
      Targets: [Match.objectLike({ Arn: gcArn })],
    });
  });

  it('terminates instances and deletes launch templates only when they carry the cluster’s tags', () => {
    const statements = statementsOf(exampleTemplate(), 'Gc');
    const deletion = statements.find((s) => s.Sid === 'AllowScopedDeletion');
    expect(deletion).toMatchObject({
      Action: ['ec2:TerminateInstances', 'ec2:DeleteLaunchTemplate'],
      Condition: {
        StringEquals: { 'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned' },
        StringLike: { 'aws:ResourceTag/karpenter.sh/nodepool': '*' },
      },
    });
    const reads = statements.find((s) => s.Sid === 'AllowRegionalReadActions');
    expect(reads).toMatchObject({
      Action: ['ec2:DescribeInstances', 'ec2:DescribeLaunchTemplates', 'ec2:DescribeLaunchTemplateVersions'],
      Resource: '*',
      Condition: { StringEquals: { 'aws:RequestedRegion': { Ref: 'AWS::Region' } } },
    });
    // Consolidation moved to the drift function: gc neither prices nor launches.
    const actions = statements.flatMap((s) => [s.Action ?? []].flat() as string[]);
    expect(actions.filter((a) => /^pricing:|^ec2:(RunInstances|CreateFleet|DescribeInstanceTypes)$/.test(a))).toEqual(
      [],
    );
  });

  it('lists instance profiles on "*", the only resource ListInstanceProfiles is authorized on', () => {
    const statements = statementsOf(exampleTemplate(), 'Gc');
    expect(statements.find((s) => s.Sid === 'AllowInstanceProfileListing')).toMatchObject({
      Action: 'iam:ListInstanceProfiles',
      Resource: '*',
    });
  });

  it('deletes only instance profiles under the cluster’s path and tagged for the cluster and region', () => {
    const statements = statementsOf(exampleTemplate(), 'Gc');
    const path = JSON.stringify(statements.find((s) => s.Sid === 'AllowScopedInstanceProfileListActions')?.Resource);
    expect(path).toContain(':instance-profile/karpenter/');
    expect(path).toContain('/demo/*');
    expect(statements.find((s) => s.Sid === 'AllowScopedInstanceProfileDeletion')).toMatchObject({
      Action: ['iam:RemoveRoleFromInstanceProfile', 'iam:DeleteInstanceProfile'],
      Condition: {
        StringEquals: {
          'aws:ResourceTag/kubernetes.io/cluster/demo': 'owned',
          'aws:ResourceTag/topology.kubernetes.io/region': { Ref: 'AWS::Region' },
        },
        StringLike: { 'aws:ResourceTag/karpenter.k8s.aws/ec2nodeclass': '*' },
      },
    });
  });

  it('launches nothing, passes no role and creates no instance profile', () => {
    const actions = actionsOf(statementsOf(exampleTemplate(), 'Gc'));
    for (const action of [
      'ec2:CreateFleet',
      'ec2:RunInstances',
      'ec2:CreateLaunchTemplate',
      'ec2:CreateTags',
      'iam:PassRole',
      'iam:CreateInstanceProfile',
      'iam:AddRoleToInstanceProfile',
    ]) {
      expect(actions.has(action)).toBe(false);
    }
  });

  it('reaches Kubernetes through the karpless RBAC group, and alarms on its errors', () => {
    const template = exampleTemplate();
    template.hasResourceProperties('AWS::EKS::AccessEntry', {
      Type: 'STANDARD',
      KubernetesGroups: [KUBE.rbacGroup],
      PrincipalArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('^ProvisionerGc'), 'Arn'] },
    });
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: Match.stringLikeRegexp('^ProvisionerGc') } }],
    });
    const body = JSON.stringify(Object.values(template.findResources('AWS::CloudWatch::Dashboard'))[0]);
    expect(body).toContain('GarbageCollected');
    expect(body).toContain('Garbage collected by resource and reason');
  });
});
