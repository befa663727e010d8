// kill -9 of the server during a steady idempotent produce (Kafka's Java producer, acks=all), then a
// restart on the same port and data directory: the producer retries what was not acknowledged and
// finishes. Afterwards every acknowledged record is in the log exactly once, at the offset it was
// acknowledged with, in send order, and nothing else is there: each partition holds exactly the
// records sent to it, in order, without duplicates, and Kafka's consumer (which checks every batch's
// CRC) reads the whole log.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  InteropServer,
  JavaClients,
  type JavaRecord,
  kafkaJavaSkip,
  killAll,
  type ManagedProcess,
  startJavaProgram,
} from '../helpers/interop.js'

const TOPIC = 'crash-produce'
const PARTITIONS = 3
const TOTAL = 12_000
const RATE = 1_500

describe('kill -9 during an idempotent produce', () => {
  let server: InteropServer
  let producer: ManagedProcess | undefined
  let java: JavaClients | undefined
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start()
  })
  after(async () => {
    try {
      await producer?.kill()
      await java?.close()
      await server?.close()
    } finally {
      await killAll()
    }
  })

  test('every acknowledged record is there once, in order, and nothing is corrupt', {
    skip: kafkaJavaSkip,
    timeout: 900_000,
  }, async () => {
    java = await JavaClients.start(server.bootstrap)
    await java.call({ op: 'createTopics', topics: [{ name: TOPIC, partitions: PARTITIONS }] })
    await java.close()
    java = undefined

    producer = await startJavaProgram('SustainedProducer', [
      server.bootstrap,
      TOPIC,
      String(PARTITIONS),
      String(TOTAL),
      String(RATE),
    ])
    const acks = (): string[] => producer!.stdout().match(/^ack .*$/gm) ?? []
    // Kill the server once a good share was acknowledged, in the middle of the stream.
    await producer.waitUntil(
      () => (acks().length >= TOTAL / 4 ? true : undefined),
      300_000,
      `${TOTAL / 4} acks`,
    )
    await server.kill9()
    const acksAtKill = acks().length
    await server.restart()
    const done = await producer.waitFor(/^done acked=(\d+) failed=(\d+)$/m, 600_000)
    assert.equal((await producer.exited).code, 0, producer.tail())
    assert.ok(acksAtKill < TOTAL, 'the kill came before the end of the stream')
    assert.deepEqual(producer.stdout().match(/^fail .*$/gm) ?? [], [])
    assert.equal(Number(done[1]), TOTAL)

    // What the producer was told: record i at (partition, offset).
    const acked = new Map<number, [number, number]>()
    for (const line of acks()) {
      const [, i, p, o] = line.split(' ')
      assert.ok(!acked.has(Number(i)), `record ${i} acknowledged twice`)
      acked.set(Number(i), [Number(p), Number(o)])
    }
    assert.equal(acked.size, TOTAL)

    // What the log holds, read by Kafka's consumer (check.crcs=true verifies every batch).
    java = await JavaClients.start(server.bootstrap)
    const ends = await java.call<{ partition: number; offset: number }[]>({
      op: 'listOffsets',
      spec: 'latest',
      partitions: Array.from({ length: PARTITIONS }, (_, p) => [TOPIC, p]),
    })
    const perPartition = Array.from({ length: PARTITIONS }, (_, p) =>
      Array.from({ length: TOTAL }, (_, i) => i).filter((i) => i % PARTITIONS === p),
    )
    assert.deepEqual(
      ends.map((e) => e.offset),
      perPartition.map((ids) => ids.length),
      'each partition holds exactly the records sent to it',
    )
    const { records } = await java.consume({
      config: { 'check.crcs': true, 'max.poll.records': 2000 },
      assign: Array.from({ length: PARTITIONS }, (_, p) => [TOPIC, p] as const),
      seek: 'beginning',
      maxRecords: TOTAL,
      timeoutMs: 240_000,
    })
    assert.equal(records.length, TOTAL)
    const byPartition = new Map<number, JavaRecord[]>()
    for (const r of records) byPartition.set(r.partition, [...(byPartition.get(r.partition) ?? []), r])
    for (const [p, ids] of perPartition.entries()) {
      const got = (byPartition.get(p) ?? []).sort((a, b) => a.offset - b.offset)
      // offsets 0..n-1, the records in send order, each once
      assert.deepEqual(
        got.map((r) => [r.offset, r.key, r.value]),
        ids.map((i, o) => [o, `k${i}`, `seq-${i}`]),
        `partition ${p}`,
      )
      for (const [o, i] of ids.entries())
        assert.deepEqual(acked.get(i), [p, o], `acknowledgement of record ${i}`)
    }
  })
})
