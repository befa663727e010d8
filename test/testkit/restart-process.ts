/**
 * Shared by the restart end-to-end tests (SQLite restart, PostgreSQL storage): a real
 * `topograph start` process with quick streams settings, and the wire requests those tests make to
 * see what survived (describe a streams group until it is stable, commit and fetch offsets of the
 * topic `in`).
 */
import assert from 'node:assert/strict'
import type { StreamsGroupDescribeResponse } from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import type { StreamsMember } from '../helpers/streams-member.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import type { WireClient } from '../server/wire-client.js'

// biome-ignore lint/suspicious/noExplicitAny: test access to decoded bodies
type AnyBody = any

/** `topograph start` on `dataDir` with streams settings quick enough for a test (and `extra`). */
export function startRestartableProcess(
  dataDir: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<TopographProcess> {
  return startTopographProcess({
    'data.dir': dataDir,
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
    'group.streams.session.timeout.ms': '10000',
    'group.streams.min.session.timeout.ms': '1000',
    'group.streams.heartbeat.interval.ms': '100',
    'group.streams.min.heartbeat.interval.ms': '100',
    ...extra,
  })
}

export async function describeGroup(c: WireClient, groupId: string) {
  const { body } = await c.request<StreamsGroupDescribeResponse>(89, 1, {
    groupIds: [groupId],
    includeAuthorizedOperations: false,
    includeTopologyDescription: false,
  })
  return body.groups[0]
}

/** Heartbeats every member until the group is Stable with every member at the group epoch. */
export async function converge(c: WireClient, groupId: string, group: readonly StreamsMember[]) {
  for (let i = 0; i < 30; i++) {
    for (const m of group) assert.equal((await m.heartbeat()).errorCode, 0, m.last?.errorMessage ?? '')
    const d = await describeGroup(c, groupId)
    if (d.groupState === 'Stable' && group.every((m) => m.epoch === d.groupEpoch)) return d
  }
  assert.fail(`${groupId} did not converge`)
}

/** OffsetCommit v9 of one partition of `in` (metadata `o<offset>`). */
export const commit = (
  c: WireClient,
  groupId: string,
  partition: number,
  offset: bigint,
  memberId = '',
  epoch = -1,
) =>
  c.request<AnyBody>(8, 9, {
    groupId,
    generationIdOrMemberEpoch: epoch,
    memberId,
    groupInstanceId: null,
    topics: [
      {
        name: 'in',
        partitions: [
          {
            partitionIndex: partition,
            committedOffset: offset,
            committedLeaderEpoch: -1,
            committedMetadata: `o${offset}`,
          },
        ],
      },
    ],
  })
