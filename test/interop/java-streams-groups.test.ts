// Kafka's own kafka-streams-groups (kafka-java's bin/, StreamsGroupCommand) and ours against the
// same Topograph process, outputs compared byte for byte: --describe of a streams group whose
// members have left (Empty) but whose offsets stay committed, and of a group that does not exist.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Admin } from '../../src/clients/admin/index.js'
import { simpleTopology, StreamsMember } from '../helpers/streams-member.js'
import { createTopics, InteropServer, kafkaJavaSkip, killAll, runKafkaTool } from '../helpers/interop.js'
import { runStreamsGroupsProcess } from '../testkit/cli.js'

describe("kafka-streams-groups and Kafka's StreamsGroupCommand", () => {
  let server: InteropServer
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start({
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
    })
    await createTopics(server.bootstrap, [{ name: 'orders', partitions: 3 }])
    const m = await StreamsMember.connect(server.port, {
      groupId: 'shop',
      memberId: 'shop-m',
      processId: 'p',
      topology: simpleTopology(['orders']),
    })
    try {
      assert.ok(await m.untilActive(), 'shop got no tasks')
      await m.leave()
    } finally {
      m.client.close()
    }
    const admin = Admin.create({ bootstrapServers: server.bootstrap, defaultApiTimeoutMs: 10_000 })
    try {
      await admin
        .alterStreamsGroupOffsets('shop', [
          { topic: 'orders', partition: 0, offset: 0n },
          { topic: 'orders', partition: 2, offset: 0n },
        ])
        .all()
      const committed = await admin.listStreamsGroupOffsets('shop')
      assert.deepEqual(
        committed.map((o) => `${o.topic}-${o.partition}=${o.offset}`),
        ['orders-0=0', 'orders-2=0'],
      )
    } finally {
      await admin.close()
    }
  })
  after(async () => {
    try {
      await server?.close()
    } finally {
      await killAll()
    }
  })

  const both = async (args: readonly string[]) => {
    const all = ['--bootstrap-server', server.bootstrap, ...args]
    const [java, ours] = await Promise.all([
      runKafkaTool('kafka-streams-groups', all, { timeoutMs: 180_000 }),
      runStreamsGroupsProcess(all),
    ])
    return { java, ours }
  }

  test('--describe [--offsets] [--verbose] of an Empty group with committed offsets', {
    skip: kafkaJavaSkip,
    timeout: 600_000,
  }, async () => {
    const state = await both(['--describe', '--state', '--group', 'shop'])
    assert.equal(state.java.code, 0, state.java.stderr)
    assert.match(state.java.stdout, /\nshop +\S+ \(1\) +\S+ +Empty +0\n$/)
    assert.equal(state.ours.stdout, state.java.stdout)
    for (const args of [
      ['--describe', '--group', 'shop'],
      ['--describe', '--offsets', '--group', 'shop'],
      ['--describe', '--offsets', '--verbose', '--group', 'shop'],
    ]) {
      const { java, ours } = await both(args)
      assert.equal(java.code, 0, `${args.join(' ')}: ${java.stderr}`)
      assert.deepEqual(
        { code: ours.code, stdout: ours.stdout, stderr: ours.stderr },
        { code: java.code, stdout: java.stdout, stderr: java.stderr },
        args.join(' '),
      )
    }
  })

  test('--describe --offsets of a group that does not exist', {
    skip: kafkaJavaSkip,
    timeout: 600_000,
  }, async () => {
    const { java, ours } = await both(['--describe', '--offsets', '--group', 'nope'])
    assert.equal(java.code, 1)
    assert.equal(ours.code, java.code)
    assert.equal(ours.stdout, java.stdout)
    // The stack traces' frames differ (Java's, then this process's); the exception line does not.
    assert.equal(ours.stderr.split('\n')[0], java.stderr.split('\n')[0])
  })
})
