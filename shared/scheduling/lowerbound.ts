// A lower bound on the price of any plan, to judge how close the packer comes to the cheapest fleet.
// Relaxing integrality turns packing into a tiny linear program: buy fractional instances so that the
// bought allocatable covers the total demand of every resource,
//   min Σ price_t x_t   s.t.   Σ_t alloc_t,r x_t ≥ demand_r  (each resource r),   x ≥ 0.
// Every real plan is a feasible point of it, so its optimum never exceeds a real plan's price. With a
// handful of resources it has as many constraints, so it is solved exactly through its dual (one
// variable per resource, one constraint per instance type) by a condensed-tableau simplex; the dual
// point found is scaled to feasibility, so rounding can loosen the bound but never invalidate it.
// Pods restricted to some types (classLowerBound) and whole instances (singleInstanceBound) tighten
// it. Pure.

import type { InstanceType, Resources } from '../instancetypes/types';

/** A resource every instance has exactly one of: with minNodes it bounds how many instances a plan needs. */
const NODES = '<nodes>';
const EPSILON = 1e-12;
// Pivoting on smaller entries would amplify rounding more than it moves the solution.
const PIVOT_TOLERANCE = 1e-9;
// Reduced costs below this are float noise of earlier pivots, not an improving direction: entering on
// one finds no blocking row and would pass for an unbounded dual (an infeasible cover).
const REDUCED_COST_TOLERANCE = 1e-9;

export interface LowerBoundOptions {
  /** Per-node overhead (DaemonSets) taken from every instance type's allocatable. */
  overhead?: Resources;
  /**
   * Instances any plan needs whatever their size, e.g. the number of pods with hostname anti-affinity
   * to each other. 0 by default.
   */
  minNodes?: number;
}

export interface LowerBound {
  /** USD/hour; Infinity when no mix of the instance types covers the demand (a resource nobody offers). */
  price: number;
  /** The fractional optimum: how many of each instance type, cheapest first; empty when price is 0 or Infinity. */
  mix: { instanceType: string; count: number }[];
}

/** Total demand of a set of pods' requests, with `pods` counting them (every pod takes one pod slot). */
export function totalDemand(requests: readonly Resources[]): Resources {
  const demand: Resources = { pods: 0 };
  for (const request of requests) {
    for (const [name, amount] of Object.entries(request)) {
      if (name !== 'pods') demand[name] = (demand[name] ?? 0) + amount;
    }
    demand.pods = (demand.pods ?? 0) + 1;
  }
  return demand;
}

/** The cheapest available offering's price, or undefined when nothing can be launched. */
function cheapestPrice(instanceType: InstanceType): number | undefined {
  let best: number | undefined;
  for (const offering of instanceType.offerings) {
    if (offering.available && Number.isFinite(offering.price) && (best === undefined || offering.price < best)) {
      best = offering.price;
    }
  }
  return best;
}

/** The LP optimum for one demand against a set of instance types. */
export function fractionalLowerBound(
  demand: Resources,
  instanceTypes: readonly InstanceType[],
  options: LowerBoundOptions = {},
): LowerBound {
  const demandClass: DemandClass = { demand, instanceTypes };
  if (options.minNodes !== undefined) demandClass.minNodes = options.minNodes;
  return classLowerBound([demandClass], options.overhead === undefined ? {} : { overhead: options.overhead });
}

/**
 * Whole instances: every pod sits on some instance that fits it alone, so no plan costs less than the
 * cheapest type fitting the hardest pod. The LP misses this for small batches (one pod buys a whole
 * node, not a fraction of the largest one).
 */
export function singleInstanceBound(
  requests: readonly Resources[],
  instanceTypes: readonly InstanceType[],
  options: Pick<LowerBoundOptions, 'overhead'> = {},
): number {
  const overhead = options.overhead ?? {};
  const priced = instanceTypes.flatMap((t) => {
    const price = cheapestPrice(t);
    return price === undefined ? [] : [{ allocatable: t.allocatable, price }];
  });
  const seen = new Set<string>();
  let bound = 0;
  for (const request of requests) {
    // Pods of one workload share a shape: each shape is checked once.
    const key = JSON.stringify(request);
    if (seen.has(key)) continue;
    seen.add(key);
    let cheapest = Number.POSITIVE_INFINITY;
    for (const { allocatable, price } of priced) {
      if (price >= cheapest) continue;
      const fits = Object.entries(request).every(
        ([name, amount]) => amount + (overhead[name] ?? 0) <= (allocatable[name] ?? 0),
      );
      if (fits) cheapest = price;
    }
    bound = Math.max(bound, cheapest);
  }
  return bound;
}

/**
 * The best bound this module knows for pods that may use any of the given types: the LP over their
 * total demand (with minNodes instances at least), or the cheapest instance the hardest pod needs.
 */
