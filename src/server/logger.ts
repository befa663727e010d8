// JSON logging with pino. One line per event on stdout:
//   {"level":"info","time":"2026-…Z","pid":…,"hostname":"…","component":"GroupCoordinator",
//    "nodeId":1,"msg":"[GroupCoordinator nodeId=1] Loaded 3 groups."}
// Messages keep Kafka's log texts where operators grep for them; the same facts are also structured
// fields (groupId, memberId, topologyEpoch, …) so they can be filtered without parsing the text.

import { hostname } from 'node:os'
import { pino, type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from './config-defs.js'

export type { Logger } from 'pino'

export interface CreateLoggerOptions {
  /** `log.level`; default `info`. `silent` writes nothing. */
  readonly level?: LogLevel
  /** Where lines go; default stdout (written synchronously, so nothing is lost on exit). */
  readonly destination?: DestinationStream
  /** Fields added to every line. */
  readonly base?: Readonly<Record<string, unknown>>
}

export function createLogger(opts: CreateLoggerOptions = {}): Logger {
  return pino(
    {
      level: opts.level ?? 'info',
      base: { pid: process.pid, hostname: hostname(), ...opts.base },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names rather than pino's numbers: operators read these logs as they read Kafka's.
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: serializeError },
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  )
}

/**
 * The message of an error and of each error in its cause chain, outermost first; a cause whose text
 * the error before it already includes (most wrap their cause's message in their own) is left out.
 */
export function errorMessages(err: unknown, maxDepth = 5): string[] {
  const messages: string[] = []
  let e: unknown = err
  let previous = ''
  for (let depth = 0; e !== undefined && e !== null && depth < maxDepth; depth++) {
    const message = e instanceof Error ? e.message || e.name : String(e)
    if (depth === 0 || !previous.includes(message)) messages.push(message)
    previous = message
    e = e instanceof Error ? e.cause : undefined
  }
  return messages
}

/**
 * pino's error serializer (type, stack with its causes', own fields), with the causes' messages
 * joined into `message` only where the error's own text does not already hold them: pino's would
 * print `…: connect ECONNREFUSED …: connect ECONNREFUSED …` for an error that wraps its cause's text.
 */
function serializeError(err: unknown): unknown {
  const serialized = pino.stdSerializers.err(err as Error)
  if (err instanceof Error && typeof serialized === 'object' && serialized !== null) {
    serialized.message = errorMessages(err).join(': ')
  }
  return serialized
}

/**
 * A child logger for one component, in Kafka's style: every message starts with
 * `[Component k=v ...] ` (as `[GroupCoordinator id=1] `) and the same values are bound as fields.
 */
export function componentLogger(
  parent: Logger,
  component: string,
  context: Readonly<Record<string, string | number | bigint | boolean>> = {},
): Logger {
  const parts = Object.entries(context).map(([k, v]) => `${k}=${String(v)}`)
  const prefix = `[${[component, ...parts].join(' ')}] `
  const bindings: Record<string, unknown> = { component }
  for (const [k, v] of Object.entries(context)) bindings[k] = typeof v === 'bigint' ? v.toString() : v
  return parent.child(bindings, { msgPrefix: prefix })
}
