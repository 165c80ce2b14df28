// `karpless plan --requests DIR`: for each planned NodeClaim, the CreateLaunchTemplate and
// CreateFleet requests its launch would send, written as JSON, offline. They come from
// shared/launch/request planLaunch, the function the launcher sends from, so a dry run shows
// exactly what AWS would be asked for. What only AWS knows is filled with flags or placeholders:
// subnets (--subnet ZONE=subnet-id), security groups (--security-group), AMIs (an alias becomes the
// `resolve:ssm:` form launch templates accept), the instance profile and the cluster.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { aliasParameters } from '../../shared/amifamily/alias';
import type { EC2NodeClass, NodePool } from '../../shared/apis/v1/types';
import type { ReservedCapacity } from '../../shared/instancetypes/reserved';
import type { Catalog } from '../../shared/instancetypes/types';
import { launchClaimFromPlan } from '../../shared/launch/claim';
import { kubeDNSIP } from '../../shared/launch/cluster';
import type { ClusterInfo, ResolvedAMI } from '../../shared/launch/launchtemplate';
import { type PlannedLaunch, planLaunch, type ResolvedNodeClass } from '../../shared/launch/request';
import { instanceProfileName } from '../../shared/providers/instanceprofile';
import type { PlannedNodeClaim } from '../../shared/scheduling';
import { UsageError } from '../command';

/** Enough free addresses that a placeholder subnet never looks full. */
const PLACEHOLDER_FREE_IPS = 4096;

export interface OfflineCluster {
  name: string;
  region: string;
  version: string;
  endpoint: string;
  caBundle: string;
  serviceCIDR: string;
}

export const DEFAULT_OFFLINE_CLUSTER = {
  name: 'cluster',
  version: '1.33',
  endpoint: 'https://EXAMPLE.gr7.us-east-1.eks.amazonaws.com',
  caBundle: 'Q0EgQlVORExF',
  serviceCIDR: '10.100.0.0/16',
} as const;

/** zone → subnet ID from `--subnet ZONE=subnet-id` flags. */
export function parseSubnetFlags(values: readonly string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const value of values) {
    const [zone, id, ...rest] = value.split('=');
    if (!zone || !id || rest.length > 0) {
      throw new UsageError(`--subnet "${value}": expected ZONE=subnet-id, e.g. --subnet us-east-1a=subnet-0abc`);
    }
    out[zone] = [...(out[zone] ?? []), id];
  }
  return out;
}

/** `--capacity-reservation ID=ZONE:TYPE[:COUNT]`: a reservation the dry run may plan onto (COUNT default 1). */
export function parseCapacityReservationFlags(values: readonly string[]): ReservedCapacity[] {
  const seen = new Set<string>();
  return values.map((value) => {
    const match = /^(cr-[0-9a-z]+)=([a-z0-9-]+):([a-z0-9-]+\.[a-z0-9-]+)(?::(\d+))?$/.exec(value);
    if (!match) {
      throw new UsageError(
        `--capacity-reservation "${value}": expected ID=ZONE:TYPE[:COUNT], e.g. --capacity-reservation cr-0abc=us-east-1a:p5.48xlarge:2`,
      );
    }
    const [, id = '', zone = '', type = '', count] = match;
    if (seen.has(id)) throw new UsageError(`--capacity-reservation ${id} is given twice`);
    seen.add(id);
    const available = count === undefined ? 1 : Number(count);
    if (available < 1) throw new UsageError(`--capacity-reservation "${value}": COUNT must be at least 1`);
    return {
      id,
      instanceType: type,
      availabilityZone: zone,
      reservationType: 'default',
      interruptible: false,
      state: 'active',
      availableInstanceCount: available,
    };
  });
}

/**
 * The flag reservations a node class would select. Offline only an id term can be checked: a term
 * by id selects that reservation, a term by tags or match criteria is assumed to select every one,
 * and a node class without terms selects none, as in Karpenter.
 */
