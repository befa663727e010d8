// kafka-streams-groups offsets against a real `topograph start` process over TCP: --describe
// --offsets (lag from the listed end offsets), every --reset-offsets scenario (dry run and
// execute, export, --from-file round trip, internal topics, group-state rule), --delete-offsets,
// and option validation (messages, help, exit codes). Topograph's logs are empty, so end offsets
// are 0: lags are negative and requested offsets above 0 are brought down to 0 with Kafka's WARN
// lines. A second part runs the command against a fake broker whose logs are not empty.
import assert from 'node:assert/strict'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Admin } from '../../src/clients/admin/index.js'
import type { OffsetCommitRequest } from '../../src/protocol/generated/messages/OffsetCommitRequest.js'
import {
  createStreamsGroupDescribeResponseAssignment,
  createStreamsGroupDescribeResponseDescribedGroup,
  createStreamsGroupDescribeResponseMember,
  createStreamsGroupDescribeResponseSubtopology,
  createStreamsGroupDescribeResponseTopology,
} from '../../src/protocol/generated/messages/StreamsGroupDescribeResponse.js'
import { FakeBroker } from '../clients/fake-broker.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { startTopographProcess, type TopographProcess } from '../helpers/topograph-process.js'
import { WireClient } from '../server/wire-client.js'
import { runStreamsGroups as run, runStreamsGroupsProcess as runProcess } from '../testkit/cli.js'

const HELP = readFileSync('test/fixtures/cli/kafka-streams-groups-help.txt', 'utf8')
const p = (s: string | number, w: number): string => String(s).padEnd(w)
/** Kafka's reset table: `%n%-30s %-30s %-10s %-15s` per row, then a newline. */
const resetTable = (rows: Array<[string, string, number, number]>): string =>
  [['GROUP', 'TOPIC', 'PARTITION', 'NEW-OFFSET'] as const, ...rows]
    .map(([g, t, part, o]) => `\n${p(g, 30)} ${p(t, 30)} ${p(part, 10)} ${p(o, 15)}`)
    .join('') + '\n'
const HEADER_ONLY = resetTable([])
const warnLine = (offset: number | bigint, tp: string, direction: 'higher' | 'lower', to: number): RegExp =>
  new RegExp(
    `^\\[\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d,\\d{3}\\] WARN New offset \\(${offset}\\) is ${direction} than ${
      direction === 'higher' ? 'latest' : 'earliest'
    } offset for topic partition ${tp}\\. Value will be set to ${to}\\. \\(org\\.apache\\.kafka\\.tools\\.GroupOffsetsResetter\\)$`,
  )

let proc: TopographProcess
let server: string
let wire: WireClient
let admin: Admin
let tmp: string
const members: StreamsMember[] = []

async function createTopics(...topics: Array<[string, number]>): Promise<void> {
  const { body } = await wire.request<{ topics: { errorCode: number }[] }>(19, 7, {
    topics: topics.map(([name, numPartitions]) => ({
      name,
      numPartitions,
      replicationFactor: 1,
      assignments: [],
      configs: [],
    })),
    timeoutMs: 1000,
  })
  assert.deepEqual(
    body.topics.map((t) => t.errorCode),
    topics.map(() => 0),
  )
}

async function joinGroup(
  groupId: string,
  topology: ReturnType<typeof simpleTopology>,
): Promise<StreamsMember> {
  const m = await StreamsMember.connect(proc.port, {
    groupId,
    memberId: `${groupId}-m`,
    processId: 'p',
    topology,
  })
  members.push(m)
  assert.ok(await m.untilActive(), `${groupId} got no tasks`)
  return m
}

/** A member's commit (member id and epoch), as a streams client commits. */
async function memberCommit(m: StreamsMember, offsets: Array<[string, number, bigint]>): Promise<void> {
  const { body } = await wire.request<{ topics: { partitions: { errorCode: number }[] }[] }>(8, 9, {
    groupId: m.groupId,
    generationIdOrMemberEpoch: m.epoch,
    memberId: m.memberId,
    groupInstanceId: null,
    topics: [...new Set(offsets.map(([t]) => t))].map((name) => ({
      name,
      partitions: offsets
        .filter(([t]) => t === name)
        .map(([, partitionIndex, committedOffset]) => ({
          partitionIndex,
          committedOffset,
          committedLeaderEpoch: -1,
          committedMetadata: null,
        })),
    })),
  })
  assert.ok(body.topics.every((t) => t.partitions.every((x) => x.errorCode === 0)))
}

async function committed(groupId: string): Promise<string[]> {
  return (await admin.listStreamsGroupOffsets(groupId)).map((o) => `${o.topic}-${o.partition}=${o.offset}`)
}

/** Kafka's test resets the group's offsets between scenarios with the admin client; so does this. */
async function restore(groupId = 'shop'): Promise<void> {
  await admin
    .alterStreamsGroupOffsets(groupId, [
      { topic: 'orders', partition: 0, offset: 10n },
      { topic: 'orders', partition: 1, offset: 20n },
      { topic: 'payments', partition: 2, offset: 5n },
    ])
    .all()
}

