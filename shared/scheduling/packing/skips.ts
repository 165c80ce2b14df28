// Claims a pod-side requirement set conflicts with, skipped in one step. A conflict is permanent (a
// claim's requirements only narrow), and it depends only on the two requirement sets, so every class
// placed under the same requirements (a zone pin, a selector) shares what one of them learnt: without
// this each of thousands of classes re-tests every claim pinned elsewhere, O(classes × claims).

/** Claim indices known to conflict, as a union-find whose root is the next index not known to. */
export class ConflictSkips {
  private readonly next = new Map<number, number[]>();

  /** The first claim index ≥ i not known to conflict with these pod-side requirements. */
  first(podReqsId: number, i: number): number {
    const next = this.next.get(podReqsId);
    if (!next) return i;
    let root = i;
    while (next[root] !== undefined) root = next[root]!;
    // Path compression: every index walked now points at the root.
    let j = i;
    while (next[j] !== undefined) {
      const k = next[j]!;
      next[j] = root;
      j = k;
    }
    return root;
  }

  /** Claim i conflicts with these pod-side requirements, for good. */
  add(podReqsId: number, i: number): void {
    let next = this.next.get(podReqsId);
    if (!next) {
      next = [];
      this.next.set(podReqsId, next);
    }
    next[i] = i + 1;
  }
}
