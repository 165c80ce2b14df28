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

/**
 * Numbers for vectors by their contents, looked up once per array: equal vectors in different arrays
 * get one id, so memos keyed by it hit across them. The vectors are never changed once interned.
 */
export class VectorIds {
  private readonly byText = new Map<string, number>();
  private readonly byArray = new WeakMap<Float64Array, number>();

  of(v: Float64Array): number {
    let id = this.byArray.get(v);
    if (id === undefined) {
      const text = v.join(',');
      id = this.byText.get(text);
      if (id === undefined) {
        id = this.byText.size;
        this.byText.set(text, id);
      }
      this.byArray.set(v, id);
    }
    return id;
  }
}
