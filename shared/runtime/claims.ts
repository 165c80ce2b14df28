// The NodeClaim records as the functions that act on a claim read them: every record (when the
// function has the store), and the record of one of our instances.

import type { AdoptedClaim } from '../nodeclaim/launch-record';
import type { NodeClaimRecord } from '../nodeclaim/record';
import type { NodeClaimStore } from '../providers/state';
import { MANAGED_BY, MANAGED_BY_LABEL } from './cluster-status';
import type { NodeClaimObjects } from './events';
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

/**
 * The NodeClaim object Karpenter created for a claim karpless now adopts, as the record keeps it
 * (launch-record.ts AdoptedClaim); undefined without the CRDs, without the object, or for karpless's
 * own mirror (mirrored from a record, so the record's terms hold).
 */
export async function karpenterClaim(
  objects: NodeClaimObjects | undefined,
  name: string,
): Promise<AdoptedClaim | undefined> {
  const object = objects ? await objects.get('nodeclaims', name) : undefined;
  const creationTimestamp = object?.metadata.creationTimestamp;
  if (!creationTimestamp || object.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY) return undefined;
  const spec = (object.spec ?? {}) as { expireAfter?: unknown; terminationGracePeriod?: unknown };
  return {
    creationTimestamp,
    ...(typeof spec.expireAfter === 'string' ? { expireAfter: spec.expireAfter } : {}),
    ...(typeof spec.terminationGracePeriod === 'string' ? { terminationGracePeriod: spec.terminationGracePeriod } : {}),
  };
}
