// The provider-level integration tests drive one provider at a time with the clients of the function
// that uses it in production, under that function's synthesized role (../iam: moto's IAM enforcement
// and the policy simulation of every call), so a statement missing from infra/iam.ts fails them.
// Setup and checks (networks, images, tables, queues, what a call left behind) keep the account's
// root clients. Every file synthesizes this one stack, so the global setup's synth server does it
// once for all of them.

import { testNodeClass, testNodePool } from '../../support/nodepools';
import type { MotoAccount } from '../helpers';
import { type FunctionClients, type FunctionName, functionClients, functionIdentity } from '../iam';
import type { SynthRequest } from '../iam/synth-server';

export const PROVIDER_CLUSTER = 'c1';
export const NODE_ROLE = `KarpenterNodeRole-${PROVIDER_CLUSTER}`;
/** The role of a second node class: a role change creates a second instance profile. */
export const OTHER_NODE_ROLE = 'OtherRole';
/** Named by a node class of the stack and never created in the account: a role deleted after deploy. */
export const MISSING_NODE_ROLE = 'Nope';

const STACK: SynthRequest = {
  clusterName: PROVIDER_CLUSTER,
  configuration: {
    nodePools: [testNodePool()],
    nodeClasses: [
      testNodeClass({ discovery: PROVIDER_CLUSTER, role: NODE_ROLE }),
      testNodeClass({ name: 'other', discovery: PROVIDER_CLUSTER, role: OTHER_NODE_ROLE }),
      testNodeClass({ name: 'gone', discovery: PROVIDER_CLUSTER, role: MISSING_NODE_ROLE }),
    ],
  },
};

/**
 * The clients of function `fn` in the account, signed with its role's credentials. `names` are the
 * stack's state table and notice bus as the test created them (see functionIdentity).
 */
export async function providerClients(
  account: MotoAccount,
  fn: FunctionName,
  options: { tableName?: string; busName?: string; maxAttempts?: number } = {},
): Promise<FunctionClients> {
  const { maxAttempts, ...names } = options;
  const identity = await functionIdentity(account, fn, STACK, names);
  return functionClients(account, identity, maxAttempts ? { maxAttempts } : {});
}
