// Node registration and initialization from the claim's NodeClaim record, as Karpenter's nodeclaim
// lifecycle does them (pkg/controllers/nodeclaim/lifecycle registration.go, initialization.go),
// decided as merge patches. A node of ours boots with the karpenter.sh/unregistered:NoExecute taint;
// nothing in the cluster removes it, so until the watcher registers it the node takes no pod.

import type { Node } from '../apis/core/v1';
import type { Taint } from '../apis/v1/types';
import { KUBE } from '../contracts';
import { resourceAmount } from '../instancetypes/capacity';
import type { NodePatch } from '../kube/types';
import type { NodeClaimRecord } from '../nodeclaim/record';
import { isKnownEphemeralTaint } from '../scheduling/taints';
import { finalizers, nodeCondition, resourceVersion } from './objects';

/** Karpenter's NodeDoNotSyncTaintsLabelKey: the node booted with its taints, registration leaves them. */
export const DO_NOT_SYNC_TAINTS_LABEL = 'karpenter.sh/do-not-sync-taints';

/** What registration and initialization read of the record. */
export type RegistrationRecord = {
  metadata: Pick<NodeClaimRecord['metadata'], 'labels' | 'annotations'>;
  spec: Pick<NodeClaimRecord['spec'], 'taints' | 'startupTaints' | 'resources'>;
};

export function isRegistered(node: Node): boolean {
  return node.metadata.labels?.[KUBE.registeredLabel] === 'true';
}

export function isInitialized(node: Node): boolean {
  return node.metadata.labels?.[KUBE.initializedLabel] === 'true';
}

function hasUnregisteredTaint(node: Node): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === KUBE.unregisteredTaintKey);
}

/** True when the node still lacks one of registration's marks. */
export function needsRegistration(node: Node): boolean {
  return !isRegistered(node) || hasUnregisteredTaint(node) || !finalizers(node).includes(KUBE.terminationFinalizer);
}

/** Taint.MatchTaint: the same key and effect. */
function matchesTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

/** Karpenter's Taints.Merge: the node's taints plus those of `extra` it does not have yet. */
function mergeTaints(current: readonly Taint[], extra: readonly Taint[]): Taint[] {
  const out = [...current];
  for (const taint of extra) if (!out.some((t) => matchesTaint(t, taint))) out.push(taint);
  return out;
}

function changedEntries(current: Record<string, string>, wanted: Record<string, string>): Record<string, string> {
  const changed: Record<string, string> = {};
  for (const [key, value] of Object.entries(wanted)) if (current[key] !== value) changed[key] = value;
  return changed;
}

/**
 * The patch that registers a node from its claim's record: the record's labels (narrowed
 * requirement values, template labels, the launched type's, zone's and capacity type's) and
 * annotations, `karpenter.sh/registered=true`, our termination finalizer, the record's taints and
 * startup taints merged in unless the node carries `karpenter.sh/do-not-sync-taints` (it booted with
 * them: every AMI family but Custom), and the unregistered taint gone. Values already there are not
 * repeated; lists (finalizers, taints) go with the resourceVersion so a concurrent change is a 409.
 */
export function registrationPatch(node: Node, record: RegistrationRecord): NodePatch {
  const current = node.metadata.labels ?? {};
  const labels = changedEntries(current, { ...record.metadata.labels, [KUBE.registeredLabel]: 'true' });
  const annotations = changedEntries(node.metadata.annotations ?? {}, record.metadata.annotations);
  const patch: NodePatch = { metadata: {} };
  if (Object.keys(labels).length > 0) patch.metadata = { labels };
  if (Object.keys(annotations).length > 0) patch.metadata = { ...patch.metadata, annotations };
  const existing = finalizers(node);
  let guarded = false;
  if (!existing.includes(KUBE.terminationFinalizer)) {
    patch.metadata = { ...patch.metadata, finalizers: [...existing, KUBE.terminationFinalizer] };
    guarded = true;
  }
  const taints = node.spec?.taints ?? [];
  let wanted = taints.filter((t) => t.key !== KUBE.unregisteredTaintKey);
  if (current[DO_NOT_SYNC_TAINTS_LABEL] === undefined) {
    wanted = mergeTaints(wanted, [...record.spec.taints, ...record.spec.startupTaints]);
  }
  if (wanted.length !== taints.length || wanted.some((t, i) => t !== taints[i])) {
    patch.spec = { taints: wanted };
    guarded = true;
  }
  const version = resourceVersion(node);
  if (guarded && version) patch.metadata = { ...patch.metadata, resourceVersion: version };
  return patch;
}

/** Taints that go away on their own while a node starts (Karpenter's KnownEphemeralTaints, and network-unavailable). */
function isEphemeral(taint: Taint): boolean {
  return isKnownEphemeralTaint(taint) || taint.key === 'node.kubernetes.io/network-unavailable';
}

// The kubelet registers these itself; a device plugin registers the rest (nvidia.com/gpu, …).
const KUBELET_RESOURCES = new Set(['cpu', 'memory', 'pods', 'ephemeral-storage']);

/**
 * Why the registered node is not initialized yet (Karpenter's initialization: NotReady,
 * StartupTaintsExist, KnownEphemeralTaintsExist, ResourceNotRegistered), or undefined when it is
 * ready to be. Extended resources the claim's pods requested must show in allocatable: the kubelet
 * zeroes them at start until their device plugin registers.
 */
export function initializationBlocker(node: Node, record: RegistrationRecord): string | undefined {
  if (hasUnregisteredTaint(node)) return 'the node still has the unregistered taint';
  if (nodeCondition(node, 'Ready')?.status !== 'True') return 'the node is not Ready';
  const taints = node.spec?.taints ?? [];
  const startup = taints.find((t) => record.spec.startupTaints.some((s) => matchesTaint(t, s)));
  if (startup) return `startup taint ${startup.key}:${startup.effect} is still on the node`;
  const ephemeral = taints.find(isEphemeral);
  if (ephemeral) return `ephemeral taint ${ephemeral.key}:${ephemeral.effect} is still on the node`;
  const allocatable = node.status?.allocatable ?? {};
  for (const [resource, quantity] of Object.entries(record.spec.resources.requests)) {
    if (KUBELET_RESOURCES.has(resource) || resourceAmount(resource, quantity) === 0) continue;
    const registered = allocatable[resource];
    if (registered === undefined || resourceAmount(resource, registered) === 0) {
      return `resource ${resource} is not registered in the node's allocatable yet`;
    }
  }
  return undefined;
}

/** A registered node not yet labelled initialized that has become so. */
export function needsInitialization(node: Node, record: RegistrationRecord): boolean {
  if (!isRegistered(node) || isInitialized(node)) return false;
  return initializationBlocker(node, record) === undefined;
}

export const initializationPatch: NodePatch = { metadata: { labels: { [KUBE.initializedLabel]: 'true' } } };