const reset = (...args: string[]) => run(['--bootstrap-server', server, '--reset-offsets', ...args])
const ORIGINAL = ['orders-0=10', 'orders-1=20', 'payments-2=5']

before(async () => {
  proc = await startTopographProcess({
    'coordinator.storage': 'memory',
    'group.streams.initial.rebalance.delay.ms': '0',
    'group.streams.assignment.interval.ms': '0',
  })
  server = `127.0.0.1:${proc.port}`
  wire = await WireClient.connect(proc.port)
  admin = Admin.create({ bootstrapServers: server, defaultApiTimeoutMs: 10_000 })
  tmp = mkdtempSync(join(tmpdir(), 'ksg-offsets-'))
  await createTopics(['orders', 3], ['payments', 3])
  const m = await joinGroup(
    'shop',
    simpleTopology(['orders', 'payments'], { changelog: 'shop-counts-changelog' }),
  )
  await memberCommit(m, [
    ['orders', 0, 10n],
    ['orders', 1, 20n],
    ['payments', 2, 5n],
  ])
})

after(async () => {
  for (const m of members) m.close()
  wire?.close()
  await admin?.close()
  await proc?.stop()
  if (tmp !== undefined) rmSync(tmp, { recursive: true, force: true })
})

describe('against a topograph process, group Stable', { timeout: 120_000 }, () => {
  it('--describe (default --offsets): GROUP TOPIC PARTITION OFFSET-LAG, lag = log end (0) − committed', async () => {
    const r = await run(['--bootstrap-server', server, '--describe', '--group', 'shop'])
    assert.equal(r.code, 0)
    assert.equal(r.stderr, '')
    // Kafka prints its HashMap of partitions: this is the order Java iterates these six keys.
    assert.equal(
      r.stdout,
      'GROUP           TOPIC           PARTITION  OFFSET-LAG\n' +
        'shop            payments        0          0\n' +
        'shop            payments        2          -5\n' +
        'shop            payments        1          0\n' +
        'shop            orders          0          -10\n' +
        'shop            orders          1          -20\n' +
        'shop            orders          2          0\n',
    )
    const same = await run(['--bootstrap-server', server, '--describe', '--offsets', '--group', 'shop'])
    assert.equal(same.stdout, r.stdout)
  })

  it('--describe --offsets --verbose adds CURRENT-OFFSET, LEADER-EPOCH and LOG-END-OFFSET', async () => {
    const r = await run([
      '--bootstrap-server',
      server,
      '--describe',
      '--offsets',
      '--verbose',
      '--group',
      'shop',
    ])
    assert.equal(r.code, 0)
    const row = (c: Array<string | number>) =>
      `${p(c[0]!, 15)} ${p(c[1]!, 15)} ${p(c[2]!, 10)} ${p(c[3]!, 15)} ${p(c[4]!, 15)} ${p(c[5]!, 15)} ${p(c[6]!, 15)}\n`
    assert.equal(
      r.stdout,
      row(['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LEADER-EPOCH', 'LOG-END-OFFSET', 'OFFSET-LAG']) +
        row(['shop', 'payments', 0, '-', '-', 0, 0]) +
        row(['shop', 'payments', 2, 5, '-', 0, -5]) +
        row(['shop', 'payments', 1, '-', '-', 0, 0]) +
        row(['shop', 'orders', 0, 10, '-', 0, -10]) +
        row(['shop', 'orders', 1, 20, '-', 0, -20]) +
        row(['shop', 'orders', 2, '-', '-', 0, 0]),
    )
  })

  it('--reset-offsets on an active group: Kafka error, an empty table, nothing committed, exit 0', async () => {
    for (const mode of ['--dry-run', '--execute']) {
      const r = await reset('--group', 'shop', '--all-input-topics', '--to-earliest', mode)
      assert.equal(r.code, 0)
      assert.equal(
        r.stdout,
        "\nError: Assignments can only be reset if the group 'shop' is inactive, but the current state is Stable.\n" +
          HEADER_ONLY,
      )
    }
    assert.deepEqual(await committed('shop'), ORIGINAL)
  })

  it('--delete-offsets on an active group: GROUP_SUBSCRIBED_TO_TOPIC per partition, exit 0', async () => {
    const r = await run([
      '--bootstrap-server',
      server,
      '--delete-offsets',
      '--group',
      'shop',
      '--input-topic',
      'orders:1',
    ])
    assert.equal(r.code, 0)
    assert.equal(
      r.stdout,
      '\nError: Encountered some partition-level error, see the follow-up details.\n' +
        '\nTOPIC           PARTITION  STATUS         ' +
        '\norders          1          Error: org.apache.kafka.common.errors.GroupSubscribedToTopicException: Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it.\n',
    )
    assert.deepEqual(await committed('shop'), ORIGINAL)
  })
})

