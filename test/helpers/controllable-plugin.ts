// A real topology description plugin for tests, loaded by the real loader through
// group.streams.topology.description.plugin.class=test/helpers/controllable-plugin.ts. It stores
// through a built-in plugin (memory by default, sqlite with test.plugin.backend=sqlite, so the data
// survives a kill -9) and obeys a JSON control file the test rewrites at any time:
//
//   { "set":    { "<groupId>|*": { "action": "permanent", "message": "too large" } },
//     "get":    { ... }, "delete": { ... } }
//
// Actions: ok · permanent · transient (reject with that exception) · reject-plain (reject with a
// plain Error) · reject-empty (reject with no reason) · throw (synchronous throw) · null (getTopology
// resolves to null) · hang (wait until the rule changes, then act on the new rule) · crash-before /
// crash-after (SIGKILL this process before or after the stored effect; child processes only).
// Every call is appended to the call log file (test.plugin.log.file) as one JSON line.
import { appendFileSync, readFileSync } from 'node:fs'
import {
  type StreamsGroupTopologyDescription,
  type StreamsGroupTopologyDescriptionPlugin,
  StreamsTopologyDescriptionPermanentFailureException,
  StreamsTopologyDescriptionTransientFailureException,
} from '../../src/plugin/index.js'
import { InMemoryTopologyDescriptionPlugin } from '../../src/plugin/builtin/memory.js'
import { SqliteTopologyDescriptionPlugin } from '../../src/plugin/builtin/sqlite.js'

export const CONTROL_FILE_KEY = 'test.plugin.control.file'
export const LOG_FILE_KEY = 'test.plugin.log.file'
export const BACKEND_KEY = 'test.plugin.backend'

export type PluginOp = 'set' | 'get' | 'delete'

export interface Rule {
  readonly action:
    | 'ok'
    | 'permanent'
    | 'transient'
    | 'reject-plain'
    | 'reject-empty'
    | 'throw'
    | 'null'
    | 'hang'
    | 'crash-before'
    | 'crash-after'
  readonly message?: string
}

export type Control = Partial<Record<PluginOp, Record<string, Rule>>>

export interface CallLogEntry {
  readonly op: PluginOp | 'configure' | 'close'
  readonly groupId?: string
  readonly epoch?: number
  readonly result: string
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))

export default class ControllablePlugin implements StreamsGroupTopologyDescriptionPlugin {
  #inner: StreamsGroupTopologyDescriptionPlugin = new InMemoryTopologyDescriptionPlugin()
  #controlFile: string | null = null
  #logFile: string | null = null
  #closed = false

  async configure(configs: Readonly<Record<string, string>>): Promise<void> {
    this.#controlFile = configs[CONTROL_FILE_KEY] ?? null
    this.#logFile = configs[LOG_FILE_KEY] ?? null
    if (configs[BACKEND_KEY] === 'sqlite') this.#inner = new SqliteTopologyDescriptionPlugin()
    await this.#inner.configure(configs)
    this.#log({ op: 'configure', result: 'ok' })
  }

  #rule(op: PluginOp, groupId: string): Rule {
    if (this.#controlFile === null) return { action: 'ok' }
    let control: Control
    try {
      control = JSON.parse(readFileSync(this.#controlFile, 'utf8')) as Control
    } catch {
      return { action: 'ok' }
    }
    return control[op]?.[groupId] ?? control[op]?.['*'] ?? { action: 'ok' }
  }

  #log(entry: CallLogEntry): void {
    if (this.#logFile !== null) appendFileSync(this.#logFile, `${JSON.stringify(entry)}\n`)
  }

  /** The rule for this call, after any hang is released. */
  async #decide(op: PluginOp, groupId: string): Promise<Rule> {
    let rule = this.#rule(op, groupId)
    while (rule.action === 'hang' && !this.#closed) {
      await sleep(10)
      rule = this.#rule(op, groupId)
    }
    return rule
  }

  /** Performs the rule; `effect` is the stored effect (set/delete/get of the backend). */
  #run<T>(op: PluginOp, groupId: string, epoch: number | undefined, effect: () => Promise<T>): Promise<T> {
    const first = this.#rule(op, groupId)
    if (first.action === 'throw') {
      this.#log({ op, groupId, epoch, result: 'throw' })
      throw new Error(first.message ?? 'thrown synchronously')
    }
    return this.#runAsync(op, groupId, epoch, effect)
  }

  async #runAsync<T>(
    op: PluginOp,
    groupId: string,
    epoch: number | undefined,
    effect: () => Promise<T>,
  ): Promise<T> {
    const rule = await this.#decide(op, groupId)
    const log = (result: string) => this.#log({ op, groupId, epoch, result })
    switch (rule.action) {
      case 'permanent':
        log('permanent')
        throw new StreamsTopologyDescriptionPermanentFailureException(rule.message ?? 'permanent failure')
      case 'transient':
        log('transient')
        throw new StreamsTopologyDescriptionTransientFailureException(rule.message ?? 'transient failure')
      case 'reject-plain':
        log('reject-plain')
        throw new Error(rule.message ?? 'plain failure')
      case 'reject-empty':
        log('reject-empty')
        return Promise.reject() as Promise<T>
      case 'null':
        log('null')
        return null as T
      case 'crash-before':
        log('crash-before')
        process.kill(process.pid, 'SIGKILL')
        await sleep(60_000)
        throw new Error('unreachable')
      case 'crash-after': {
        await effect()
        log('crash-after')
        process.kill(process.pid, 'SIGKILL')
        await sleep(60_000)
        throw new Error('unreachable')
      }
      default: {
        const value = await effect()
        log(op === 'get' ? (value === null ? 'null' : 'found') : 'ok')
        return value
      }
    }
  }

  setTopology(
    groupId: string,
    topologyEpoch: number,
    description: StreamsGroupTopologyDescription,
  ): Promise<void> {
    return this.#run('set', groupId, topologyEpoch, () =>
      this.#inner.setTopology(groupId, topologyEpoch, description),
    )
  }

  getTopology(groupId: string, topologyEpoch: number): Promise<StreamsGroupTopologyDescription | null> {
    return this.#run('get', groupId, topologyEpoch, () => this.#inner.getTopology(groupId, topologyEpoch))
  }

  deleteTopology(groupId: string): Promise<void> {
    return this.#run('delete', groupId, undefined, () => this.#inner.deleteTopology(groupId))
  }

  async close(): Promise<void> {
    this.#closed = true
    this.#log({ op: 'close', result: 'ok' })
    await this.#inner.close()
  }
}

/** Reads the call log the plugin wrote (empty when it wrote nothing yet). */
export function readCallLog(file: string): CallLogEntry[] {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return []
  }
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as CallLogEntry)
}
