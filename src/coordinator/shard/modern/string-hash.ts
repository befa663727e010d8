/**
 * 32-bit FNV-1a steps over strings and numbers, for hashes the shard keeps in memory or derives
 * answers from (never written to a record, never on the wire as a stored value).
 */

/** FNV-1a's 32-bit offset basis: the seed of a hash built from the steps below. */
export const FNV1A_32_SEED = 0x811c9dc5

/** A 32-bit FNV-1a step over a string (null distinct from every string), then its length. */
export function hashString(h: number, s: string | null): number {
  if (s === null) return Math.imul(h ^ 0x5bd1e995, 0x01000193)
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193)
  return Math.imul(h ^ s.length, 0x01000193)
}

/** A 32-bit FNV-1a step over the low 32 bits of a number. */
export const hashNumber = (h: number, n: number): number => Math.imul(h ^ (n | 0), 0x01000193)
