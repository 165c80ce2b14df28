// Node registration and initialization, as Karpenter's nodeclaim lifecycle does them, decided as
// merge patches. A node of ours boots with the karpenter.sh/unregistered:NoExecute taint; nothing in
// the cluster removes it, so until the watcher registers it the node takes no pod.

import type { Node } from '../apis/core/v1';
import type { Taint } from '../apis/v1/types';
import { KUBE } from '../contracts';
import type { NodePatch } from '../kube/types';
import { finalizers, nodeCondition, resourceVersion } from './objects';

export function isRegistered(node: Node): boolean {
  return node.metadata.labels?.[KUBE.registeredLabel] === 'true';
}

function hasUnregisteredTaint(node: Node): boolean {
  return (node.spec?.taints ?? []).some((t) => t.key === KUBE.unregisteredTaintKey);
}

/** True when the node still lacks one of registration's marks. */
export function needsRegistration(node: Node): boolean {
  return !isRegistered(node) || hasUnregisteredTaint(node) || !finalizers(node).includes(KUBE.terminationFinalizer);
}

/**
 * The patch that registers a node: the claim's and the launched type's labels, registered=true, our
 * termination finalizer, the unregistered taint gone. Labels already there with the same value are
 * not repeated; the finalizer list is sent with the resourceVersion so a concurrent change is a 409.
 */
export function registrationPatch(node: Node, labels: Record<string, string>): NodePatch {
  const current = node.metadata.labels ?? {};
  const wanted: Record<string, string> = { ...labels, [KUBE.registeredLabel]: 'true' };
  const changed: Record<string, string> = {};
  for (const [key, value] of Object.entries(wanted)) if (current[key] !== value) changed[key] = value;
  const patch: NodePatch = { metadata: {} };
  if (Object.keys(changed).length > 0) patch.metadata = { labels: changed };
  const existing = finalizers(node);
  if (!existing.includes(KUBE.terminationFinalizer)) {
    patch.metadata = { ...patch.metadata, finalizers: [...existing, KUBE.terminationFinalizer] };
    const version = resourceVersion(node);
    if (version) patch.metadata.resourceVersion = version;
  }
  if (hasUnregisteredTaint(node)) {
    patch.spec = { taints: (node.spec?.taints ?? []).filter((t) => t.key !== KUBE.unregisteredTaintKey) };
  }
  return patch;
}

function matchesTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect && (a.value ?? '') === (b.value ?? '');
}

/**
 * Karpenter's initialization: a registered node that is Ready, has none of its NodePool's startup
 * taints left (the agents that own them removed them) and is not yet labelled initialized.
 */
export function needsInitialization(node: Node, startupTaints: readonly Taint[]): boolean {
  if (!isRegistered(node) || node.metadata.labels?.[KUBE.initializedLabel] === 'true') return false;
  if (hasUnregisteredTaint(node)) return false;
  if (nodeCondition(node, 'Ready')?.status !== 'True') return false;
  const taints = node.spec?.taints ?? [];
  return !startupTaints.some((startup) => taints.some((t) => matchesTaint(t, startup)));
}

export const initializationPatch: NodePatch = { metadata: { labels: { [KUBE.initializedLabel]: 'true' } } };
