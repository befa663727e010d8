// Kafka's own command-line tools (kafka-java's bin/) against a real Topograph process:
// kafka-topics --create / --describe / --alter, kafka-console-producer and kafka-console-consumer,
// kafka-get-offsets and kafka-delete-records, each output compared line by line.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import { InteropServer, kafkaJavaSkip, killAll, type RunResult, runKafkaTool } from '../helpers/interop.js'

describe("Kafka's command-line tools", () => {
  let server: InteropServer
  let dir: string
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start()
    dir = mkdtempSync(join(tmpdir(), 'topograph-interop-tools-'))
  })
  after(async () => {
    try {
      await server?.close()
      if (dir) rmSync(dir, { recursive: true, force: true })
    } finally {
      await killAll()
    }
  })

  const tool = async (name: string, args: readonly string[], input?: string): Promise<RunResult> => {
    const r = await runKafkaTool(name, ['--bootstrap-server', server.bootstrap, ...args], {
      input,
      timeoutMs: 180_000,
    })
    return r
  }
  const ok = (r: RunResult, what: string): string => {
    assert.equal(r.code, 0, `${what} exited ${r.code}:\n${r.stdout}\n${r.stderr}`)
    return r.stdout
  }

  test('kafka-topics --create, --describe and --alter --partitions', {
    skip: kafkaJavaSkip,
    timeout: 300_000,
  }, async () => {
    assert.equal(
      ok(
        await tool('kafka-topics', [
          '--create',
          '--topic',
          'tools-a',
          '--partitions',
          '2',
          '--config',
          'retention.ms=3600000',
          '--config',
          'cleanup.policy=delete',
        ]),
        'create',
      ),
      'Created topic tools-a.\n',
    )
    // Described through DescribeTopicPartitions, as with a Kafka 4 broker: empty eligible leader
    // replica lists (Metadata, the tool's fallback, has none and prints N/A).
    const partitionLine = (p: number) =>
      `\tTopic: tools-a\tPartition: ${p}\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: `
    const described = ok(await tool('kafka-topics', ['--describe', '--topic', 'tools-a']), 'describe')
    assert.match(
      described,
      new RegExp(
        `^Topic: tools-a\\tTopicId: [A-Za-z0-9_-]{22}\\tPartitionCount: 2\\tReplicationFactor: 1\\t` +
          `Configs: cleanup.policy=delete,retention.ms=3600000\\n${partitionLine(0)}\\n${partitionLine(1)}\\n$`,
      ),
    )
    ok(await tool('kafka-topics', ['--alter', '--topic', 'tools-a', '--partitions', '3']), 'alter')
    const altered = ok(await tool('kafka-topics', ['--describe', '--topic', 'tools-a']), 'describe')
    assert.match(altered, /\tPartitionCount: 3\t/)
    assert.equal(altered.split('\n').filter((l) => l.startsWith('\tTopic: tools-a\tPartition: ')).length, 3)
    assert.ok(altered.includes(`${partitionLine(2)}\n`))
  })

  test('console producer, console consumer, kafka-get-offsets and kafka-delete-records', {
    skip: kafkaJavaSkip,
    timeout: 420_000,
  }, async () => {
    const topic = 'console-a'
    ok(await tool('kafka-topics', ['--create', '--topic', topic, '--partitions', '1']), 'create')
    // headers <TAB> key <TAB> value, with <NULL> for a null key
    const lines = [
      'h1:a,h2:b\tk1\tfirst line',
      'h1:c\tk2\tsecond line',
      'h1:d\t<NULL>\tno key here',
      'h1:e,h1:f\tk4\tfourth, with a comma',
      'h3:\tk5\t',
    ]
    const before = Date.now()
    const produced = await tool(
      'kafka-console-producer',
      [
        '--topic',
        topic,
        '--reader-property',
        'parse.key=true',
        '--reader-property',
        'parse.headers=true',
        '--reader-property',
        'null.marker=<NULL>',
      ],
      `${lines.join('\n')}\n`,
    )
    ok(produced, 'console producer')
    const afterProduce = Date.now()

    const printAll = [
      '--formatter-property',
      'print.timestamp=true',
      '--formatter-property',
      'print.partition=true',
      '--formatter-property',
      'print.offset=true',
      '--formatter-property',
      'print.headers=true',
      '--formatter-property',
      'print.key=true',
    ]
    // --timeout-ms ends the consumer once no record came for that long
    const consumed = await tool('kafka-console-consumer', [
      '--topic',
      topic,
      '--from-beginning',
      '--timeout-ms',
      '15000',
      ...printAll,
    ])
    const out = ok(consumed, 'console consumer').split('\n')
    assert.equal(out.pop(), '')
    const expected = [
      'Partition:0\tOffset:0\th1:a,h2:b\tk1\tfirst line',
      'Partition:0\tOffset:1\th1:c\tk2\tsecond line',
      'Partition:0\tOffset:2\th1:d\tnull\tno key here',
      'Partition:0\tOffset:3\th1:e,h1:f\tk4\tfourth, with a comma',
      'Partition:0\tOffset:4\th3:\tk5\t',
    ]
    assert.equal(out.length, expected.length, consumed.stdout)
    for (const [i, line] of out.entries()) {
      const m = /^CreateTime:(\d+)\t(.*)$/.exec(line)
      assert.ok(m, line)
      assert.equal(m[2], expected[i])
      assert.ok(Number(m[1]) >= before - 1000 && Number(m[1]) <= afterProduce + 1000, `timestamp of ${line}`)
    }
    assert.match(consumed.stderr, /Processed a total of 5 messages/)

    const offsets = async (time: string) =>
      ok(await tool('kafka-get-offsets', ['--topic', topic, '--time', time]), `get-offsets ${time}`)
    assert.equal(await offsets('earliest'), `${topic}:0:0\n`)
    assert.equal(await offsets('latest'), `${topic}:0:5\n`)

    const json = join(dir, 'delete.json')
    writeFileSync(json, JSON.stringify({ version: 1, partitions: [{ topic, partition: 0, offset: 2 }] }))
    assert.equal(
      ok(await tool('kafka-delete-records', ['--offset-json-file', json]), 'delete-records'),
      `Executing records delete operation\nRecords delete operation completed:\npartition: ${topic}-0\tlow_watermark: 2\n`,
    )
    assert.equal(await offsets('earliest'), `${topic}:0:2\n`)
    assert.equal(await offsets('latest'), `${topic}:0:5\n`)

    // A new consumer group from the beginning now starts at offset 2; --max-messages ends it.
    const rest = ok(
      await tool('kafka-console-consumer', [
        '--topic',
        topic,
        '--from-beginning',
        '--group',
        'console-group',
        '--max-messages',
        '3',
        '--timeout-ms',
        '60000',
        '--formatter-property',
        'print.offset=true',
        '--formatter-property',
        'print.key=true',
      ]),
      'console consumer after delete',
    )
    assert.equal(rest, 'Offset:2\tnull\tno key here\nOffset:3\tk4\tfourth, with a comma\nOffset:4\tk5\t\n')

    // The console consumer committed as it closed: kafka-consumer-groups shows the group's offset,
    // the log end offset and no lag.
    const groups = ok(
      await tool('kafka-consumer-groups', ['--describe', '--group', 'console-group']),
      'consumer-groups --describe',
    )
    const row = groups
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .find((c) => c[0] === 'console-group' && c[1] === topic)
    assert.ok(row, groups)
    assert.deepEqual(row.slice(0, 6), ['console-group', topic, '0', '5', '5', '0'])
  })

  test("kafka-topics --delete takes the topic's committed offsets out of every group", {
    skip: kafkaJavaSkip,
    timeout: 300_000,
  }, async () => {
    for (const t of ['tools-gone', 'tools-kept']) {
      ok(await tool('kafka-topics', ['--create', '--topic', t, '--partitions', '2']), `create ${t}`)
      ok(await tool('kafka-console-producer', ['--topic', t], 'one\ntwo\nthree\n'), `produce ${t}`)
      ok(
        await tool('kafka-consumer-groups', [
          '--group',
          'tools-g',
          '--reset-offsets',
          '--topic',
          t,
          '--to-latest',
          '--execute',
        ]),
        `reset-offsets ${t}`,
      )
    }
    ok(await tool('kafka-topics', ['--delete', '--topic', 'tools-gone']), 'delete')
    // The group's description lists the topic left, and only it (it failed while the deleted
    // topic's offsets stayed: the tool asked for the end offsets of partitions no one hosts).
    const described = ok(
      await tool('kafka-consumer-groups', ['--describe', '--group', 'tools-g']),
      'consumer-groups --describe',
    )
    const topics = described
      .split('\n')
      .map((l) => l.trim().split(/\s+/))
      .filter((c) => c[0] === 'tools-g')
      .map((c) => `${c[1]}-${c[2]}`)
      .sort()
    assert.deepEqual(topics, ['tools-kept-0', 'tools-kept-1'], described)
    // Created again under the name, the topic starts without the group's offsets.
    ok(await tool('kafka-topics', ['--create', '--topic', 'tools-gone', '--partitions', '1']), 'create again')
    const again = ok(
      await tool('kafka-consumer-groups', ['--describe', '--group', 'tools-g']),
      'consumer-groups --describe after the topic came back',
    )
    assert.doesNotMatch(again, /tools-gone/)
  })
})
