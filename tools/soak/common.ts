// What the soak's main thread (data plane, end check) and its members' threads (tools/soak/members.ts)
// both use: Kafka's error codes the load tells apart, and a seeded generator.

export const E = {
  NONE: 0,
  REQUEST_TIMED_OUT: 7,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  UNKNOWN_MEMBER_ID: 25,
  REBALANCE_IN_PROGRESS: 27,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  FENCED_MEMBER_EPOCH: 110,
  STALE_MEMBER_EPOCH: 113,
  STREAMS_TOPOLOGY_FENCED: 132,
} as const

export const RETRIABLE = new Set<number>([
  E.REQUEST_TIMED_OUT,
  E.COORDINATOR_LOAD_IN_PROGRESS,
  E.COORDINATOR_NOT_AVAILABLE,
  E.NOT_COORDINATOR,
  6, // NOT_LEADER_OR_FOLLOWER
  3, // UNKNOWN_TOPIC_OR_PARTITION (metadata not loaded yet)
])

export const STREAMS_TOPIC = 'soak-streams-input'

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

/** A deterministic generator, so a run's churn picks are the same for the same options. */
export function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** The wall clock in ms with the monotonic clock's resolution, comparable across the load's threads. */
export const wallNow = () => performance.timeOrigin + performance.now()
