// Catalog entries resolved against an EC2NodeClass: Karpenter's cloudprovider.InstanceType with
// labels, capacity, overhead, allocatable and the offerings a NodeClaim could launch into.

import { ConfigurationError, type Problem } from '../apis/problems';
import { parseQuantityOrUndefined } from '../apis/quantity';
import { resolveAMIFamily } from '../apis/v1/amifamily';
import type { AMIFamily, EC2NodeClass } from '../apis/v1/types';
import {
  type CapacitySettings,
  computeAllocatable,
  computeCapacity,
  computeOverhead,
  EVICTION_MEMORY_AVAILABLE,
  EVICTION_NODEFS_AVAILABLE,
} from './capacity';
import { amiFamilyFeatures } from './family';
import { instanceTypeLabels } from './labels';
import type { CapacityType, Catalog, InstanceType, Offering } from './types';

export interface ResolveOptions {
  /** Overrides the family the NodeClass names (amiFamily, else its alias). */
  amiFamily?: AMIFamily | undefined;
  /** Zones the NodeClass can launch into; defaults to its status subnets' zones, else every zone. */
  zones?: readonly string[] | undefined;
  /** Marks offerings unavailable, e.g. from the insufficient-capacity cache. */
  unavailable?: ((capacityType: CapacityType, instanceType: string, zone: string) => boolean) | undefined;
  /** Karpenter's --reserved-enis (default 0). */
  reservedENIs?: number | undefined;
  /** Karpenter's --vm-memory-overhead-percent (default 0.075). */
  vmMemoryOverheadPercent?: number | undefined;
}

/** The capacity-shaping settings of a NodeClass, after checking its quantities. */
export function capacitySettings(
  nodeClass: EC2NodeClass,
  options: Pick<ResolveOptions, 'amiFamily' | 'reservedENIs' | 'vmMemoryOverheadPercent'> = {},
): CapacitySettings {
  checkQuantities(nodeClass);
  return {
    amiFamily: options.amiFamily ?? resolveAMIFamily(nodeClass) ?? 'Custom',
    kubelet: nodeClass.spec.kubelet,
    blockDeviceMappings: nodeClass.spec.blockDeviceMappings,
    instanceStorePolicy: nodeClass.spec.instanceStorePolicy,
    networkInterfaces: nodeClass.spec.networkInterfaces,
    reservedENIs: options.reservedENIs,
    vmMemoryOverheadPercent: options.vmMemoryOverheadPercent,
  };
}

// Configuration validation normally catches these first; checking here keeps a bad value from
// becoming NaN allocatable when a NodeClass reaches us unvalidated (e.g. from a test or a cache).
function checkQuantities(nodeClass: EC2NodeClass): void {
  const problems: Problem[] = [];
  const object = `EC2NodeClass/${nodeClass.metadata.name}`;
  const bad = (path: string, message: string) => problems.push({ severity: 'error', object, path, message });
  const kubelet = nodeClass.spec.kubelet;
  for (const field of ['kubeReserved', 'systemReserved'] as const) {
    for (const [name, value] of Object.entries(kubelet?.[field] ?? {})) {
      if (parseQuantityOrUndefined(value) === undefined)
        bad(`spec.kubelet.${field}.${name}`, `"${value}" is not a resource quantity (examples: 100m, 1Gi)`);
    }
  }
  for (const signal of [EVICTION_MEMORY_AVAILABLE, EVICTION_NODEFS_AVAILABLE]) {
    const value = kubelet?.evictionHard?.[signal];
    if (value === undefined) continue;
    const ok = value.trim().endsWith('%')
      ? Number.isFinite(Number(value.trim().slice(0, -1)))
      : parseQuantityOrUndefined(value) !== undefined;
    if (!ok)
      bad(`spec.kubelet.evictionHard.${signal}`, `"${value}" is neither a quantity (100Mi) nor a percentage (10%)`);
  }
  (nodeClass.spec.blockDeviceMappings ?? []).forEach((mapping, i) => {
    const size = mapping.ebs?.volumeSize;
    if (size !== undefined && parseQuantityOrUndefined(size) === undefined)
      bad(`spec.blockDeviceMappings[${i}].ebs.volumeSize`, `"${size}" is not a size (examples: 20Gi, 100G)`);
  });
  if (problems.length > 0) throw new ConfigurationError(problems);
}

function nodeClassZones(nodeClass: EC2NodeClass): string[] | undefined {
  const zones = (nodeClass.status?.subnets ?? []).map((s) => s.zone);
  return zones.length > 0 ? zones : undefined;
}

/**
 * Every catalog type the NodeClass can run, resolved. Types stay listed when none of their offerings
 * is available, as in Karpenter; arm64 types are left out under Windows families (no Windows AMI).
 * Offerings are limited to the zones given and marked unavailable when the catalog says so, the price
 * is unknown, or `unavailable` says so.
 */
export function resolveInstanceTypes(
  catalog: Catalog,
  nodeClass: EC2NodeClass,
  options: ResolveOptions = {},
): InstanceType[] {
  const settings = capacitySettings(nodeClass, options);
  const features = amiFamilyFeatures(settings.amiFamily);
  const zoneList = options.zones ?? nodeClassZones(nodeClass);
  const zones = zoneList ? new Set(zoneList) : undefined;
  const zoneIDs = new Map((nodeClass.status?.subnets ?? []).flatMap((s) => (s.zoneID ? [[s.zone, s.zoneID]] : [])));
  const unavailable = options.unavailable;
  const result: InstanceType[] = [];
  for (const info of catalog.instanceTypes) {
    if (features.os === 'windows' && info.arch !== 'amd64') continue;
    const capacity = computeCapacity(info, settings);
    const overhead = computeOverhead(info, settings, capacity);
    const offerings: Offering[] = [];
    for (const o of info.offerings) {
      if (zones && !zones.has(o.zone)) continue;
      const offering: Offering = {
        zone: o.zone,
        capacityType: o.capacityType,
        price: o.price,
        available:
          o.available && Number.isFinite(o.price) && !(unavailable?.(o.capacityType, info.name, o.zone) ?? false),
      };
      const zoneID = o.zoneID ?? zoneIDs.get(o.zone);
      if (zoneID !== undefined) offering.zoneID = zoneID;
      offerings.push(offering);
    }
    result.push({
      name: info.name,
      labels: instanceTypeLabels(info, catalog.region, settings.amiFamily),
      capacity,
      overhead,
      allocatable: computeAllocatable(capacity, overhead),
      offerings,
      info,
    });
  }
  return result;
}
