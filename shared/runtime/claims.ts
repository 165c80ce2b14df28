// The NodeClaim records as the functions that act on a claim read them: every record (when the
// function has the store), and the record of one of our instances.

import type { NodeClaimRecord } from '../nodeclaim/record';
import type { NodeClaimStore } from '../providers/state';
import { instanceIdFromProviderID } from './instances';

export interface ClaimRecordsDeps {
  /** The NodeClaim records: what each claim was launched with. Absent, every node is treated as having none. */
  nodeClaims?: Pick<NodeClaimStore, 'nodeClaims'>;
}

export function readClaims(deps: ClaimRecordsDeps): Promise<NodeClaimRecord[]> {
  return deps.nodeClaims ? deps.nodeClaims.nodeClaims() : Promise.resolve([]);
}

/** The record of an instance: by the providerID it launched as, else by the claim name it is tagged with. */
export function recordOf(
  claims: readonly NodeClaimRecord[],
  instance: { instanceId: string; nodeClaimName?: string },
): NodeClaimRecord | undefined {
  return (
    claims.find((c) => instanceIdFromProviderID(c.status.providerID) === instance.instanceId) ??
    claims.find((c) => c.metadata.name === instance.nodeClaimName)
  );
}
