// The two KIP-1331 crash-safety invariants (the #22777 barrier design), checked between a running
// coordinator and the sqlite store of the topology description plugin:
//
// - no leak: every description the plugin holds belongs to a streams group whose stored epoch is not
//   −1, so the cleanup cycle, DeleteGroups or a later push will reclaim or replace it. A description
//   of a group that is gone, or whose stored epoch says "definitely nothing" (−1), is never reclaimed.
// - no loss: every streams group whose stored epoch is a real epoch (≥ 0) has exactly that epoch in
//   the plugin. Otherwise describe reports NOT_STORED and the group is never asked to push again.
//   (−2 is allowed anywhere: it re-solicits a push and stays delete-eligible.)
import Database from 'better-sqlite3'
import type { GroupCoordinatorService } from '../../src/coordinator/service/group-coordinator-service.js'
import { descriptionEpochs } from './kip1331.js'

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
