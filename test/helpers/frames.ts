// Raw size-prefixed frames and turns of the event loop, for the connection tests that drive a
// Connection with a dispatch of their own.

/** `payload` behind its int32 size prefix. */
export function sizePrefixed(payload: Uint8Array): Buffer {
  const b = Buffer.alloc(4 + payload.length)
  b.writeInt32BE(payload.length, 0)
  b.set(payload, 4)
  return b
}

/**
 * Counts calls per turn of the event loop (a turn ends at the check phase, where setImmediate
 * callbacks run): `count()` in the code under test, `most()` the most in one turn.
 */
export function perTurn(): { count(): void; most(): number } {
  let turn = 0
  let scheduled = false
  const counts = new Map<number, number>()
  return {
    count() {
      if (!scheduled) {
        scheduled = true
        setImmediate(() => {
          turn++
          scheduled = false
        })
      }
      counts.set(turn, (counts.get(turn) ?? 0) + 1)
    },
    most: () => Math.max(0, ...counts.values()),
  }
}
