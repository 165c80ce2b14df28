// validateNotice: the one check every PodsUnschedulable detail passes before the provision function
// plans from it. It checks the notice's own shape and the JSON types, enums and obvious ranges of
// every field it carries (from the field table in schema.ts); deeper Kubernetes semantics belong to
// an injected pod validator.

import { checkField } from './fields';
import { MAX_NOTICE_BYTES, NOTICE_DETAIL } from './schema';
import type { NoticeDaemonSet, NoticePod, PodsUnschedulableDetail } from './types';

export type NoticeValidation = { ok: true; detail: PodsUnschedulableDetail } | { ok: false; problems: string[] };

export interface ValidateNoticeOptions {
  /**
   * Deeper checks of one pod or DaemonSet template (e.g. Kubernetes field semantics); returns
   * problems prefixed with `path`. Called only once the whole notice has the right shape.
   */
  validatePod?: (pod: NoticePod | NoticeDaemonSet['template'], path: string) => string[];
}

/** Problems reported before giving up, so a hostile notice cannot make the log line unbounded. */
export const MAX_PROBLEMS = 100;

function serializedBytes(detail: unknown): number | string {
  try {
    const text = JSON.stringify(detail);
    return text === undefined ? 'detail: missing' : Buffer.byteLength(text, 'utf8');
  } catch (error) {
    return `detail: not JSON-serializable (${error instanceof Error ? error.message : String(error)})`;
  }
}

/**
 * Checks a PodsUnschedulable detail. Never throws: every problem names its field path, e.g.
 * `detail.pods[3].tolerations[0].effect: must be one of NoSchedule, PreferNoSchedule, NoExecute`.
 */
export function validateNotice(detail: unknown, options: ValidateNoticeOptions = {}): NoticeValidation {
  const bytes = serializedBytes(detail);
  if (typeof bytes === 'string') return { ok: false, problems: [bytes] };
  if (bytes > MAX_NOTICE_BYTES) {
    return {
      ok: false,
      problems: [
        `detail: ${bytes} bytes, over the ${MAX_NOTICE_BYTES}-byte limit of one PutEvents entry; split the observation with splitNotice`,
      ],
    };
  }
  const problems: string[] = [];
  checkField(NOTICE_DETAIL, detail, 'detail', problems, MAX_PROBLEMS);
  if (problems.length === 0) {
    const notice = detail as PodsUnschedulableDetail;
    if (notice.part && notice.part.index >= notice.part.count) {
      problems.push(`detail.part.index: must be below part.count (${notice.part.count}), got ${notice.part.index}`);
    }
    const hook = options.validatePod;
    if (hook) {
      const run = (pod: NoticePod | NoticeDaemonSet['template'], path: string) => {
        try {
          problems.push(...hook(pod, path));
        } catch (error) {
          problems.push(
            `${path}: the pod validator failed (${error instanceof Error ? error.message : String(error)})`,
          );
        }
      };
      for (const [i, pod] of notice.pods.entries()) run(pod, `detail.pods[${i}]`);
      for (const [i, ds] of notice.daemonSets.entries()) run(ds.template, `detail.daemonSets[${i}].template`);
    }
  }
  if (problems.length >= MAX_PROBLEMS) {
    return { ok: false, problems: [...problems.slice(0, MAX_PROBLEMS), `(stopped after ${MAX_PROBLEMS} problems)`] };
  }
  return problems.length === 0 ? { ok: true, detail: detail as PodsUnschedulableDetail } : { ok: false, problems };
}
