// kafka-streams-groups --delete against a real `topograph start` process over TCP, as Kafka's
// StreamsGroupCommand deletes: the streams groups are listed first; a group that is not one of them
// (unknown, or a consumer group) or is not Empty is refused with Kafka's message and never sent for
// deletion; the others are deleted, with --delete-all-internal-topics their internal topics after
// them. Groups print in Java HashMap order (the orders below are those Java iterates these keys in),
// and the exit code is 0 whatever failed.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Admin } from '../../src/clients/admin/index.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { WireClient } from '../server/wire-client.js'
import { runStreamsGroups as run, runStreamsGroupsProcess as runProcess } from '../testkit/cli.js'

const notFound = (g: string): string =>
  `* Group '${g}' could not be deleted due to: java.lang.IllegalArgumentException: Group '${g}' does not exist or is not a streams group.\n`
const notEmpty = (g: string): string =>
  `* Group '${g}' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: Streams group '${g}' is not EMPTY.\n`
const FAILED = '\nError: Deletion of some streams groups failed:\n'

let proc: TopographProcess
let server: string
let wire: WireClient
let admin: Admin
const members: StreamsMember[] = []

async function joinGroup(groupId: string, changelog?: string): Promise<StreamsMember> {
  const m = await StreamsMember.connect(proc.port, {
    groupId,
    memberId: `${groupId}-m`,
    processId: 'p',
    topology: simpleTopology(['orders'], changelog === undefined ? {} : { changelog }),
  })
  members.push(m)
  assert.ok(await m.untilActive(), `${groupId} got no tasks`)
  return m
}

/** An empty streams group: a member joins, then leaves. */
async function emptyGroup(groupId: string, changelog?: string): Promise<void> {
  const m = await joinGroup(groupId, changelog)
  const r = await m.leave()
  assert.equal(r.errorCode, 0)
}

async function streamsGroups(): Promise<string[]> {
  return (await admin.listGroups({ types: ['streams'] })).map((g) => `${g.groupId}:${g.groupState}`).sort()
}

const del = (...args: string[]) => run(['--bootstrap-server', server, '--delete', ...args])

before(async () => {
  proc = await startTopographProcess({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
  })
  server = `127.0.0.1:${proc.port}`
  wire = await WireClient.connect(proc.port)
  admin = Admin.create({ bootstrapServers: server, defaultApiTimeoutMs: 10_000 })
  const { body } = await wire.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: [{ name: 'orders', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 1000,
  })
  assert.equal(body.topics[0]!.errorCode, 0)
  await joinGroup('active')
  // A consumer group (offsets committed outside any generation): a group, but not a streams group.
  const commit = await wire.request<{ topics: { partitions: { errorCode: number }[] }[] }>(8, 8, {
    groupId: 'legacy',
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1,
    topics: [
      {
        name: 'orders',
        partitions: [
          { partitionIndex: 0, committedOffset: 3n, committedLeaderEpoch: -1, committedMetadata: null },
        ],
      },
    ],
  })
  assert.equal(commit.body.topics[0]!.partitions[0]!.errorCode, 0)
})

after(async () => {
  for (const m of members) m.close()
  wire?.close()
  await admin?.close()
  await proc?.stop()
})

describe('kafka-streams-groups --delete against a topograph process', { timeout: 180_000 }, () => {
  it('refuses unknown, consumer and non-empty groups without sending them; exit 0', async () => {
    const before = await streamsGroups()
    assert.deepEqual(before, ['active:Stable'])
    const r = await del('--group', 'active', '--group', 'ghost', '--group', 'legacy', '--group', 'ghost')
    assert.deepEqual(r, {
      code: 0,
      stdout: FAILED + notFound('ghost') + notFound('legacy') + notEmpty('active'),
      stderr: '',
    })
    // Nothing was deleted: the streams group is still there and the consumer group's offsets too.
    assert.deepEqual(await streamsGroups(), before)
    assert.deepEqual(
      (await admin.listStreamsGroupOffsets('legacy')).map((o) => `${o.topic}-${o.partition}=${o.offset}`),
      ['orders-0=3'],
    )
  })

  it('deletes the empty groups and reports the refused ones after them', async () => {
    await emptyGroup('idle')
    const r = await del('--group', 'idle', '--group', 'active', '--group', 'ghost')
    assert.deepEqual(r, {
      code: 0,
      stdout:
        FAILED +
        notFound('ghost') +
        notEmpty('active') +
        "\nThese streams groups were deleted successfully: 'idle'.\n",
      stderr: '',
    })
    assert.deepEqual(await streamsGroups(), ['active:Stable'])
    // Deleted: asking again, the group is no longer a streams group.
    assert.deepEqual(await del('--group', 'idle'), { code: 0, stdout: FAILED + notFound('idle'), stderr: '' })
  })

  it('only empty groups: the success line', async () => {
    await emptyGroup('spare')
    await emptyGroup('tidy')
    assert.deepEqual(await del('--group', 'tidy', '--group', 'spare', '--group', 'tidy'), {
      code: 0,
      stdout: "Deletion of requested streams groups ('tidy', 'spare') was successful.\n",
      stderr: '',
    })
    assert.deepEqual(await streamsGroups(), ['active:Stable'])
  })

  it('--all-groups: every streams group goes through the same checks', async () => {
    await emptyGroup('spare')
    assert.deepEqual(await streamsGroups(), ['active:Stable', 'spare:Empty'])
    assert.deepEqual(await del('--all-groups'), {
      code: 0,
      stdout: FAILED + notEmpty('active') + "\nThese streams groups were deleted successfully: 'spare'.\n",
      stderr: '',
    })
    assert.deepEqual(await streamsGroups(), ['active:Stable'])
  })

  it('--delete-all-internal-topics: only the deleted groups are described and lose their topics', async () => {
    await emptyGroup('tidy', 'tidy-counts-changelog')
    const changelogs = async () => (await admin.listTopics()).filter((t) => t.endsWith('-changelog'))
    assert.deepEqual(await changelogs(), ['tidy-counts-changelog'])
    const r = await del('--group', 'tidy', '--group', 'active', '--delete-all-internal-topics')
    assert.deepEqual(r, {
      code: 0,
      stdout:
        FAILED +
        notEmpty('active') +
        "\nThese streams groups were deleted successfully: 'tidy'.\n" +
        "Deletion of associated internal topics of the streams groups ('tidy') was successful.\n",
      stderr: '',
    })
    assert.deepEqual(await changelogs(), [])
    assert.deepEqual(await streamsGroups(), ['active:Stable'])
  })

  it('--delete-all-internal-topics when every group is refused: no topic is looked up or deleted', async () => {
    assert.deepEqual(await del('--group', 'active', '--group', 'ghost', '--delete-all-internal-topics'), {
      code: 0,
      stdout: FAILED + notFound('ghost') + notEmpty('active'),
      stderr: '',
    })
    assert.deepEqual(await streamsGroups(), ['active:Stable'])
  })

  it('the command as its own process: refused groups, exit 0', async () => {
    const r = await runProcess(['--bootstrap-server', server, '--delete', '--group', 'active'])
    assert.deepEqual(r, { code: 0, stdout: FAILED + notEmpty('active'), stderr: '' })
  })
})
