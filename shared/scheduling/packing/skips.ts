// Claims a pod-side requirement set conflicts with, skipped in one step. A conflict is permanent (a
// claim's requirements only narrow), and it depends only on the two requirement sets, so every class
// placed under the same requirements (a zone pin, a selector) shares what one of them learnt: without
// this each of thousands of classes re-tests every claim pinned elsewhere, O(classes × claims).

/** Claim indices known to conflict, as a union-find whose root is the next index not known to. */
export class ConflictSkips {
  /** Per pod-side requirement set, the union-find's links: -1 where a claim is not known to conflict. */
  private readonly next = new Map<number, Int32Array>();

  /** The first claim index ≥ i not known to conflict with these pod-side requirements. */
  first(podReqsId: number, i: number): number {
    const next = this.next.get(podReqsId);
    if (!next) return i;
    let root = i;
    while (root < next.length && next[root]! >= 0) root = next[root]!;
    // Path compression: every index walked now points at the root.
    let j = i;
    while (j < next.length && next[j]! >= 0) {
      const k = next[j]!;
      next[j] = root;
      j = k;
    }
    return root;
  }

  /** Claim i conflicts with these pod-side requirements, for good. */
  add(podReqsId: number, i: number): void {
    let next = this.next.get(podReqsId);
    if (!next || i >= next.length) {
      // Dense and grown by doubling: links at scattered indices made plain arrays sparse dictionaries.
      const grown = new Int32Array(Math.max(i + 1, (next?.length ?? 0) * 2, 64)).fill(-1);
      if (next) grown.set(next);
      next = grown;
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
  private readonly marks = new Map<number, Map<number, FullMarks>>();

  /** The marks of one pod-side requirement set and request vector (PodClass.reqId). */
  of(podReqsId: number, reqId: number): FullMarks {
    let byReqs = this.marks.get(podReqsId);
    if (!byReqs) {
      byReqs = new Map();
      this.marks.set(podReqsId, byReqs);
    }
    let marks = byReqs.get(reqId);
    if (!marks) {
      marks = new FullMarks();
      byReqs.set(reqId, marks);
    }
    return marks;
  }
}

/**
 * Per claim index, the requirements and cap under which the claim was found full. Dense typed columns
 * grown by doubling: marks land at scattered indices, which made plain arrays sparse (a dictionary per
 * list, the largest source of garbage in a 20,000-pod solve).
 */
export class FullMarks {
  private reqsId = new Int32Array(0);
  private capPrice = new Float64Array(0);

  /** Whether claim i was found full under the requirements and cap it still has. */
  has(i: number, node: { reqsId: number; capPrice: number }): boolean {
    return i < this.reqsId.length && this.reqsId[i] === node.reqsId && this.capPrice[i] === node.capPrice;
  }

  mark(i: number, node: { reqsId: number; capPrice: number }): void {
    if (i >= this.reqsId.length) this.grow(i + 1);
    this.reqsId[i] = node.reqsId;
    this.capPrice[i] = node.capPrice;
  }

  private grow(min: number): void {
    const size = Math.max(min, this.reqsId.length * 2, 64);
    // -1 is no requirements id and NaN equals no price: a claim never marked is never known full.
    const reqsId = new Int32Array(size).fill(-1);
    const capPrice = new Float64Array(size).fill(Number.NaN);
    reqsId.set(this.reqsId);
    capPrice.set(this.capPrice);
    this.reqsId = reqsId;
    this.capPrice = capPrice;
  }
}