export function reservationsSelectedBy(
  nodeClass: EC2NodeClass,
  reservations: readonly ReservedCapacity[],
): ReservedCapacity[] {
  const terms = nodeClass.spec.capacityReservationSelectorTerms ?? [];
  if (terms.some((t) => !t.id)) return [...reservations];
  const ids = new Set(terms.map((t) => t.id));
  return reservations.filter((r) => ids.has(r.id));
}

/** The AMIs a node class would resolve to, as far as manifests tell without AWS. */
export function offlineAMIs(nodeClass: EC2NodeClass, k8sVersion: string): ResolvedAMI[] {
  const terms = nodeClass.spec.amiSelectorTerms;
  const alias = terms.find((t) => t.alias)?.alias;
  if (alias) {
    try {
      return aliasParameters(alias, k8sVersion).map((p) => ({
        id: `resolve:ssm:${p.name}`,
        requirements: p.requirements,
      }));
    } catch {
      // An alias Karpenter refuses for this version: validation reports it; keep the dry run going.
    }
  }
  const id = terms.find((t) => t.id)?.id;
  return [{ id: id ?? 'ami-PLACEHOLDER', requirements: [] }];
}

/** The node class as the launch would see it, from flags and placeholders. */
export function offlineResolvedNodeClass(args: {
  nodeClass: EC2NodeClass;
  catalog: Catalog;
  cluster: OfflineCluster;
  subnets: Record<string, string[]>;
  securityGroups: readonly string[];
}): ResolvedNodeClass {
  const zones =
    Object.keys(args.subnets).length > 0
      ? args.subnets
      : Object.fromEntries(
          [...new Set(args.catalog.instanceTypes.flatMap((t) => t.offerings.map((o) => o.zone)))]
            .sort()
            .map((zone) => [zone, [`subnet-PLACEHOLDER-${zone}`]]),
        );
  const cluster: ClusterInfo = {
    name: args.cluster.name,
    endpoint: args.cluster.endpoint,
    caBundle: args.cluster.caBundle,
    serviceCIDR: args.cluster.serviceCIDR,
    version: args.cluster.version,
    dnsIP: kubeDNSIP(args.cluster.serviceCIDR),
    ipv6: args.cluster.serviceCIDR.includes(':'),
  };
  return {
    subnets: Object.entries(zones).flatMap(([zone, ids]) =>
      ids.map((id) => ({ id, zone, availableIps: PLACEHOLDER_FREE_IPS })),
    ),
    securityGroups: (args.securityGroups.length > 0 ? args.securityGroups : ['sg-PLACEHOLDER']).map((id) => ({ id })),
    amis: offlineAMIs(args.nodeClass, args.cluster.version),
    instanceProfile:
      args.nodeClass.spec.instanceProfile ??
      instanceProfileName(
        args.cluster.name,
        args.cluster.region,
        args.nodeClass.metadata.name,
        args.nodeClass.spec.role,
      ),
    cluster,
  };
}

export interface PlannedRequests {
  nodeClaimName: string;
  plan: PlannedLaunch;
}

/** A planned claim whose launch would send no request: nothing it may launch has a subnet. */
export interface UnlaunchableClaim {
  nodeClaimName: string;
  /** The zone the plan put it in. */
  zone: string;
  /** That zone has none of the given subnets (else the claim's offerings are all unavailable). */
  noSubnet: boolean;
}

export interface PlannedRequestSet {
  planned: PlannedRequests[];
  unlaunchable: UnlaunchableClaim[];
}

/**
 * The requests of every planned claim (names `<nodepool>-plan-<n>`, n from 1 in plan order). A claim
 * with no override left (its zone has no subnet) is not launched by the launcher either, so it is
 * reported instead of written as a CreateFleet request with no LaunchTemplateConfigs.
 */
