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
    },
    opts.destination ?? pino.destination({ dest: 1, sync: true }),
  )
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
