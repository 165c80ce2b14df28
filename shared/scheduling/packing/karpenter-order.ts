// Placement in Karpenter's own order (PackingOrder 'karpenter'): each pod to the in-flight claim holding
// the fewest pods that takes it, else a new claim; for a pod pinned by one topology key (a zone spread),
// the claim is chosen before the domain, as Karpenter narrows a claim's zones to the allowed ones.

import type { Pod } from '../../apis/core/v1';
import { type Requirements, requirementIn } from '../requirements';
import type { TypeCatalog } from './catalog';
import type { ClaimOpening } from './claim-opening';
import { domainOf } from './hosts';
import type { ClaimState, ExistingState, Fit, NodeState, Variant } from './state';
import type { TopologyTargets } from './topology-targets';

/** What Karpenter-order placement uses of the packer: its fit checks, its commit and claim opening. */
export interface KarpenterOrderContext {
  readonly catalog: TypeCatalog;
  readonly existing: readonly ExistingState[];
  readonly opening: ClaimOpening;
  readonly targets: TopologyTargets;
  canTakeClaim(v: Variant, node: ClaimState, podReqs: Requirements, podReqsId: number, want: number): Fit;
  canTakeExisting(
    v: Variant,
    node: ExistingState,
    podReqs: Requirements,
    targets: [string, string][],
    want: number,
  ): number;
  commit(v: Variant, node: NodeState, pods: Pod[], start: number, fit: Fit): void;
}

export class KarpenterOrder {
  /** The planned claims by pod count, fewest first. */
  private readonly emptiestFirst: ClaimState[] = [];

  constructor(private readonly ctx: KarpenterOrderContext) {}

  /**
   * Karpenter order for a pod pinned by one topology key (a zone spread, zonal affinity): the claim is
   * chosen first, emptiest first, in any domain the topology allows, as Karpenter narrows a claim's
   * zones to the allowed ones; only a new claim goes to the most wanted domain.
   */
  placeRunClaimFirst(v: Variant, pods: Pod[]): Pod[] {
    const key = v.pinKeys[0]!;
    v.topologyReason = undefined;
    for (let i = 0; i < pods.length; i++) {
      const allowed: { value: string; score: number }[] = [];
      const best = this.ctx.targets.chooseTarget(v, key, undefined, allowed);
      if ('reason' in best) {
        v.topologyReason = best.reason;
        return pods.slice(i);
      }
      allowed.sort((a, b) => a.score - b.score);
      if (!this.placeOneClaimFirst(v, pods, i, key, allowed)) {
        v.topologyReason ??= `no ${key} can take it (${allowed.map((a) => a.value).join(', ')})`;
        return pods.slice(i);
      }
    }
    return [];
  }
  private placeOneClaimFirst(
    v: Variant,
    pods: Pod[],
    i: number,
    key: string,
    allowed: { value: string; score: number }[],
  ): boolean {
    const pinned = (value: string) => {
      const targets: [string, string][] = [[key, value]];
      const targetsKey = `${key}=${value}`;
      let memo = v.targetReqs.get(targetsKey);
      if (!memo) {
        const reqs = v.reqs.add(requirementIn(key, value));
        memo = { reqs, id: this.ctx.catalog.intern(reqs) };
        v.targetReqs.set(targetsKey, memo);
      }
      let refused = v.refused?.get(targetsKey);
      if (!refused) {
        refused = new Set();
        v.refused ??= new Map();
        v.refused.set(targetsKey, refused);
      }
      return { targets, reqs: memo.reqs, id: memo.id, refused };
    };
    for (const node of this.ctx.existing) {
      const d = node.labels[key];
      if (d === undefined || !allowed.some((a) => a.value === d)) continue;
      const t = pinned(d);
      if (this.ctx.canTakeExisting(v, node, t.reqs, t.targets, 1) > 0) {
        this.ctx.commit(v, node, pods, i, { n: 1 });
        return true;
      }
    }
    for (const node of this.emptiestFirst) {
      const d = domainOf(node, key);
      for (const a of allowed) {
        if (d !== undefined && a.value !== d) continue;
        const t = pinned(a.value);
        if (t.refused.has(node)) continue;
        const fit = this.ctx.canTakeClaim(v, node, t.reqs, t.id, 1);
        if (fit.n === 0) {
          t.refused.add(node);
          continue;
        }
        this.ctx.commit(v, node, pods, i, fit);
        this.keepEmptiestFirst(node);
        return true;
      }
    }
    for (const a of allowed) {
      const t = pinned(a.value);
      const node = this.ctx.opening.openClaim(v, t.reqs, t.id);
      if (!node && v.reservedError) return false;
      if (!node) continue;
      const fit = this.ctx.canTakeClaim(v, node, t.reqs, t.id, 1);
      if (fit.n === 0) {
        this.ctx.opening.discardClaim(node);
        continue;
      }
      this.emptiestFirst.push(node);
      this.ctx.commit(v, node, pods, i, fit);
      this.keepEmptiestFirst(node);
      return true;
    }
    return false;
  }
  /**
   * Karpenter's own order: each pod to the in-flight claim holding the fewest pods that takes it, else a
   * new claim. Spreads the pods that come late in the queue (the small ones) over the claims opened for
   * the large ones, which is where Karpenter's plans beat a first-fit.
   */
  placeEmptiestFirst(
    v: Variant,
    pods: Pod[],
    start: number,
    want: number,
    targetsKey: string,
    podReqs: Requirements,
    podReqsId: number,
  ): number {
    let refused = v.refused?.get(targetsKey);
    if (!refused) {
      refused = new Set();
      v.refused ??= new Map();
      v.refused.set(targetsKey, refused);
    }
    const host = v.hostAffinity;
    let placed = 0;
    while (placed < want) {
      let into: ClaimState | undefined;
      let fit: Fit = { n: 0 };
      for (const node of this.emptiestFirst) {
        if (refused.has(node)) continue;
        fit = this.ctx.canTakeClaim(v, node, podReqs, podReqsId, 1);
        if (fit.n > 0) {
          into = node;
          break;
        }
        refused.add(node);
      }
      if (!into) {
        if (host && host.group.total === 0 && !host.self) break;
        into = this.ctx.opening.openClaim(v, podReqs, podReqsId);
        if (!into) break;
        fit = this.ctx.canTakeClaim(v, into, podReqs, podReqsId, 1);
        if (fit.n === 0) {
          this.ctx.opening.discardClaim(into);
          break;
        }
        this.emptiestFirst.push(into);
      }
      this.ctx.commit(v, into, pods, start + placed, fit);
      placed++;
      this.keepEmptiestFirst(into);
      if (host) break;
    }
    return placed;
  }
  /** Keeps the order by pod count; a claim that grows goes after those it now equals, as Karpenter's does. */
  private keepEmptiestFirst(node: ClaimState): void {
    const order = this.emptiestFirst;
    let i = order.lastIndexOf(node);
    while (i > 0 && order[i - 1]!.pods.length > node.pods.length) {
      order[i] = order[i - 1]!;
      order[i - 1] = node;
      i--;
    }
    while (i + 1 < order.length && order[i + 1]!.pods.length <= node.pods.length) {
      order[i] = order[i + 1]!;
      order[i + 1] = node;
      i++;
    }
  }
}