export function podsLowerBound(
  requests: readonly Resources[],
  instanceTypes: readonly InstanceType[],
  options: LowerBoundOptions = {},
): number {
  return Math.max(
    fractionalLowerBound(totalDemand(requests), instanceTypes, options).price,
    singleInstanceBound(requests, instanceTypes, options.overhead === undefined ? {} : { overhead: options.overhead }),
  );
}

export interface DemandClass {
  /** Demand of pods that can only use these instance types (see totalDemand). */
  demand: Resources;
  instanceTypes: readonly InstanceType[];
  /** Instances this class needs whatever their size (see LowerBoundOptions.minNodes). */
  minNodes?: number;
}

/** Above this many classes only single classes and all of them together are constrained (2^k rows otherwise). */
const MAX_SUBSET_CLASSES = 8;

/**
 * The LP bound when pods differ in which instance types they may use. Each resource of a bought
 * instance may be split among the classes allowed on it; by Hall's theorem that split exists exactly
 * when, for every set S of classes and every resource, the types some class of S may use supply at
 * least S's summed demand. Those are the rows of one covering LP (all subsets when there are few
 * classes, else each class alone and all together: fewer rows still give a valid, looser bound).
 */
export function classLowerBound(
  classes: readonly DemandClass[],
  options: Pick<LowerBoundOptions, 'overhead'> = {},
): LowerBound {
  const overhead = options.overhead ?? {};
  const subsets: number[][] = [];
  if (classes.length <= MAX_SUBSET_CLASSES) {
    for (let mask = 1; mask < 1 << classes.length; mask++) {
      subsets.push(classes.map((_, i) => i).filter((i) => mask & (1 << i)));
    }
  } else {
    for (let i = 0; i < classes.length; i++) subsets.push([i]);
    subsets.push(classes.map((_, i) => i));
  }

  const types = new Map<string, { instanceType: InstanceType; price: number }>();
  for (const demandClass of classes) {
    for (const instanceType of demandClass.instanceTypes) {
      const price = cheapestPrice(instanceType);
      if (price !== undefined) types.set(instanceType.name, { instanceType, price });
    }
  }
  const typeList = [...types.values()];
  const allowed = classes.map((c) => new Set(c.instanceTypes.map((t) => t.name)));

  // One covering row per (subset, resource) with positive demand: which types may serve it, how much.
  const rows: { demand: number; resource: string; members: number[] }[] = [];
  for (const members of subsets) {
    const demand: Resources = {};
    let minNodes = 0;
    for (const i of members) {
      for (const [name, amount] of Object.entries(classes[i]?.demand ?? {}))
        demand[name] = (demand[name] ?? 0) + amount;
      // Classes may share instances, so only the largest count is certain.
      minNodes = Math.max(minNodes, classes[i]?.minNodes ?? 0);
    }
    if (minNodes > 0) demand[NODES] = minNodes;
    for (const [resource, amount] of Object.entries(demand)) {
      if (amount > 0) rows.push({ demand: amount, resource, members });
    }
  }
  if (rows.length === 0) return { price: 0, mix: [] };

  const supply = typeList.map(({ instanceType }) =>
    rows.map((row) => {
      if (!row.members.some((i) => allowed[i]?.has(instanceType.name))) return 0;
      // Scaling each row by its demand makes every right-hand side 1, which keeps bytes (1e12) and
      // millicores (1e5) from swamping each other in the pivots.
      if (row.resource === NODES) return 1 / row.demand;
      const usable = (instanceType.allocatable[row.resource] ?? 0) - (overhead[row.resource] ?? 0);
      return Math.max(0, usable) / row.demand;
    }),
  );
  const solution = solveCoveringLP(
    typeList.map((t) => t.price),
    supply,
    rows.length,
  );
  if (solution === undefined) return { price: Number.POSITIVE_INFINITY, mix: [] };
  const mix = solution.x
    .map((count, i) => ({ instanceType: typeList[i]?.instanceType.name ?? '', count, price: typeList[i]?.price ?? 0 }))
    .filter((entry) => entry.count > EPSILON)
    .sort((a, b) => a.price - b.price || a.instanceType.localeCompare(b.instanceType))
    .map(({ instanceType, count }) => ({ instanceType, count }));
  return { price: solution.value, mix };
}

/**
 * min Σ price_t x_t s.t. Σ_t supply_t,r x_t ≥ 1 for every r, x ≥ 0, solved through its dual
 * max Σ_r y_r s.t. Σ_r supply_t,r y_r ≤ price_t, y ≥ 0, whose origin is feasible (prices are ≥ 0), so
 * no phase one is needed. The dual has one column per resource: the condensed (Tucker) tableau keeps
 * only those columns, so a pivot costs O(types × resources). Bland's rule rules out cycling.
 * Returns undefined when the primal is infeasible (the dual is unbounded).
 */