describe('against a topograph process, group Empty', { timeout: 180_000 }, () => {
  before(async () => {
    await members[0]!.leave()
  })

  // Its offsets stay committed (ORIGINAL); Kafka's tool prints no table for a group without members.
  it('--describe [--offsets] [--verbose] prints nothing for a group without members', async () => {
    assert.deepEqual(await committed('shop'), ORIGINAL)
    for (const extra of [[], ['--offsets'], ['--offsets', '--verbose']]) {
      const r = await run(['--bootstrap-server', server, '--describe', '--group', 'shop', ...extra])
      assert.deepEqual(r, { code: 0, stdout: '', stderr: '' }, extra.join(' '))
    }
  })

  it('--to-offset: dry run plans, execute commits; offsets above the log end become 0 with WARN lines', async () => {
    const expected = resetTable([
      ['shop', 'payments', 2, 0],
      ['shop', 'orders', 0, 0],
      ['shop', 'orders', 1, 0],
    ])
    const dry = await reset('--group', 'shop', '--all-input-topics', '--to-offset', '5', '--dry-run')
    assert.equal(dry.code, 0)
    assert.equal(dry.stdout, expected)
    const warns = dry.stderr.trimEnd().split('\n')
    assert.equal(warns.length, 3)
    assert.match(warns[0]!, warnLine(5, 'payments-2', 'higher', 0))
    assert.match(warns[1]!, warnLine(5, 'orders-0', 'higher', 0))
    assert.match(warns[2]!, warnLine(5, 'orders-1', 'higher', 0))
    assert.deepEqual(await committed('shop'), ORIGINAL)
    const exec = await reset('--group', 'shop', '--all-input-topics', '--to-offset', '5', '--execute')
    assert.equal(exec.stdout, expected)
    assert.deepEqual(await committed('shop'), ['orders-0=0', 'orders-1=0', 'payments-2=0'])
    await restore()
    // Below the log start: the start offset, with Kafka's other WARN line.
    const low = await reset('--group', 'shop', '--input-topic', 'orders:1', '--to-offset', '-30', '--dry-run')
    assert.equal(low.stdout, resetTable([['shop', 'orders', 1, 0]]))
    assert.match(low.stderr.trimEnd(), warnLine(-30, 'orders-1', 'lower', 0))
  })

  it('--to-earliest and --to-latest on chosen partitions (topic:p,q and several --input-topic)', async () => {
    const args = ['--group', 'shop', '--input-topic', 'orders:0,1', '--input-topic', 'payments:2']
    const expected = resetTable([
      ['shop', 'payments', 2, 0],
      ['shop', 'orders', 0, 0],
      ['shop', 'orders', 1, 0],
    ])
    for (const scenario of ['--to-earliest', '--to-latest']) {
      const dry = await reset(...args, scenario, '--dry-run')
      assert.deepEqual(dry, { code: 0, stdout: expected, stderr: '' })
      assert.deepEqual(await committed('shop'), ORIGINAL)
      const exec = await reset(...args, scenario, '--execute')
      assert.equal(exec.stdout, expected)
      assert.deepEqual(await committed('shop'), ['orders-0=0', 'orders-1=0', 'payments-2=0'])
      await restore()
    }
  })

  it('--to-current keeps the committed offsets; --shift-by moves them (and clamps to the log end)', async () => {
    const current = await reset('--group', 'shop', '--all-input-topics', '--to-current', '--execute')
    assert.deepEqual(current, {
      code: 0,
      stdout: resetTable([
        ['shop', 'payments', 2, 5],
        ['shop', 'orders', 0, 10],
        ['shop', 'orders', 1, 20],
      ]),
      stderr: '',
    })
    assert.deepEqual(await committed('shop'), ORIGINAL)
    const shift = await reset(
      '--group',
      'shop',
      '--input-topic',
      'orders:0,1',
      '--shift-by',
      '-3',
      '--dry-run',
    )
    assert.equal(
      shift.stdout,
      resetTable([
        ['shop', 'orders', 0, 0],
        ['shop', 'orders', 1, 0],
      ]),
    )
    const warns = shift.stderr.trimEnd().split('\n')
    assert.match(warns[0]!, warnLine(7, 'orders-0', 'higher', 0))
    assert.match(warns[1]!, warnLine(17, 'orders-1', 'higher', 0))
  })

  it("--to-datetime and --by-duration: empty partitions fall back to the log end with Kafka's Warn line", async () => {
    const warn = (p: number, t: string) =>
      `\nWarn: Partition ${p} from topic ${t} is empty. Falling back to latest known offset.\n`
    const expected =
      warn(2, 'payments') +
      warn(0, 'orders') +
      warn(1, 'orders') +
      resetTable([
        ['shop', 'payments', 2, 0],
        ['shop', 'orders', 0, 0],
        ['shop', 'orders', 1, 0],
      ])
    for (const scenario of [
      ['--to-datetime', '2024-01-01T00:00:00.000'],
      ['--to-datetime', '2024-01-01T00:00:00.000+02:00'],
      ['--by-duration', 'PT5M'],
    ]) {
      const dry = await reset('--group', 'shop', '--all-input-topics', ...scenario, '--dry-run')
      assert.deepEqual(dry, { code: 0, stdout: expected, stderr: '' }, scenario.join(' '))
    }
    assert.deepEqual(await committed('shop'), ORIGINAL)
  })

  it("--export writes Kafka's CSV; --from-file reads it back (one group: topic,partition,offset)", async () => {
    const exported = await reset(
      '--group',
      'shop',
      '--all-input-topics',
      '--to-current',
      '--dry-run',
      '--export',
    )
    assert.deepEqual(exported, { code: 0, stdout: 'payments,2,5\norders,0,10\norders,1,20\n\n', stderr: '' })
    const file = join(tmp, 'plan.csv')
    writeFileSync(file, exported.stdout)
    const imported = await reset('--group', 'shop', '--from-file', file, '--dry-run')
    assert.equal(
      imported.stdout,
      resetTable([
        ['shop', 'payments', 2, 0],
        ['shop', 'orders', 0, 0],
        ['shop', 'orders', 1, 0],
      ]),
    )
    // The file's offsets were read: each is above the log end (0) and named in a WARN line.
    const warns = imported.stderr.trimEnd().split('\n')
    assert.match(warns[0]!, warnLine(5, 'payments-2', 'higher', 0))
    assert.match(warns[1]!, warnLine(10, 'orders-0', 'higher', 0))
    assert.match(warns[2]!, warnLine(20, 'orders-1', 'higher', 0))
    const exec = await reset('--group', 'shop', '--from-file', file, '--execute')
    assert.equal(exec.code, 0)
    assert.deepEqual(await committed('shop'), ['orders-0=0', 'orders-1=0', 'payments-2=0'])
    await restore()
  })

  it("--export with two groups has the group column; --from-file takes each group's lines", async () => {
    const other = await joinGroup(
      'shop2',
      simpleTopology(['payments'], { changelog: 'shop2-store-changelog' }),
    )
    await memberCommit(other, [['payments', 1, 7n]])
    await other.leave()
    const exported = await reset(
      '--group',
      'shop',
      '--group',
      'shop2',
      '--all-input-topics',
      '--to-current',
      '--dry-run',
      '--export',
    )
    // Groups in Java's String hash order, partitions in TopicPartition hash order.
    assert.equal(
      exported.stdout,
      'shop,payments,2,5\nshop,orders,0,10\nshop,orders,1,20\nshop2,payments,1,7\n\n',
    )
    const file = join(tmp, 'plan-groups.csv')
    writeFileSync(file, 'shop2,payments,1,0\nshop,orders,0,0\n')
    const imported = await reset('--group', 'shop', '--group', 'shop2', '--from-file', file, '--execute')
    assert.deepEqual(imported, {
      code: 0,
      stdout: resetTable([
        ['shop', 'orders', 0, 0],
        ['shop2', 'payments', 1, 0],
      ]),
      stderr: '',
    })
    assert.deepEqual(await committed('shop'), ['orders-0=0', 'orders-1=20', 'payments-2=5'])
    assert.deepEqual(await committed('shop2'), ['payments-1=0'])
    // A group the file does not mention: Kafka's error, nothing planned for it.
    const none = await reset('--group', 'nobody', '--from-file', file, '--dry-run')
    assert.deepEqual(none, {
      code: 0,
      stdout: `\nError: No reset plan for group nobody found.\n${HEADER_ONLY}`,
      stderr: '',
    })
    await restore()
  })

  it("--execute deletes --delete-internal-topic topics, or all of the group's with --delete-all-internal-topics", async () => {
    const topics = async () => (await admin.listTopics()).filter((t) => t.endsWith('-changelog'))
    assert.deepEqual(await topics(), ['shop-counts-changelog', 'shop2-store-changelog'])
    const dry = await reset('--group', 'shop2', '--all-input-topics', '--to-current', '--dry-run')
    assert.equal(dry.code, 0)
    assert.deepEqual(await topics(), ['shop-counts-changelog', 'shop2-store-changelog'])
    const named = await reset(
      '--group',
      'shop',
      '--all-input-topics',
      '--to-current',
      '--execute',
      '--delete-internal-topic',
      'shop-counts-changelog',
    )
    assert.equal(named.code, 0)
    assert.deepEqual(await topics(), ['shop2-store-changelog'])
    const all = await reset(
      '--group',
      'shop2',
      '--all-input-topics',
      '--to-current',
      '--execute',
      '--delete-all-internal-topics',
    )
    assert.deepEqual(all, { code: 0, stdout: resetTable([['shop2', 'payments', 1, 0]]), stderr: '' })
    assert.deepEqual(await topics(), [])
    // Deleting a topic that is gone: Kafka's message, the reset still done.
    const gone = await reset(
      '--group',
      'shop',
      '--all-input-topics',
      '--to-current',
      '--execute',
      '--delete-internal-topic',
      'shop-counts-changelog',
    )
    assert.equal(
      gone.stdout,
      "\nError: Deleting internal topics for group 'shop' failed because the topics do not exist.\n" +
        resetTable([
          ['shop', 'payments', 2, 5],
          ['shop', 'orders', 0, 10],
          ['shop', 'orders', 1, 20],
        ]),
    )
  })

  it('scope errors: topics outside the group, unknown partitions and groups, bad topic args', async () => {
    // orders-2 has no committed offset: the group does not hold every named partition.
    const outside = await reset('--group', 'shop', '--input-topic', 'orders', '--to-earliest', '--dry-run')
    assert.deepEqual(outside, {
      code: 0,
      stdout: `\nError: One or more topics are not part of the group 'shop'.\n${HEADER_ONLY}`,
      stderr: '',
    })
    const ghost = await reset('--group', 'ghost', '--input-topic', 'orders:0', '--to-earliest', '--dry-run')
    assert.equal(
      ghost.stdout,
      `\nError: One or more topics are not part of the group 'ghost'.\n${HEADER_ONLY}`,
    )
    const ghostAll = await reset('--group', 'ghost', '--all-input-topics', '--to-earliest', '--dry-run')
    assert.equal(ghostAll.code, 1)
    assert.equal(
      ghostAll.stdout,
      '\nError: Executing streams group command failed due to java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.GroupIdNotFoundException: Group ghost not found.\n',
    )
    const noPartition = await reset(
      '--group',
      'shop',
      '--input-topic',
      'orders:7',
      '--to-earliest',
      '--execute',
    )
    assert.equal(noPartition.code, 1)
    assert.equal(
      noPartition.stdout,
      '\nError: Executing streams group command failed due to The partitions "orders-7" do not exist\n',
    )
    const noTopic = await reset('--group', 'shop', '--input-topic', 'nope', '--to-earliest', '--execute')
    assert.equal(noTopic.code, 1)
    assert.equal(
      noTopic.stdout,
      '\nError: Executing streams group command failed due to This server does not host this topic-partition.\n',
    )
    const badArg = await reset('--group', 'shop', '--input-topic', 'orders:', '--to-earliest', '--dry-run')
    assert.equal(badArg.code, 1)
    assert.equal(badArg.stdout, '')
    assert.equal(badArg.stderr, "Invalid topic arg 'orders:', expected topic name and partitions\n" + HELP)
    const badPartition = await reset(
      '--group',
      'shop',
      '--input-topic',
      'orders:0,x',
      '--to-earliest',
      '--dry-run',
    )
    assert.ok(badPartition.stderr.startsWith("Invalid partition 'x' specified in topic arg 'orders:0,x''\n"))
    assert.deepEqual(await committed('shop'), ORIGINAL)
  })

  it('scenario errors: missing scenario or scope, bad datetime and duration, unreadable file', async () => {
    const noScenario = await reset('--group', 'shop', '--all-input-topics', '--dry-run')
    assert.equal(noScenario.code, 1)
    assert.equal(
      noScenario.stderr,
      "Option '[reset-offsets]' requires one of the following scenarios: [[to-offset], [shift-by], [to-datetime], [by-duration], [to-earliest], [to-latest], [to-current], [from-file]]\n" +
        HELP,
    )
    const noScope = await reset('--group', 'shop', '--to-earliest', '--dry-run')
    assert.equal(noScope.code, 1)
    assert.equal(
      noScope.stderr,
      'One of the reset scopes should be defined: --all-input-topics, --input-topic.\n' + HELP,
    )
    const badDate = await reset(
      '--group',
      'shop',
      '--all-input-topics',
      '--to-datetime',
      '2024-01-01T00:00:00',
      '--dry-run',
    )
    assert.equal(badDate.code, 1)
    assert.equal(
      badDate.stdout,
      '\nError: Executing streams group command failed due to java.text.ParseException: Unparseable date: "2024-01-01T00:00:00Z"\n',
    )
    const noT = await reset(
      '--group',
      'shop',
      '--all-input-topics',
      '--to-datetime',
      '2024-01-01',
      '--dry-run',
    )
    assert.equal(
      noT.stdout,
      "\nError: Executing streams group command failed due to java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 format\n",
    )
    const badDuration = await reset(
      '--group',
      'shop',
      '--all-input-topics',
      '--by-duration',
      'P1W',
      '--dry-run',
    )
    assert.equal(
      badDuration.stdout,
      '\nError: Executing streams group command failed due to Text cannot be parsed to a Duration\n',
    )
    const noFile = await reset('--group', 'shop', '--from-file', join(tmp, 'none.csv'), '--dry-run')
    assert.equal(
      noFile.stdout,
      `\nError: Executing streams group command failed due to java.nio.file.NoSuchFileException: ${join(tmp, 'none.csv')}\n`,
    )
    assert.deepEqual(await committed('shop'), ORIGINAL)
  })

  it('--delete-offsets: per-partition table, a bare unknown topic as partition -, then every input topic', async () => {
    const r = await run([
      '--bootstrap-server',
      server,
      '--delete-offsets',
      '--group',
      'shop',
      '--input-topic',
      'orders:0',
      '--input-topic',
      'nope',
    ])
    assert.deepEqual(r, {
      code: 0,
      stdout:
        'Request succeeded for deleting offsets from group shop.\n' +
        '\nTOPIC           PARTITION  STATUS         ' +
        '\nnope            -          Error: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This server does not host this topic-partition.' +
        '\norders          0          Successful     \n',
      stderr: '',
    })
    assert.deepEqual(await committed('shop'), ['orders-1=20', 'payments-2=5'])
    const rest = await run([
      '--bootstrap-server',
      server,
      '--delete-offsets',
      '--group',
      'shop',
      '--all-input-topics',
    ])
    assert.equal(
      rest.stdout,
      'Request succeeded for deleting offsets from group shop.\n' +
        '\nTOPIC           PARTITION  STATUS         ' +
        '\norders          1          Successful     ' +
        '\npayments        2          Successful     \n',
    )
    assert.deepEqual(await committed('shop'), [])
    const ghost = await run([
      '--bootstrap-server',
      server,
      '--delete-offsets',
      '--group',
      'ghost',
      '--input-topic',
      'orders:1,2',
    ])
    assert.deepEqual(ghost, {
      code: 0,
      stdout:
        '\nError: The group id does not exist.\n' +
        '\nTOPIC           PARTITION  STATUS         ' +
        '\norders          1          Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.' +
        '\norders          2          Error: org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n',
      stderr: '',
    })
    await restore()
  })

  it('--delete --delete-all-internal-topics deletes the group, then its inferred internal topics', async () => {
    const topology = simpleTopology(['payments'], { changelog: 'shop3-agg-changelog' })
    topology.subtopologies[0]!.stateChangelogTopics.push({
      name: 'other-changelog',
      partitions: 0,
      replicationFactor: 0,
      topicConfigs: [],
    })
    const m = await joinGroup('shop3', topology)
    await m.leave()
    const changelogs = async () => (await admin.listTopics()).filter((t) => t.endsWith('-changelog'))
    assert.deepEqual(await changelogs(), ['other-changelog', 'shop3-agg-changelog'])
    const r = await run([
      '--bootstrap-server',
      server,
      '--delete',
      '--group',
      'shop3',
      '--delete-all-internal-topics',
    ])
    assert.deepEqual(r, {
      code: 0,
      stdout:
        "\nError: The internal topic 'other-changelog' is not inferred as internal and thus will not be deleted with the group 'shop3'.\n" +
        "Deletion of requested streams groups ('shop3') was successful.\n" +
        "Deletion of associated internal topics of the streams groups ('shop3') was successful.\n",
      stderr: '',
    })
    assert.deepEqual(await changelogs(), ['other-changelog'])
  })

  it('the command as its own process: --reset-offsets --execute prints the table and exits 0', async () => {
    const r = await runProcess([
      '--bootstrap-server',
      server,
      '--reset-offsets',
      '--group',
      'shop',
      '--input-topic',
      'payments:2',
      '--to-earliest',
      '--execute',
    ])
    assert.deepEqual(r, { code: 0, stdout: resetTable([['shop', 'payments', 2, 0]]), stderr: '' })
    assert.deepEqual(await committed('shop'), ['orders-0=10', 'orders-1=20', 'payments-2=0'])
  })
})

