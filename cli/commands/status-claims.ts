// `karpless status claims` and the NodePool limits section of `karpless status`: the NodeClaim
// records of the state table printed like `kubectl get nodeclaims`, and each NodePool's usage
// (the capacity of its claims not being deleted) against its `spec.limits`.

import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { LABEL_CAPACITY_TYPE, LABEL_INSTANCE_TYPE, LABEL_ZONE } from '../../shared/apis/v1/labels';
import type { NodePool } from '../../shared/apis/v1/types';
import { CONDITION, condition, type NodeClaimRecord } from '../../shared/nodeclaim/record';
import { formatLimitsUsage, limitsUsage, nodePoolUsage } from '../../shared/nodeclaim/usage';
import { dynamoApi } from '../../shared/providers/dynamo-port';
import { DynamoStateStore } from '../../shared/providers/dynamostate';
import { humanDuration } from './status';

/** Karpenter's root Ready condition: True when Launched, Registered and Initialized all are, False when one is. */
export function readiness(record: NodeClaimRecord): 'True' | 'False' | 'Unknown' {
  const states = [CONDITION.launched, CONDITION.registered, CONDITION.initialized].map(
    (type) => condition(record, type)?.status ?? 'Unknown',
  );
  if (states.every((s) => s === 'True')) return 'True';
  return states.includes('False') ? 'False' : 'Unknown';
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map(
      (r) =>
        `${r
          .map((cell, i) => cell.padEnd(widths[i] ?? 0))
          .join('   ')
          .trimEnd()}\n`,
    )
    .join('');
}

/** NAME TYPE CAPACITY ZONE NODE READY AGE, as `kubectl get nodeclaims` prints them. */
export function formatClaims(records: readonly NodeClaimRecord[], now: number): string {
  if (records.length === 0) return 'No NodeClaims found.\n';
  const rows = records.map((r) => {
    const created = Date.parse(r.metadata.creationTimestamp);
    return [
      r.metadata.name,
      r.metadata.labels[LABEL_INSTANCE_TYPE] ?? '',
      r.metadata.labels[LABEL_CAPACITY_TYPE] ?? '',
      r.metadata.labels[LABEL_ZONE] ?? '',
      r.status.nodeName ?? '',
      readiness(r),
      Number.isNaN(created) ? '<unknown>' : humanDuration(now - created),
    ];
  });
  return table([['NAME', 'TYPE', 'CAPACITY', 'ZONE', 'NODE', 'READY', 'AGE'], ...rows]);
}

/** NODEPOOL USED/LIMIT per NodePool with limits, from the records' capacity. */
export function formatNodePoolLimits(nodePools: readonly NodePool[], records: readonly NodeClaimRecord[]): string {
  const usage = nodePoolUsage({ records, typeCapacity: () => undefined });
  const pools = limitsUsage(nodePools, usage);
  if (pools.length === 0) return '';
  const rows = pools.map((p) => [p.nodePool, formatLimitsUsage(p), p.exhausted ? 'yes' : 'no']);
  return table([['NODEPOOL', 'USED/LIMIT', 'EXHAUSTED'], ...rows]);
}

/** Every NodeClaim record of the state table. */
export async function readClaimRecords(options: {
  table: string;
  region: string;
  endpoint?: string;
}): Promise<NodeClaimRecord[]> {
  const client = new DynamoDBClient({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
  });
  try {
    return await new DynamoStateStore(dynamoApi(client), options.table).nodeClaims();
  } finally {
    client.destroy();
  }
}
