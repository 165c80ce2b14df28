// Memos keyed by a few numbers and objects (a requirements id, an interned vector, a class) as nested
// maps: the packer asks them hundreds of thousands of times per solve, and a key text built per lookup
// (vectors joined, ids concatenated) cost more than the answer and left garbage for the collector.
// An object key is compared by identity: callers intern what must be compared by contents.

/** Values by three keys; `undefined` is a value like any other (`has` tells it from a miss). */
export class Memo3<A, B, C, V> {
  private readonly root = new Map<A, Map<B, Map<C, V>>>();

  private leaf(a: A, b: B): Map<C, V> {
    let byA = this.root.get(a);
    if (!byA) {
      byA = new Map();
      this.root.set(a, byA);
    }
    let byB = byA.get(b);
    if (!byB) {
      byB = new Map();
      byA.set(b, byB);
    }
    return byB;
  }

  has(a: A, b: B, c: C): boolean {
    return this.root.get(a)?.get(b)?.has(c) ?? false;
  }

  get(a: A, b: B, c: C): V | undefined {
    return this.root.get(a)?.get(b)?.get(c);
  }

  set(a: A, b: B, c: C, value: V): V {
    this.leaf(a, b).set(c, value);
    return value;
  }
}
