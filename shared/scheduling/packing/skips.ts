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

/**
 * Claims known to have no room for pods of one request vector under one pod-side requirement set, while
 * the claim keeps its requirements and cap: what one class learnt of a claim holds for every class
 * with those requests and requirements (their topology aside, which is checked before). A pod that
 * narrows a claim may choose its types again, under a higher cap, so a mark lapses when the claim's
 * requirements or cap change; room itself only shrinks as pods join.
 */
export class FullSkips {
  private readonly marks = new Map<string, { reqsId: number[]; capPrice: number[] }>();

  private list(key: string): { reqsId: number[]; capPrice: number[] } {
    let list = this.marks.get(key);
    if (!list) {
      list = { reqsId: [], capPrice: [] };
      this.marks.set(key, list);
    }
    return list;
  }

  /** The marks of one pod-side requirement set and request vector, for `full` and `add`. */
  of(podReqsId: number, reqKey: string): { reqsId: number[]; capPrice: number[] } {
    return this.list(`${podReqsId}\u0000${reqKey}`);
  }
}

export function knownFull(
  marks: { reqsId: number[]; capPrice: number[] },
  i: number,
  node: { reqsId: number; capPrice: number },
): boolean {
  return marks.reqsId[i] === node.reqsId && marks.capPrice[i] === node.capPrice;
}

export function markFull(
  marks: { reqsId: number[]; capPrice: number[] },
  i: number,
  node: { reqsId: number; capPrice: number },
): void {
  marks.reqsId[i] = node.reqsId;
  marks.capPrice[i] = node.capPrice;
}
