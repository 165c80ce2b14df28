// Volume topology (Karpenter's scheduling/volumetopology.go): a pod's PersistentVolumeClaims become
// node requirements. A claim bound to a volume takes the volume's node affinity (its first term, as
// upstream: terms are ORed and one is enough to plan); an unbound claim whose StorageClass waits for
// the first consumer takes the class's allowedTopologies (first term). The requirements go to the
// scheduler beside the pod (SchedulingInput.volumeRequirements): ANDed into each of its required
// node-affinity terms, so relaxing preferences never drops them, and kept out of the domains its
// topology spreads count, as Karpenter keeps VolumeRequirements apart. A claim that
// cannot be satisfied by any new node (missing, or unbound and bound Immediately by the volume
// controller, which the scheduler must wait for) makes the pod unschedulable with that reason. Pure.

import type {
  NodeSelectorRequirement,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  StorageClass,
  Volume,
} from '../apis/core/v1';
import { LABEL_HOSTNAME, LABEL_ZONE } from '../apis/v1/labels';

/** The cluster's claims ("namespace/name"), volumes and classes (by name). */
export interface VolumeObjects {
  claims: ReadonlyMap<string, PersistentVolumeClaim>;
  volumes: ReadonlyMap<string, PersistentVolume>;
  classes: ReadonlyMap<string, StorageClass>;
}

export type VolumeTopology = { requirements: NodeSelectorRequirement[] } | { unschedulable: string };

/**
 * Zone keys CSI drivers put on volumes, read as the well-known zone (the AWS provider's normalized
 * labels): an EBS volume's affinity names `topology.ebs.csi.aws.com/zone`, which no node template sets.
 */
const NORMALIZED_KEYS: Record<string, string> = {
  'topology.ebs.csi.aws.com/zone': LABEL_ZONE,
  'failure-domain.beta.kubernetes.io/zone': LABEL_ZONE,
};

/** The claim a volume uses: its own, or the one the ephemeral controller makes (`<pod>-<volume>`). */
function claimName(pod: Pod, volume: Volume): string | undefined {
  if (volume.persistentVolumeClaim) return volume.persistentVolumeClaim.claimName;
  if (volume.ephemeral) return `${pod.metadata.name}-${volume.name}`;
  return undefined;
}

/** Whether any of the pod's volumes names a claim (only then are claims, volumes and classes read). */
export function usesClaims(pod: Pod): boolean {
  return (pod.spec.volumes ?? []).some((v) => claimName(pod, v) !== undefined);
}

function normalized(requirement: NodeSelectorRequirement): NodeSelectorRequirement {
  const key = NORMALIZED_KEYS[requirement.key];
  return key ? { ...requirement, key } : requirement;
}

function boundVolumeRequirements(claimKey: string, name: string, objects: VolumeObjects): VolumeTopology {
  const volume = objects.volumes.get(name);
  if (!volume) {
    return {
      unschedulable: `persistentvolumeclaim ${claimKey} is bound to persistentvolume ${name}, which does not exist`,
    };
  }
  const expressions = volume.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions ?? [];
  // A local or hostPath volume names the hostname it lives on; a new node never has that name, and
  // upstream plans without it rather than never.
  const pinned = volume.spec?.local !== undefined || volume.spec?.hostPath !== undefined;
  return {
    requirements: expressions.filter((r) => !(pinned && r.key === LABEL_HOSTNAME)).map(normalized),
  };
}

function unboundClaimRequirements(
  claimKey: string,
  claim: PersistentVolumeClaim,
  objects: VolumeObjects,
): VolumeTopology {
  const className = claim.spec?.storageClassName ?? '';
  const immediate = `persistentvolumeclaim ${claimKey} is not bound and binds Immediately`;
  if (className === '') {
    return { unschedulable: `${immediate} (no storageClassName): the volume controller must bind it first` };
  }
  const storageClass = objects.classes.get(className);
  if (!storageClass) {
    return { unschedulable: `persistentvolumeclaim ${claimKey} names storageclass ${className}, which does not exist` };
  }
  if (storageClass.volumeBindingMode !== 'WaitForFirstConsumer') {
    return { unschedulable: `${immediate} (storageclass ${className}): the volume controller must bind it first` };
  }
  const term = storageClass.allowedTopologies?.[0]?.matchLabelExpressions ?? [];
  return { requirements: term.map((e) => normalized({ key: e.key, operator: 'In', values: [...e.values] })) };
}

/** The node requirements the pod's volumes add, or why no new node can serve them. */
export function volumeTopology(pod: Pod, objects: VolumeObjects): VolumeTopology {
  const namespace = pod.metadata.namespace ?? 'default';
  const requirements: NodeSelectorRequirement[] = [];
  for (const volume of pod.spec.volumes ?? []) {
    const name = claimName(pod, volume);
    if (name === undefined) continue;
    const claimKey = `${namespace}/${name}`;
    const claim = objects.claims.get(claimKey);
    if (!claim) return { unschedulable: `persistentvolumeclaim ${claimKey} (volume ${volume.name}) does not exist` };
    const found = claim.spec?.volumeName
      ? boundVolumeRequirements(claimKey, claim.spec.volumeName, objects)
      : unboundClaimRequirements(claimKey, claim, objects);
    if ('unschedulable' in found) return found;
    requirements.push(...found.requirements);
  }
  return { requirements };
}