describe('option validation (stderr, exit 1)', () => {
  const B = ['--bootstrap-server', 'h:1']
  const cases: Array<[string[], string, boolean]> = [
    [
      [...B, '--reset-offsets', '--group', 'g', '--all-input-topics', '--to-earliest'],
      'Option [reset-offsets] takes the option: [execute] or [dry-run]',
      true,
    ],
    [
      [...B, '--reset-offsets', '--group', 'g', '--to-earliest', '--dry-run', '--execute'],
      'Option [reset-offsets] only accepts one of [execute] and [dry-run]',
      true,
    ],
    [
      [...B, '--reset-offsets', '--dry-run', '--to-offset', '5'],
      'Option [reset-offsets] takes one of these options: [all-groups], [group]',
      true,
    ],
    [
      [...B, '--reset-offsets', '--group', 'g', '--dry-run', '--to-earliest', '--to-latest'],
      'Option "[to-earliest]" can\'t be used with option "[to-latest]"',
      true,
    ],
    [
      [...B, '--reset-offsets', '--group', 'g', '--dry-run', '--to-offset', '1', '--shift-by', '2'],
      'Option "[to-offset]" can\'t be used with option "[shift-by]"',
      true,
    ],
    [
      [
        ...B,
        '--reset-offsets',
        '--group',
        'g',
        '--dry-run',
        '--to-offset',
        '5',
        '--delete-all-internal-topics',
      ],
      'Option [delete-all-internal-topics] takes [execute] when [reset-offsets] is used.',
      true,
    ],
    [
      [
        ...B,
        '--reset-offsets',
        '--group',
        'g',
        '--dry-run',
        '--to-offset',
        '5',
        '--delete-internal-topic',
        't',
      ],
      'Option [delete-internal-topic] takes [reset-offsets] when [execute] is used.',
      true,
    ],
    [
      [...B, '--list', '--delete-all-internal-topics'],
      'Option [delete-all-internal-topics] takes one of these options: [delete], [reset-offsets]',
      true,
    ],
    [[...B, '--list', '--execute'], 'Only Option [reset-offsets] accepts [execute] or [dry-run]', true],
    [
      [...B, '--delete-offsets', '--group', 'g'],
      'Option [delete-offsets] takes the [group] and one of these options: [all-input-topics], [input-topic]',
      true,
    ],
    [
      [...B, '--delete-offsets', '--input-topic', 't'],
      'Option [delete-offsets] takes the [group] and one of these options: [all-input-topics], [input-topic]',
      true,
    ],
    [
      [...B, '--delete-offsets', '--group', 'a', '--group', 'b', '--input-topic', 't'],
      'Option [delete-offsets] supports only one [group] at a time, but found: [a, b]',
      true,
    ],
    [
      [...B, '--delete', '--group', 'g', '--input-topic', 't'],
      'Kafka Streams does not support topic-specific offset deletion from a streams group.',
      true,
    ],
    [
      [...B, '--describe', '--group', 'g', '--input-topic', 't'],
      'Option "[input-topic]" can\'t be used with option "[describe]"',
      true,
    ],
    [
      [...B, '--reset-offsets', '--group', 'g', '--dry-run', '--to-offset', 'abc'],
      "Cannot parse argument 'abc' of option to-offset",
      true,
    ],
    [
      [...B, '--reset-offsets', '--group', 'g', '--dry-run', '--shift-by', '1', '--shift-by', '2'],
      'Found multiple arguments for option shift-by, but you asked for only one',
      true,
    ],
    [[...B, '--list', '--timeout', 'soon'], "Cannot parse argument 'soon' of option timeout", true],
    [
      [...B, '--reset-offsets', '--group', 'g', '--dry-run', '--to-offset'],
      'Option to-offset requires an argument',
      false,
    ],
    [
      [
        ...B,
        '--group',
        'g',
        '--reset-offsets',
        '--delete-offsets',
        '--input-topic',
        't',
        '--dry-run',
        '--to-earliest',
      ],
      'Command must include exactly one action: --list, --describe, --delete, --reset-offsets, or --delete-offsets.',
      true,
    ],
  ]
  for (const [args, message, withHelp] of cases) {
    it(message, async () => {
      const r = await run(args)
      assert.equal(r.code, 1)
      assert.equal(r.stdout, '')
      // the message, then (printUsageAndExit) Kafka's help, byte for byte
      assert.equal(r.stderr, `${message}\n${withHelp ? HELP : ''}`)
    })
  }

  it('the help names the offset options with their argument types, on stderr with exit 1', async () => {
    const r = await run([...B, '--help'])
    assert.equal(r.code, 1)
    assert.equal(r.stdout, '')
    for (const option of [
      '--input-topic <String: topic>',
      '--all-input-topics',
      '--to-offset <Long: offset>',
      '--from-file <String: path to CSV file>',
      '--to-datetime <String: datetime>',
      '--by-duration <String: duration>',
      '--shift-by <Long: number-of-offsets>',
      '--delete-internal-topic <String>',
      '--delete-all-internal-topics',
      '--dry-run',
      '--execute',
      '--export',
    ]) {
      assert.ok(r.stderr.includes(option), option)
    }
  })
})