export function planRequests(args: {
  nodeClaims: readonly PlannedNodeClaim[];
  nodePools: readonly NodePool[];
  nodeClasses: readonly EC2NodeClass[];
  catalog: Catalog;
  cluster: OfflineCluster;
  subnets: Record<string, string[]>;
  securityGroups: readonly string[];
  /** --capacity-reservation: each claim launched into one takes an instance of it, as at launch. */
  reservations?: readonly ReservedCapacity[];
}): PlannedRequestSet {
  const counts = new Map<string, number>();
  const left = new Map((args.reservations ?? []).map((r) => [r.id, r.availableInstanceCount]));
  const out: PlannedRequestSet = { planned: [], unlaunchable: [] };
  for (const claim of args.nodeClaims) {
    const nodePool = args.nodePools.find((p) => p.metadata.name === claim.nodePool);
    const nodeClass = args.nodeClasses.find((c) => c.metadata.name === nodePool?.spec.template.spec.nodeClassRef.name);
    if (!nodePool || !nodeClass)
      throw new Error(`NodePool/${claim.nodePool}: its EC2NodeClass is not in the manifests`);
    const n = (counts.get(claim.nodePool) ?? 0) + 1;
    counts.set(claim.nodePool, n);
    const nodeClaimName = `${claim.nodePool}-plan-${n}`;
    const resolved = offlineResolvedNodeClass({ ...args, nodeClass });
    const plan = planLaunch(launchClaimFromPlan({ nodeClaimName, claim, nodePool, nodeClass }), resolved, {
      clusterName: args.cluster.name,
      region: args.cluster.region,
      // A reservation the plan put more claims on than it holds: the rest fall back, as the launcher's count does.
      availability: { reservation: (id) => (left.get(id) ?? 1) <= 0 },
    });
    if (plan.overrides.length === 0) {
      const zone = claim.offering.zone;
      out.unlaunchable.push({ nodeClaimName, zone, noSubnet: !resolved.subnets.some((s) => s.zone === zone) });
      continue;
    }
    const reservationId = plan.capacityType === 'reserved' ? plan.overrides[0]?.reservationId : undefined;
    if (reservationId !== undefined) left.set(reservationId, (left.get(reservationId) ?? 1) - 1);
    out.planned.push({ nodeClaimName, plan });
  }
  return out;
}

/** The warning for claims left out of --requests: which zones lack a --subnet, which claims are missing. */
export function unlaunchableWarning(unlaunchable: readonly UnlaunchableClaim[]): string | undefined {
  if (unlaunchable.length === 0) return undefined;
  const claims = unlaunchable.map((c) => `${c.nodeClaimName} (${c.zone})`).join(', ');
  const zones = [...new Set(unlaunchable.filter((c) => c.noSubnet).map((c) => c.zone))].sort();
  const why =
    zones.length > 0
      ? `--subnet gives no subnet in ${zones.join(', ')}, where the plan puts them; add --subnet ZONE=subnet-id for ${zones.length === 1 ? 'that zone' : 'those zones'}`
      : 'none of their offerings can launch';
  return `no requests written for ${claims}: ${why}`;
}

/** DIR/<claim>/create-launch-template-<n>.json … and DIR/<claim>/create-fleet.json; the paths written. */
export function writePlannedRequests(dir: string, planned: readonly PlannedRequests[]): string[] {
  const written: string[] = [];
  for (const { nodeClaimName, plan } of planned) {
    const claimDir = join(dir, nodeClaimName);
    mkdirSync(claimDir, { recursive: true });
    const write = (file: string, body: unknown) => {
      const path = join(claimDir, file);
      writeFileSync(path, `${JSON.stringify(body, null, 2)}\n`);
      written.push(path);
    };
    plan.templates.forEach((t, i) => {
      write(`create-launch-template-${i + 1}.json`, t.input);
    });
    write('create-fleet.json', plan.fleet);
  }
  return written;
}
