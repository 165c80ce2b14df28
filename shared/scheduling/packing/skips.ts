// Claims a pod-side requirement set conflicts with, skipped in one step. A conflict is permanent (a
// claim's requirements only narrow), and it depends only on the two requirement sets, so every class
// placed under the same requirements (a zone pin, a selector) shares what one of them learnt: without
// this each of thousands of classes re-tests every claim pinned elsewhere, O(classes × claims).

const NONE: Uint32Array = new Uint32Array(0);

/** Claim indices known to conflict, one bit each per pod-side requirement set, in words grown by doubling. */
export class ConflictSkips {
  private readonly sets = new Map<number, Uint32Array>();

  /** The bits of these pod-side requirements (replaced when `add` grows them: ask again after one). */
  of(podReqsId: number): Uint32Array {
    return this.sets.get(podReqsId) ?? NONE;
  }

  /** Claim i conflicts with these pod-side requirements, for good. */
  add(podReqsId: number, i: number): void {
    this.sets.set(podReqsId, setBit(this.sets.get(podReqsId) ?? NONE, i));
  }
}

/** The first index ≥ i whose bit is clear in both sets (indices past a set's words are clear in it). */
export function firstClear(a: Uint32Array, b: Uint32Array, i: number): number {
  let w = i >>> 5;
  const end = Math.max(a.length, b.length);
  if (w >= end) return i;
  // The clear bits of the word at and above i.
  let free = ~((a[w] ?? 0) | (b[w] ?? 0)) & (-1 << (i & 31));
  while (free === 0) {
    w++;
    if (w >= end) return w << 5;
    free = ~((a[w] ?? 0) | (b[w] ?? 0));
  }
  // The lowest clear bit: its index is 31 minus the leading zeros of that bit alone.
  return (w << 5) + 31 - Math.clz32(free & -free);
}

/** The set with bit i set: the same words, or a copy grown by doubling when i is past them. */
function setBit(bits: Uint32Array, i: number): Uint32Array {
  const w = i >>> 5;
  let out = bits;
  if (w >= bits.length) {
    out = new Uint32Array(Math.max(w + 1, bits.length * 2, 4));
    out.set(bits);
  }
  out[w]! |= 1 << (i & 31);
  return out;
}

/**
 * Claims known to have no room for pods of one request vector under one pod-side requirement set, while
 * the claim keeps its requirements and cap: what one class learnt of a claim holds for every class
 * with those requests and requirements (their topology aside, which is checked before). A pod that
 * narrows a claim may choose its types again, under a higher cap, so the packer reports every change of
 * a claim's requirements or cap (`lapse`) and the claim's marks are dropped; room itself only shrinks as
 * pods join. Each of thousands of classes walks the claims once: a 20,000-pod solve stepped over 1.5
 * million full claims one by one, and the bits let a cursor pass 32 at a time.
 */
export class FullSkips {
  private readonly marks = new Map<number, Map<number, FullMarks>>();
  /** Per claim index, the marks that hold it, so a change of the claim drops them. */
  private readonly byClaim: FullMarks[][] = [];

  /** The marks of one pod-side requirement set and request vector (PodClass.reqId). */
  of(podReqsId: number, reqId: number): FullMarks {
    let byReqs = this.marks.get(podReqsId);
    if (!byReqs) {
      byReqs = new Map();
      this.marks.set(podReqsId, byReqs);
    }
    let marks = byReqs.get(reqId);
    if (!marks) {
      marks = new FullMarks(this.byClaim);
      byReqs.set(reqId, marks);
    }
    return marks;
  }

  /** Claim i changed its requirements or cap: nothing known of its room holds any more. */
  lapse(i: number): void {
    const held = this.byClaim[i];
    if (!held || held.length === 0) return;
    for (const m of held) m.unmark(i);
    held.length = 0;
  }
}

/** The claim indices found full, one bit each. */
export class FullMarks {
  bits: Uint32Array = NONE;

  constructor(private readonly byClaim: FullMarks[][]) {}

  mark(i: number): void {
    this.bits = setBit(this.bits, i);
    let held = this.byClaim[i];
    if (!held) {
      held = [];
      this.byClaim[i] = held;
    }
    held.push(this);
  }

  unmark(i: number): void {
    const w = i >>> 5;
    if (w < this.bits.length) this.bits[w]! &= ~(1 << (i & 31));
  }
}
