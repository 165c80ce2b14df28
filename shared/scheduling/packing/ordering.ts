// Orders that keep plans stable: names, numbers among names, preference weights.

export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function cmpNatural(a: string, b: string): number {
  const na = Number(a);
  const nb = Number(b);
  return Number.isFinite(na) && Number.isFinite(nb) ? na - nb : cmp(a, b);
}

export function sortByWeight<T extends { weight: number }>(list: readonly T[]): T[] {
  return [...list].sort((a, b) => b.weight - a.weight);
}
