// The provision queue's records → one batch: each record is the EventBridge event the notice rule
// delivered; its detail passes the one notice validator. A malformed notice cannot get better by
// retrying (and would hold up the cluster's FIFO group), so it is logged naming the record and
// the fields, and acknowledged.

import { validatePodSpec } from '../apis/core/validation';
import { DETAIL_TYPE } from '../contracts';
import { mergeNotices, podFromNoticeDaemonSet, podFromNoticePod, validateNotice } from '../notice';
import type { PodsUnschedulableDetail } from '../notice/types';
import type { ProvisionBatch } from './provision';

export interface QueueRecord {
  messageId: string;
  body: string;
}

export interface RejectedRecord {
  messageId: string;
  problems: string[];
}

export interface ParsedBatch {
  batch?: ProvisionBatch;
  rejected: RejectedRecord[];
}

function detailOf(body: string): { detail?: unknown; problem?: string } {
  let event: unknown;
  try {
    event = JSON.parse(body);
  } catch (error) {
    return { problem: `body is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof event !== 'object' || event === null) return { problem: 'body: must be an EventBridge event object' };
  const e = event as Record<string, unknown>;
  if (e['detail-type'] !== DETAIL_TYPE.podsUnschedulable) {
    return {
      problem: `detail-type: must be "${DETAIL_TYPE.podsUnschedulable}", got ${JSON.stringify(e['detail-type'])}`,
    };
  }
  return { detail: e.detail };
}

/** The pods a notice names, for the one line that says they are not planned (at most 20 named). */
function namedPods(detail: PodsUnschedulableDetail): string {
  const names = detail.pods.map((p) => `${p.namespace}/${p.name}`);
  const shown = names.slice(0, 20).join(', ');
  return names.length > 20 ? `pods ${shown} and ${names.length - 20} more` : `pods ${shown}`;
}

export interface ParsedNotices {
  /** The valid notices of this function's cluster, as they arrived (parts of split ones included). */
  details: PodsUnschedulableDetail[];
  rejected: RejectedRecord[];
}

export function parseNoticeRecords(records: readonly QueueRecord[], cluster: string): ParsedNotices {
  const rejected: RejectedRecord[] = [];
  const details: PodsUnschedulableDetail[] = [];
  for (const record of records) {
    const { detail, problem } = detailOf(record.body);
    if (problem) {
      rejected.push({ messageId: record.messageId, problems: [problem] });
      continue;
    }
    // Each pod's fields are checked as the API server would, so a wrong notice never becomes a wrong launch.
    const validation = validateNotice(detail, { validatePod: validatePodSpec });
    if (!validation.ok) {
      rejected.push({ messageId: record.messageId, problems: validation.problems.map((p) => `detail.${p}`) });
      continue;
    }
    if (validation.detail.cluster !== cluster) {
      rejected.push({
        messageId: record.messageId,
        problems: [
          `detail.cluster: "${validation.detail.cluster}" is not this function's cluster "${cluster}": ` +
            `nothing planned for ${namedPods(validation.detail)}`,
        ],
      });
      continue;
    }
    details.push(validation.detail);
  }
  return { details, rejected };
}

/** The notices merged into one decision's batch; undefined when there are none. */
export function provisionBatchOf(details: readonly PodsUnschedulableDetail[]): ProvisionBatch | undefined {
  if (details.length === 0) return undefined;
  const merged = mergeNotices(details);
  return {
    pods: merged.pods.map(podFromNoticePod),
    daemonSets: merged.daemonSets.map(podFromNoticeDaemonSet),
    observedAt: merged.observedAt,
  };
}

export function parseProvisionRecords(records: readonly QueueRecord[], cluster: string): ParsedBatch {
  const { details, rejected } = parseNoticeRecords(records, cluster);
  const batch = provisionBatchOf(details);
  return batch ? { batch, rejected } : { rejected };
}
