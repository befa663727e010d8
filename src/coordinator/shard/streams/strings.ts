/**
 * A string the shard keeps for as long as a group or member lives, as a string of its own. A string
 * decoded from a frame may be a slice of the Reader's window over that frame (V8 shares a substring
 * of 13 or more characters with its parent): kept as is, it would keep that window alive, and every
 * comparison with it (the member-id lookup of each heartbeat) would read two objects instead of one.
 * Shorter strings are their own already. The copy is exact for any string (lone surrogates too).
 */
export function kept(s: string): string
export function kept(s: string | null): string | null
export function kept(s: string | null): string | null {
  return s === null || s.length < 13 ? s : structuredClone(s)
}
