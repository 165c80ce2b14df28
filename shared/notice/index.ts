// The PodsUnschedulable notice: validation, conversion to and from Kubernetes objects, splitting
// across PutEvents entries and merging a batch. Pure.

export {
  controllerKind,
  noticeDaemonSetFromDaemonSet,
  noticePodFromPod,
  podFromNoticeDaemonSet,
  podFromNoticePod,
} from './convert';
export { toJsonSchema } from './fields';
export {
  MAX_NOTICE_BYTES,
  MAX_NOTICE_DAEMONSETS,
  MAX_NOTICE_PODS,
  NOTICE_DETAIL,
  noticeJsonSchema,
  noticeJsonSchemaText,
} from './schema';
export { DEFAULT_MAX_ENTRY_BYTES, ENVELOPE_HEADROOM_BYTES, mergeNotices, NoticeSplitError, splitNotice } from './split';
export type { NoticeDaemonSet, NoticePod, PodsUnschedulableDetail } from './types';
export { MAX_PROBLEMS, type NoticeValidation, type ValidateNoticeOptions, validateNotice } from './validate';
