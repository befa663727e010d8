// What the log's tests look at in the file system: the engine's synchronous file calls (what runs
// on the event loop) and the process's open descriptors; and a file-engine log to look at.
import { readdirSync, readlinkSync } from 'node:fs'
import { DEFAULT_LOG_CONFIG, DEFAULT_LOG_MANAGER_CONFIG, resolveLogConfig } from '../../src/log/config.js'
import { type FileLayer, FileLogStorage, NODE_FILE_LAYER } from '../../src/log/file.js'
import { createLogManager, type LogManagerImpl } from '../../src/log/manager.js'
import type { PartitionLogImpl } from '../../src/log/partition-log.js'
import type { LogConfig } from '../../src/log/types.js'

/**
 * node:fs with its synchronous calls counted while `armed`: by name, and the most made in one turn
 * of the event loop (between two setImmediate callbacks, once `watch()` started); `bytes` adds up
 * what the reads and writes among them moved.
 */
export function countingLayer(): {
  layer: FileLayer
  during: (
    work: () => Promise<unknown>,
  ) => Promise<{ calls: Record<string, number>; bytes: Record<string, number>; mostInOneTurn: number }>
} {
  let armed = false
  let calls = new Map<string, number>()
  let bytes = new Map<string, number>()
  let thisTurn = 0
  const layer: Record<string, unknown> = { ...NODE_FILE_LAYER }
  for (const [name, f] of Object.entries(NODE_FILE_LAYER as unknown as Record<string, unknown>)) {
    if (!name.endsWith('Sync') || typeof f !== 'function') continue
    layer[name] = (...args: unknown[]) => {
      const counted = armed
      if (counted) {
        calls.set(name, (calls.get(name) ?? 0) + 1)
        thisTurn++
      }
      const result = (f as (...a: unknown[]) => unknown)(...args)
      if (counted && /^(read|write|writev)Sync$/.test(name))
        bytes.set(name, (bytes.get(name) ?? 0) + (result as number))
      return result
    }
  }
  const during = async (work: () => Promise<unknown>) => {
    calls = new Map()
    bytes = new Map()
    thisTurn = 0
    let most = 0
    let done = false
    const turn = (): void => {
      most = Math.max(most, thisTurn)
      thisTurn = 0
      if (!done) setImmediate(turn)
    }
    armed = true
    setImmediate(turn)
    try {
      await work()
    } finally {
      armed = false
      done = true
    }
    return {
      calls: Object.fromEntries(calls),
      bytes: Object.fromEntries(bytes),
      mostInOneTurn: Math.max(most, thisTurn),
    }
  }
  return { layer: layer as unknown as FileLayer, during }
}

/** Descriptors of this process open on `path`, deleted or not (from /proc/self/fd). */
export function openFilesOf(path: string): number {
  let n = 0
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`)
      if (target === path || target === `${path} (deleted)`) n++
    } catch {
      // closed meanwhile (the directory's own descriptor among them)
    }
  }
  return n
}

/**
 * A file layer (over `base`, node:fs by default) whose threadpool renames that `match` picks wait
 * while holding, until `release()`: what a rename slow on a busy disk leaves in flight. `reached`
 * settles once the first one is held; `held` counts those waiting.
 */
export function heldRenames(
  match: (from: string, to: string) => boolean,
  base: FileLayer = NODE_FILE_LAYER,
): {
  layer: FileLayer
  hold: () => void
  release: () => void
  reached: Promise<void>
  readonly held: number
} {
  let holding = false
  const waiting: (() => void)[] = []
  let reach = () => {}
  const reached = new Promise<void>((r) => (reach = r))
  const layer: FileLayer = {
    ...base,
    rename(from, to, cb) {
      if (!holding || !match(from, to)) return base.rename(from, to, cb)
      waiting.push(() => base.rename(from, to, cb))
      reach()
    },
  }
  return {
    layer,
    hold: () => {
      holding = true
    },
    release: () => {
      holding = false
      for (const go of waiting.splice(0)) go()
    },
    reached,
    get held() {
      return waiting.length
    },
  }
}

/**
 * A log manager on the file engine in `dir` (through `layer`), with no background jobs, and its one
 * partition `c-0` made with `config`.
 */
export async function openOnePartition(
  dir: string,
  config: Partial<LogConfig>,
  layer: FileLayer = NODE_FILE_LAYER,
): Promise<{ m: LogManagerImpl; storage: FileLogStorage; p: PartitionLogImpl }> {
  const storage = new FileLogStorage([dir], { fs: layer })
  const m = createLogManager(
    { ...DEFAULT_LOG_MANAGER_CONFIG, logDirs: [dir], defaults: resolveLogConfig(DEFAULT_LOG_CONFIG, config) },
    { storage, noBackgroundJobs: true },
  )
  await m.open()
  await m.createPartitions('c', 'id', 0, 1, config)
  return { m, storage, p: m.partition('c', 0)! as PartitionLogImpl }
}
