// The placement group an EC2NodeClass names (AWS pkg/providers/placementgroup): one
// DescribePlacementGroups by id or name, cached a minute; when EC2 cannot be asked, the last group
// seen (kept a day) still serves launches, as Karpenter's availability cache does.

import type { PlacementGroup as EC2PlacementGroup } from '@aws-sdk/client-ec2';
import type { PlacementGroupSelector } from '../apis/v1/types';
import { errorCode, isNotFound } from './aws-errors';
import { type Clock, systemClock, TTLCache } from './clock';
import type { EC2Api } from './ports';

export type PlacementGroupPort = Pick<EC2Api, 'describePlacementGroups'>;

export const PLACEMENT_GROUP_TTL_MS = 60_000;
/** Karpenter's placement-group availability TTL: how long a known group outlives failed lookups. */
export const PLACEMENT_GROUP_LAST_KNOWN_TTL_MS = 24 * 60 * 60_000;

/** EC2 codes for a group name or id that does not exist. */
const NOT_FOUND_CODES = new Set(['InvalidPlacementGroup.Unknown', 'InvalidPlacementGroupId.NotFound']);

/** One placement group as EC2NodeClass status.placementGroups lists it. */
export interface PlacementGroup {
  id: string;
  name: string;
  strategy: 'cluster' | 'partition' | 'spread';
  state: string;
  partitionCount?: number;
  /** Spread groups: instances spread across racks or hosts (Outposts). */
  spreadLevel?: 'rack' | 'host';
}

export function placementGroupFromEC2(g: EC2PlacementGroup): PlacementGroup | undefined {
  if (!g.GroupId || !g.GroupName || !g.Strategy) return undefined;
  if (g.Strategy !== 'cluster' && g.Strategy !== 'partition' && g.Strategy !== 'spread') return undefined;
  return {
    id: g.GroupId,
    name: g.GroupName,
    strategy: g.Strategy,
    state: g.State ?? 'available',
    ...(g.PartitionCount !== undefined ? { partitionCount: g.PartitionCount } : {}),
    ...(g.SpreadLevel === 'rack' || g.SpreadLevel === 'host' ? { spreadLevel: g.SpreadLevel } : {}),
  };
}

export interface PlacementGroupProviderOptions {
  clock?: Clock;
  ttlMs?: number;
}

export class PlacementGroupProvider {
  private readonly fresh: TTLCache<PlacementGroup | null>;
  private readonly lastKnown: TTLCache<PlacementGroup>;

  constructor(
    private readonly ec2: PlacementGroupPort,
    options: PlacementGroupProviderOptions = {},
  ) {
    const clock = options.clock ?? systemClock;
    this.fresh = new TTLCache(clock, options.ttlMs ?? PLACEMENT_GROUP_TTL_MS);
    this.lastKnown = new TTLCache(clock, PLACEMENT_GROUP_LAST_KNOWN_TTL_MS);
  }

  /** The group the selector names, or undefined when EC2 has no such group. */
  async get(selector: PlacementGroupSelector): Promise<PlacementGroup | undefined> {
    const key = selector.id ? `id:${selector.id}` : `name:${selector.name ?? ''}`;
    const cached = this.fresh.get(key);
    if (cached !== undefined) return cached ?? undefined;
    let group: PlacementGroup | undefined;
    try {
      const out = await this.ec2.describePlacementGroups(
        selector.id ? { GroupIds: [selector.id] } : { GroupNames: [selector.name ?? ''] },
      );
      group = (out.PlacementGroups ?? []).map(placementGroupFromEC2).find((g) => g !== undefined);
    } catch (error) {
      const code = errorCode(error);
      if (!(isNotFound(error) || (code !== undefined && NOT_FOUND_CODES.has(code)))) {
        const known = this.lastKnown.get(key);
        if (known) return known;
        throw error;
      }
    }
    this.fresh.set(key, group ?? null);
    if (group) this.lastKnown.set(key, group);
    else this.lastKnown.delete(key);
    return group;
  }
}
