// The two KIP-1331 crash-safety invariants (the #22777 barrier design), checked between a running
// coordinator and the sqlite store of the topology description plugin:
//
// - no leak: every description the plugin holds belongs to a streams group whose stored epoch is not
//   −1, so the cleanup cycle, DeleteGroups or a later push will reclaim or replace it. A description
//   of a group that is gone, or whose stored epoch says "definitely nothing" (−1), is never reclaimed.
// - no loss: every streams group whose stored epoch is a real epoch (≥ 0) has exactly that epoch in
//   the plugin. Otherwise describe reports NOT_STORED and the group is never asked to push again.
//   (−2 is allowed anywhere: it re-solicits a push and stays delete-eligible.)
//
// crashAndRestart runs a scenario that kills a real `topograph start` process at a crash point and
// checks both invariants after an in-process restart on the same data.
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import Database from 'better-sqlite3'
import type { GroupCoordinatorService } from '../../src/coordinator/service/group-coordinator-service.js'
import { tempDataDir } from '../server/harness.js'
import {
  descriptionEpochs,
  type KipServer,
  type PluginFiles,
  pluginFiles,
  startKipProcess,
  startKipServer,
} from './kip1331.js'
import type { TopographProcess } from './topograph-process.js'

export interface InvariantReport {
  /** "group@epoch: why" for every description nothing will reclaim. */
  readonly leaks: string[]
  /** "group@epoch: why" for every stored epoch the plugin does not hold. */
  readonly losses: string[]
}

/** The plugin's rows (group → epoch) from the sqlite plugin's file. */
export function pluginRows(dbPath: string): Map<string, number> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true })
  try {
    const rows = db.prepare('SELECT group_id, topology_epoch FROM topology_descriptions').all() as {
      group_id: string
      topology_epoch: number
    }[]
    return new Map(rows.map((r) => [r.group_id, r.topology_epoch]))
  } finally {
    db.close()
  }
}

export async function checkKip1331Invariants(
  service: GroupCoordinatorService,
  pluginDbPath: string,
): Promise<InvariantReport> {
  const held = pluginRows(pluginDbPath)
  const listed = await service.listGroups([], ['streams'])
  const groups = new Set([...listed.groups.map((g) => g.groupId), ...held.keys()])
  const leaks: string[] = []
  const losses: string[] = []
  for (const groupId of groups) {
    const epochs = await descriptionEpochs(service, groupId)
    const inPlugin = held.get(groupId)
    if (inPlugin !== undefined) {
      if (epochs === undefined) leaks.push(`${groupId}@${inPlugin}: the group is gone`)
      else if (epochs.stored === -1)
        leaks.push(`${groupId}@${inPlugin}: the coordinator records -1 (nothing stored)`)
    }
    if (epochs !== undefined && epochs.stored >= 0 && inPlugin !== epochs.stored) {
      losses.push(`${groupId}@${epochs.stored}: the plugin holds ${inPlugin ?? 'nothing'}`)
    }
  }
  return { leaks, losses }
}

/**
 * Runs `crash` against a child process (sqlite plugin backend, `extra` settings) that must then die
 * by SIGKILL, restarts in-process on the same data with the same settings, checks the invariants,
 * runs `afterRestart`, and checks them again.
 */
export async function crashAndRestart(
  name: string,
  crash: (proc: TopographProcess, plugin: PluginFiles, opened: { close(): void }[]) => Promise<void>,
  afterRestart: (kip: KipServer, plugin: PluginFiles, opened: { close(): void }[]) => Promise<void>,
  extra: Record<string, string> = {},
): Promise<void> {
  const dataDir = tempDataDir()
  const plugin = pluginFiles('sqlite')
  const dbPath = plugin.configs['topology.description.sqlite.path']
  const opened: { close(): void }[] = []
  let proc: TopographProcess | undefined
  let kip: KipServer | undefined
  try {
    proc = await startKipProcess(dataDir, plugin, extra)
    await crash(proc, plugin, opened)
    const exit = await Promise.race([
      proc.exited,
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${name}: no crash`)), 15_000)),
    ])
    assert.equal(exit.signal, 'SIGKILL', `${name}: the process died by SIGKILL at the crash point`)
    for (const c of opened.splice(0)) c.close()
    plugin.control({})
    kip = await startKipServer({ dataDir, pluginFiles: plugin, overrides: { ...extra } })
    const report = await checkKip1331Invariants(kip.service, dbPath)
    assert.deepEqual(report, { leaks: [], losses: [] }, `${name}: right after the restart`)
    await afterRestart(kip, plugin, opened)
    const final = await checkKip1331Invariants(kip.service, dbPath)
    assert.deepEqual(final, { leaks: [], losses: [] }, `${name}: after convergence`)
  } finally {
    for (const c of opened) c.close()
    await proc?.kill()
    await kip?.stop(true)
    rmSync(dataDir, { recursive: true, force: true })
    plugin.remove()
  }
}