export function solveCoveringLP(
  prices: readonly number[],
  supply: readonly (readonly number[])[],
  resources: number,
): { value: number; x: number[] } | undefined {
  const rows = prices.length;
  // Variables: 0..resources-1 are the dual y_r, resources+t is the slack of type t's constraint.
  const columnVar = Array.from({ length: resources }, (_, j) => j);
  const rowVar = Array.from({ length: rows }, (_, i) => resources + i);
  // basic_i = table[i][0] + Σ_j table[i][j+1] · nonbasic_j ; z = objective[0] + Σ_j objective[j+1] · nonbasic_j
  const table = prices.map((price, i) => [price, ...(supply[i] ?? []).map((a) => -a)]);
  const objective = [0, ...Array.from({ length: resources }, () => 1)];

  for (let iteration = 0; iteration < 10_000; iteration++) {
    let entering = -1;
    for (let j = 0; j < resources; j++) {
      if (
        (objective[j + 1] ?? 0) > REDUCED_COST_TOLERANCE &&
        (entering < 0 || (columnVar[j] ?? 0) < (columnVar[entering] ?? 0))
      ) {
        entering = j;
      }
    }
    if (entering < 0) break;
    let leaving = -1;
    let bestRatio = Number.POSITIVE_INFINITY;
    for (let i = 0; i < rows; i++) {
      const row = table[i] ?? [];
      const coefficient = row[entering + 1] ?? 0;
      if (coefficient >= -PIVOT_TOLERANCE) continue;
      // Degenerate pivots leave constants a rounding error below zero; a negative ratio would pick a
      // row that makes the tableau truly infeasible.
      const ratio = Math.max(0, row[0] ?? 0) / -coefficient;
      if (
        ratio < bestRatio - EPSILON ||
        (ratio <= bestRatio + EPSILON && leaving >= 0 && (rowVar[i] ?? 0) < (rowVar[leaving] ?? 0))
      ) {
        bestRatio = Math.min(ratio, bestRatio);
        leaving = i;
      }
    }
    if (leaving < 0) return undefined;
    pivot(table, objective, leaving, entering);
    const enteringVar = columnVar[entering] ?? 0;
    columnVar[entering] = rowVar[leaving] ?? 0;
    rowVar[leaving] = enteringVar;
  }

  const x = new Array<number>(rows).fill(0);
  // The primal value of type t is the shadow price of its dual constraint: minus the objective's
  // coefficient of its slack while that slack is nonbasic.
  columnVar.forEach((variable, j) => {
    if (variable >= resources) x[variable - resources] = Math.max(0, -(objective[j + 1] ?? 0));
  });
  return { value: certifiedBound(prices, supply, resources, rowVar, table), x };
}

/**
 * The objective of the final dual point, scaled down until it is dual feasible. By weak duality any
 * feasible y gives Σ y ≤ the primal optimum, so rounding drift in the tableau can only make the
 * bound a little loose, never invalid.
 */
function certifiedBound(
  prices: readonly number[],
  supply: readonly (readonly number[])[],
  resources: number,
  rowVar: readonly number[],
  table: readonly (readonly number[])[],
): number {
  const y = new Array<number>(resources).fill(0);
  rowVar.forEach((variable, i) => {
    if (variable < resources) y[variable] = Math.max(0, table[i]?.[0] ?? 0);
  });
  let scale = 1;
  prices.forEach((price, t) => {
    const used = (supply[t] ?? []).reduce((sum, a, r) => sum + a * (y[r] ?? 0), 0);
    if (used > price) scale = Math.max(scale, price > 0 ? used / price : Number.POSITIVE_INFINITY);
  });
  const total = y.reduce((sum, v) => sum + v, 0);
  return Number.isFinite(scale) ? total / scale : 0;
}

function pivot(table: number[][], objective: number[], r: number, c: number): void {
  const pivotRow = table[r] ?? [];
  const a = pivotRow[c + 1] ?? 0;
  // Solve row r for the entering variable: it becomes that row's basic variable.
  const solved = pivotRow.map((value, k) => (k === c + 1 ? 1 / a : -value / a));
  table[r] = solved;
  const substitute = (row: number[]) => {
    const factor = row[c + 1] ?? 0;
    if (factor === 0) return;
    for (let k = 0; k < row.length; k++) {
      row[k] = k === c + 1 ? factor * (solved[k] ?? 0) : (row[k] ?? 0) + factor * (solved[k] ?? 0);
    }
  };
  for (let i = 0; i < table.length; i++) if (i !== r) substitute(table[i] ?? []);
  substitute(objective);
}