describe('against a broker whose logs are not empty (fake broker)', () => {
  let broker: FakeBroker
  let fake: string
  const commits: OffsetCommitRequest[] = []

  before(async () => {
    broker = await FakeBroker.start()
    fake = `127.0.0.1:${broker.port}`
    const topology = createStreamsGroupDescribeResponseTopology({
      epoch: 0,
      subtopologies: [
        createStreamsGroupDescribeResponseSubtopology({ subtopologyId: '0', sourceTopics: ['in'] }),
      ],
    })
    const task = createStreamsGroupDescribeResponseAssignment({
      activeTasks: [{ subtopologyId: '0', partitions: [0, 1] }],
    })
    broker.on(89, (r) => ({
      groups: r.request.groupIds.map((groupId) =>
        createStreamsGroupDescribeResponseDescribedGroup({
          groupId,
          groupState: groupId === 'live' ? 'Stable' : 'Empty',
          groupEpoch: 1,
          assignmentEpoch: 1,
          topology,
          members:
            groupId === 'live'
              ? [
                  createStreamsGroupDescribeResponseMember({
                    memberId: 'm',
                    memberEpoch: 1,
                    clientId: 'c',
                    clientHost: '/h',
                    processId: 'p',
                    assignment: task,
                    targetAssignment: task,
                  }),
                ]
              : [],
        }),
      ),
    }))
    broker.on(9, (r) => ({
      groups: r.request.groups.map((g) => ({
        groupId: g.groupId,
        errorCode: 0,
        topics: [
          {
            name: 'in',
            topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
            // The live group has committed on partition 0 only; the idle group on both.
            partitions: [
              {
                partitionIndex: 0,
                committedOffset: 40n,
                committedLeaderEpoch: 3,
                metadata: '',
                errorCode: 0,
              },
              ...(g.groupId === 'idle'
                ? [
                    {
                      partitionIndex: 1,
                      committedOffset: 30n,
                      committedLeaderEpoch: -1,
                      metadata: '',
                      errorCode: 0,
                    },
                  ]
                : []),
            ],
          },
        ],
      })),
    }))
    broker.on(3, (r) => ({
      brokers: [{ nodeId: 1, host: '127.0.0.1', port: broker.port, rack: null }],
      clusterId: 'fake',
      controllerId: 1,
      topics: (r.request.topics ?? []).map((t) => ({
        errorCode: 0,
        name: t.name,
        topicId: 'AAAAAAAAAAAAAAAAAAAAAA',
        isInternal: false,
        topicAuthorizedOperations: -2147483648,
        partitions: [0, 1].map((partitionIndex) => ({
          errorCode: 0,
          partitionIndex,
          leaderId: 1,
          leaderEpoch: 3,
          replicaNodes: [1],
          isrNodes: [1],
          offlineReplicas: [],
        })),
      })),
    }))
    // Partition 0 holds offsets 10–99, partition 1 offsets 0–49; records at or after 2024 start at 60 in partition 0 only.
    broker.on(2, (r) => ({
      topics: r.request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((q) => {
          const [start, end] = q.partitionIndex === 0 ? [10n, 100n] : [0n, 50n]
          const offset =
            q.timestamp === -2n ? start : q.timestamp === -1n ? end : q.partitionIndex === 0 ? 60n : -1n
          return { partitionIndex: q.partitionIndex, errorCode: 0, timestamp: -1n, offset, leaderEpoch: 3 }
        }),
      })),
    }))
    broker.on(8, (r) => {
      commits.push(r.request)
      return {
        topics: r.request.topics.map((t) => ({
          name: t.name,
          topicId: t.topicId,
          partitions: t.partitions.map((x) => ({ partitionIndex: x.partitionIndex, errorCode: 0 })),
        })),
      }
    })
  })
  after(async () => {
    await broker.close()
  })

  it('--describe --offsets --verbose: lag = log end − committed, or log end − log start without a commit', async () => {
    const r = await run([
      '--bootstrap-server',
      fake,
      '--describe',
      '--offsets',
      '--verbose',
      '--group',
      'live',
    ])
    const row = (c: Array<string | number>) =>
      `${p(c[0]!, 15)} ${p(c[1]!, 15)} ${p(c[2]!, 10)} ${p(c[3]!, 15)} ${p(c[4]!, 15)} ${p(c[5]!, 15)} ${p(c[6]!, 15)}\n`
    assert.equal(
      r.stdout,
      row(['GROUP', 'TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LEADER-EPOCH', 'LOG-END-OFFSET', 'OFFSET-LAG']) +
        row(['live', 'in', 1, '-', '-', 50, 50]) +
        row(['live', 'in', 0, 40, 3, 100, 60]),
    )
  })

  it('requested offsets are kept between log start and end; --to-datetime falls back to the end where nothing matches', async () => {
    const high = await run([
      '--bootstrap-server',
      fake,
      '--reset-offsets',
      '--group',
      'idle',
      '--all-input-topics',
      '--to-offset',
      '500',
      '--dry-run',
    ])
    assert.equal(
      high.stdout,
      resetTable([
        ['idle', 'in', 1, 50],
        ['idle', 'in', 0, 100],
      ]),
    )
    const warns = high.stderr.trimEnd().split('\n')
    assert.match(warns[0]!, warnLine(500, 'in-1', 'higher', 50))
    assert.match(warns[1]!, warnLine(500, 'in-0', 'higher', 100))
    const low = await run([
      '--bootstrap-server',
      fake,
      '--reset-offsets',
      '--group',
      'idle',
      '--input-topic',
      'in:0',
      '--to-offset',
      '3',
      '--dry-run',
    ])
    assert.equal(low.stdout, resetTable([['idle', 'in', 0, 10]]))
    assert.match(low.stderr.trimEnd(), warnLine(3, 'in-0', 'lower', 10))
    const inside = await run([
      '--bootstrap-server',
      fake,
      '--reset-offsets',
      '--group',
      'idle',
      '--all-input-topics',
      '--shift-by',
      '-15',
      '--execute',
    ])
    assert.deepEqual(inside, {
      code: 0,
      stdout: resetTable([
        ['idle', 'in', 1, 15],
        ['idle', 'in', 0, 25],
      ]),
      stderr: '',
    })
    assert.deepEqual(
      commits
        .at(-1)!
        .topics.map((t) => [t.name, t.partitions.map((x) => [x.partitionIndex, x.committedOffset])]),
      [
        [
          'in',
          [
            [1, 15n],
            [0, 25n],
          ],
        ],
      ],
    )
    assert.equal(commits.at(-1)!.generationIdOrMemberEpoch, -1)
    const file = join(tmp, 'fake.csv')
    writeFileSync(file, 'in,0,70\nin,1,5\n')
    const fromFile = await run([
      '--bootstrap-server',
      fake,
      '--reset-offsets',
      '--group',
      'idle',
      '--from-file',
      file,
      '--dry-run',
      '--export',
    ])
    // in-1 comes first in Java's HashMap (bucket 5 before bucket 6).
    assert.deepEqual(fromFile, { code: 0, stdout: 'in,1,5\nin,0,70\n\n', stderr: '' })
    assert.equal(readFileSync(file, 'utf8'), 'in,0,70\nin,1,5\n')
    const datetime = await run([
      '--bootstrap-server',
      fake,
      '--reset-offsets',
      '--group',
      'idle',
      '--input-topic',
      'in:0,1',
      '--to-datetime',
      '2024-01-01T00:00:00.000',
      '--dry-run',
    ])
    assert.deepEqual(datetime, {
      code: 0,
      stdout:
        '\nWarn: Partition 1 from topic in is empty. Falling back to latest known offset.\n' +
        resetTable([
          ['idle', 'in', 1, 50],
          ['idle', 'in', 0, 60],
        ]),
      stderr: '',
    })
  })
})
