/**
 * A small seeded random number generator (sfc32, seeded through splitmix32). Frame `i` of a campaign
 * with seed `s` draws from `frameRng(s, i)`, so any frame can be rebuilt on its own from the seed
 * and its index, whatever ran before it.
 */
export class Rng {
  #a: number
  #b: number
  #c: number
  #d: number

  constructor(seed: number) {
    let s = seed >>> 0
    const split = (): number => {
      s = (s + 0x9e3779b9) >>> 0
      let z = s
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0
      return (z ^ (z >>> 16)) >>> 0
    }
    this.#a = split()
    this.#b = split()
    this.#c = split()
    this.#d = split()
    for (let i = 0; i < 12; i++) this.u32()
  }

  /** A uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0
    this.#d = (this.#d + 1) >>> 0
    this.#a = this.#b ^ (this.#b >>> 9)
    this.#b = (this.#c + (this.#c << 3)) >>> 0
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0
    this.#c = (this.#c + t) >>> 0
    return t
  }

  /** A uniform integer in [0, n). */
  int(n: number): number {
    return n <= 1 ? 0 : Math.floor((this.u32() / 4294967296) * n)
  }

  /** A uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1)
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.u32() / 4294967296 < p
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n)
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff
    return b
  }
}

/** A seed given as a number or as any text (hashed). */
export function parseSeed(text: string): number {
  if (/^\d+$/.test(text)) return Number(BigInt(text) & 0xffffffffn)
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0
  return h
}

/** The generator of frame `index` of the campaign with `seed`. */
export function frameRng(seed: number, index: number): Rng {
  return new Rng((Math.imul(seed ^ 0x5bd1e995, 0x27d4eb2d) + Math.imul(index + 1, 0x165667b1)) >>> 0)
}
