// The drift function's EC2NodeClass status writer against the fake API server: nothing without the
// CRD, the resolution written onto the object (a field the resolution lost is removed, not left
// stale), transition times kept while a condition holds and moved when it flips, and a failing API
// server logged, never thrown into the drift run.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { karpenterCrds } from '../../shared/apis/v1/crds';
import type { Condition, EC2NodeClass, EC2NodeClassStatus } from '../../shared/apis/v1/types';
import { HttpKubeClient } from '../../shared/kube/client';
import type { KarpenterObjectsApi } from '../../shared/kube/karpenter';
import { NodeClassStatusWriter } from '../../shared/runtime/nodeclass-status';
import { fakeClock } from '../providers/fakes';
import { FakeApiServer } from '../support/kube/fake-apiserver';

const T0 = Date.parse('2026-12-03T12:00:00Z');

const nodeClass: EC2NodeClass = {
  apiVersion: 'karpenter.k8s.aws/v1',
  kind: 'EC2NodeClass',
  metadata: { name: 'default', generation: 4 },
  spec: {
    subnetSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    securityGroupSelectorTerms: [{ tags: { 'karpenter.sh/discovery': 'c1' } }],
    amiSelectorTerms: [{ alias: 'al2023@latest' }],
    role: 'KarpenterNodeRole-c1',
  },
};

/** A resolution's status: every condition stamped with the resolution's own time, as resolveNodeClass does. */
function resolved(subnetsReady: boolean, at: number): EC2NodeClassStatus {
  const time = new Date(at).toISOString();
  const condition = (type: string, ok: boolean): Condition => ({
    type,
    status: ok ? 'True' : 'False',
    reason: ok ? type : `${type}NotFound`,
    lastTransitionTime: time,
  });
  return {
    ...(subnetsReady ? { subnets: [{ id: 'subnet-1', zone: 'us-west-2a' }] } : {}),
    securityGroups: [{ id: 'sg-1', name: 'nodes' }],
    instanceProfile: 'c1_123',
    conditions: [condition('SubnetsReady', subnetsReady), condition('Ready', subnetsReady)],
  };
}

describe('NodeClassStatusWriter', () => {
  let server: FakeApiServer;
  let client: HttpKubeClient;
  let clock: ReturnType<typeof fakeClock>;
  let warnings: string[];
  let writer: NodeClassStatusWriter;
  const log = { debug() {}, info() {}, warn: (m: string) => warnings.push(m), error() {} };
  const status = () => server.getObject('ec2nodeclasses', 'default')?.status as EC2NodeClassStatus;
  const condition = (type: string) => status().conditions?.find((c) => c.type === type);

  beforeEach(async () => {
    server = await FakeApiServer.start();
    client = new HttpKubeClient({ endpoint: server.url, token: async () => 't' });
    clock = fakeClock(T0);
    warnings = [];
    writer = new NodeClassStatusWriter({ karpenter: client.karpenterObjects(), log, clock });
  });
  afterEach(async () => {
    client.close();
    await server.stop();
  });

  it('writes nothing where the CRD is not installed', async () => {
    const report = await writer.write(new Map([['default', resolved(true, T0)]]));
    expect(report).toEqual({ crd: false, updated: [], unknown: [] });
    expect(server.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('writes the resolution, keeps transition times while conditions hold and moves them when one flips', async () => {
    server.installCustomResources(karpenterCrds());
    server.putObject('ec2nodeclasses', nodeClass);
    expect((await writer.write(new Map([['default', resolved(true, T0)]]))).updated).toEqual(['default']);
    expect(status().subnets).toEqual([{ id: 'subnet-1', zone: 'us-west-2a' }]);
    expect(condition('Ready')).toMatchObject({ status: 'True', observedGeneration: 4 });

    // A minute later the same answer, stamped anew by the resolution: nothing to write.
    clock.advance(60_000);
    expect((await writer.write(new Map([['default', resolved(true, clock())]]))).updated).toEqual([]);
    expect(condition('Ready')?.lastTransitionTime).toBe(new Date(T0).toISOString());

    // The subnets are gone: Ready flips now, and the stale subnet list goes with them.
    clock.advance(60_000);
    await writer.write(new Map([['default', resolved(false, clock())]]));
    expect(condition('Ready')).toMatchObject({ status: 'False', lastTransitionTime: new Date(clock()).toISOString() });
    expect(status().subnets).toBeUndefined();
    expect(status().securityGroups).toEqual([{ id: 'sg-1', name: 'nodes' }]);
  });

  it('logs and carries on when the API server fails', async () => {
    const failing: Pick<KarpenterObjectsApi, 'servedResources' | 'list' | 'patch'> = {
      servedResources: async () => new Set(['ec2nodeclasses']),
      list: async () => {
        throw new Error('connect ECONNREFUSED');
      },
      patch: async () => undefined,
    };
    const report = await new NodeClassStatusWriter({ karpenter: failing, log, clock }).write(new Map());
    expect(report.updated).toEqual([]);
    expect(warnings).toEqual(['writing EC2NodeClass status failed, will retry next run']);
  });
});
