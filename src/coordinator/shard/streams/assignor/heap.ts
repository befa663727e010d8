/**
 * A binary min-heap of small integers (indices into the caller's arrays), ordered by a caller-given
 * strict "less than". The caller must keep the order of an element fixed while it is in the heap
 * (poll it, change it, push it back), as the sticky assignor does.
 */
export class IndexHeap {
  readonly #less: (a: number, b: number) => boolean
  #items: number[] = []

  constructor(less: (a: number, b: number) => boolean) {
    this.#less = less
  }

  get size(): number {
    return this.#items.length
  }

  /** Replaces the content with `items` in O(n). */
  reset(items: Iterable<number>): void {
    this.#items = [...items]
    for (let i = (this.#items.length >> 1) - 1; i >= 0; i--) this.#down(i)
  }

  push(item: number): void {
    const items = this.#items
    items.push(item)
    let i = items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (!this.#less(items[i], items[parent])) break
      const t = items[i]
      items[i] = items[parent]
      items[parent] = t
      i = parent
    }
  }

  /** The least element without removing it, or -1 when empty. */
  peek(): number {
    return this.#items.length === 0 ? -1 : this.#items[0]
  }

  /**
   * Restores the order after the caller changed the least element's key: the same as poll + push of
   * that element (the order is total, so the sequence of polled elements is the same) with one sift.
   */
  updateTop(): void {
    if (this.#items.length > 1) this.#down(0)
  }

  /** Removes and returns the least element, or -1 when empty. */
  poll(): number {
    const items = this.#items
    if (items.length === 0) return -1
    const top = items[0]
    const last = items.pop()!
    if (items.length > 0) {
      items[0] = last
      this.#down(0)
    }
    return top
  }

  #down(start: number): void {
    const items = this.#items
    const n = items.length
    let i = start
    for (;;) {
      const l = 2 * i + 1
      if (l >= n) return
      const r = l + 1
      const c = r < n && this.#less(items[r], items[l]) ? r : l
      if (!this.#less(items[c], items[i])) return
      const t = items[i]
      items[i] = items[c]
      items[c] = t
      i = c
    }
  }
}
