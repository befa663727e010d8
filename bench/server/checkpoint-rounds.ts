// The SQLite engine's checkpoint rounds as the servers' main thread sees them, from its post to the
// checkpoint worker (the message 'round' with the writes held for it, 'round+sync' with them
// flowing; docs/storage.md) to the worker's answer handled on the main thread: the worker's
// checkpoint plus the time both threads took to get to the messages. A held round's time is about
// how long the store's writes waited for it. One message a round: nothing is added per request.
import { Worker } from 'node:worker_threads'

export interface CheckpointRounds {
  /** ms of each held round, in the order they ended. */
  readonly held: number[]
  /** ms of each round run with the writes flowing. */
  readonly flowing: number[]
}

/**
 * Records every checkpoint round of every SQLite store of this process from now on (through
 * `Worker.prototype.postMessage`), with `now` as the clock; `onRound`, when given, also gets each
 * round's post time on that clock, its time and whether the writes were held for it.
 */
export function recordCheckpointRounds(
  now: () => number,
  onRound?: (at: number, ms: number, held: boolean) => void,
): CheckpointRounds {
  const rounds: CheckpointRounds = { held: [], flowing: [] }
  const post = Worker.prototype.postMessage
  Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: unknown[]) {
    if (message === 'round' || message === 'round+sync') {
      const at = now()
      this.once('message', () => {
        const ms = now() - at
        ;(message === 'round' ? rounds.held : rounds.flowing).push(ms)
        onRound?.(at, ms, message === 'round')
      })
    }
    return (post as (...a: unknown[]) => void).call(this, message, ...rest)
  }
  return rounds
}
