// /metrics over HTTP from a real `topograph start` process: after Produce and Fetch requests over
// TCP, Kafka's broker topic metrics (per topic and in total) and the log size of each partition are
// what the requests did, in Prometheus text format as a scraper reads them; so are the fetch
// session cache's metrics.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { createTopics, fetch, makeBatch, produce } from '../helpers/data-plane.js'
import { type MetricsServer, startMetricsServer } from '../helpers/prometheus.js'
import { WireClient } from '../server/wire-client.js'

const T0 = 1_700_000_000_000

const meter = (name: string) => `kafka_server_brokertopicmetrics_${name}persec_count`

test('/metrics serves the broker topic metrics and log sizes of real traffic', {
  timeout: 90_000,
}, async () => {
  let metrics: MetricsServer | undefined
  let c: WireClient | undefined
  try {
    metrics = await startMetricsServer()
    const server = metrics.server
    c = await WireClient.connect(server.port)
    assert.deepEqual(
      await createTopics(c, [
        { name: 'orders', partitions: 2, configs: { 'max.message.bytes': '1000' } },
        { name: 'audit', configs: { 'cleanup.policy': 'compact' } },
      ]),
      [0, 0],
    )

    // orders-0: two batches of 3 and 2 records; orders-1: one of 1; audit-0: one of 4.
    const batch = (n: number, tag: string) =>
      makeBatch(
        Array.from({ length: n }, (_, i) => ({
          key: `${tag}${i}`,
          value: `value-${tag}-${i}`,
          timestamp: T0,
        })),
      )
    const o0a = batch(3, 'a')
    const o0b = batch(2, 'b')
    const o1 = batch(1, 'c')
    const a0 = batch(4, 'd')
    const ok = await produce(c, [
      { topic: 'orders', partition: 0, records: o0a },
      { topic: 'orders', partition: 1, records: o1 },
      { topic: 'audit', partition: 0, records: a0 },
    ])
    assert.deepEqual(
      ok.map((x) => x.errorCode),
      [0, 0, 0],
    )
    assert.equal(
      (await produce(c, [{ topic: 'orders', partition: 0, records: o0b }], { acks: 1 }))[0].errorCode,
      0,
    )
    // As Kafka counts them: a corrupt batch and one too large are known errors, not failed produce
    // requests, and only the one too large counts its bytes as rejected; a record without a key on
    // a compacted topic fails validation, a failed produce request. Nothing of them is appended.
    const corrupt = batch(1, 'x')
    corrupt[corrupt.length - 1] ^= 1
    assert.equal(
      (await produce(c, [{ topic: 'orders', partition: 0, records: corrupt }]))[0].errorCode,
      ErrorCode.CORRUPT_MESSAGE,
    )
    const tooLarge = makeBatch([{ key: 'big', value: 'v'.repeat(1500), timestamp: T0 }])
    assert.equal(
      (await produce(c, [{ topic: 'orders', partition: 1, records: tooLarge }]))[0].errorCode,
      ErrorCode.MESSAGE_TOO_LARGE,
    )
    const keyless = makeBatch([{ key: null, value: 'no key', timestamp: T0 }])
    assert.equal(
      (await produce(c, [{ topic: 'audit', partition: 0, records: keyless }]))[0].errorCode,
      ErrorCode.INVALID_RECORD,
    )

    // Fetch everything of orders-0 and audit-0 in one request, then one out of range on audit.
    const fetched = await fetch(c, [
      { topic: 'orders', partition: 0, offset: 0 },
      { topic: 'audit', partition: 0, offset: 0 },
    ])
    assert.deepEqual(
      fetched.partitions.map((x) => [x.errorCode, x.records.byteLength]),
      [
        [0, o0a.byteLength + o0b.byteLength],
        [0, a0.byteLength],
      ],
    )
    const outOfRange = await fetch(c, [{ topic: 'audit', partition: 0, offset: 99 }])
    assert.equal(outOfRange.partitions[0].errorCode, ErrorCode.OFFSET_OUT_OF_RANGE)

    const { text, samples: m } = await metrics.scrape()
    assert.match(text, /# TYPE kafka_server_brokertopicmetrics_messagesinpersec_count counter/)
    assert.match(text, /# TYPE kafka_log_log_size gauge/)
    const at = (name: string, topic?: string) => {
      const key = topic === undefined ? name : `${name}{topic="${topic}"}`
      assert.ok(m.has(key), `no sample ${key} in:\n${text}`)
      return m.get(key)
    }

    const expected: Record<string, { orders: number; audit: number }> = {
      messagesin: { orders: 6, audit: 4 },
      bytesin: { orders: o0a.byteLength + o0b.byteLength + o1.byteLength, audit: a0.byteLength },
      bytesout: { orders: o0a.byteLength + o0b.byteLength, audit: a0.byteLength },
      bytesrejected: { orders: tooLarge.byteLength, audit: 0 },
      failedproducerequests: { orders: 0, audit: 1 },
      // The Fetch out of range below is a known error: Kafka counts no failed fetch request for it.
      failedfetchrequests: { orders: 0, audit: 0 },
      // Per partition, as Kafka counts them: orders 0 and 1, then orders 0 twice and 1; audit 0 twice.
      totalproducerequests: { orders: 5, audit: 2 },
      totalfetchrequests: { orders: 1, audit: 2 },
    }
    for (const [name, want] of Object.entries(expected)) {
      for (const topic of ['orders', 'audit'] as const) {
        if (want[topic] === 0) {
          const v = m.get(`${meter(name)}{topic="${topic}"}`)
          assert.ok(v === undefined || v === 0, `${name} ${topic}: ${v}`)
        } else assert.equal(at(meter(name), topic), want[topic], `${name} ${topic}`)
      }
      // The all-topics meter (no label) is the sum: these are the only topics with traffic. It is
      // served at 0 too, as Kafka registers it at start-up.
      assert.equal(at(meter(name)), want.orders + want.audit, `${name} total`)
    }

    assert.equal(at('kafka_log_log_size{topic="orders",partition="0"}'), o0a.byteLength + o0b.byteLength)
    assert.equal(at('kafka_log_log_size{topic="orders",partition="1"}'), o1.byteLength)
    assert.equal(at('kafka_log_log_size{topic="audit",partition="0"}'), a0.byteLength)

    // Kafka's request and connection metrics, and the process's own.
    const requests = (name: string, version: number) =>
      m.get(`kafka_network_requestmetrics_requestspersec_count{request="${name}",version="${version}"}`)
    assert.equal(requests('Produce', 9), 5, 'the Produce requests of this test')
    assert.equal(requests('CreateTopics', 7), 1)
    assert.equal(requests('Fetch', 12), 2)
    assert.ok((m.get('kafka_server_socket_server_metrics_connection_count{listener="PLAINTEXT"}') ?? 0) >= 1)
    assert.ok((m.get('process_resident_memory_bytes') ?? 0) > 10_000_000)
    assert.match(text, /# TYPE nodejs_eventloop_lag_seconds gauge/)

    // A deleted topic's series go (Kafka's BrokerTopicStats.removeMetrics); the totals stay.
    const deleted = await c.request<{ responses: { errorCode: number }[] }>(20, 1, {
      topicNames: ['audit'],
      timeoutMs: 10000,
    })
    assert.deepEqual(
      deleted.body.responses.map((r) => r.errorCode),
      [0],
    )
    const { text: after, samples: m2 } = await metrics.scrape()
    assert.doesNotMatch(after, /topic="audit"/)
    assert.equal(m2.get(`${meter('messagesin')}{topic="orders"}`), 6)
    assert.equal(m2.get(meter('messagesin')), 10)

    // Kafka's fetch session cache metrics: none before, one session of two partitions after a full
    // fetch with epoch 0 (every Fetch above was sessionless, epoch -1).
    const sessions = 'kafka_server_fetchsessioncache_numincrementalfetchsessions'
    const cached = 'kafka_server_fetchsessioncache_numincrementalfetchpartitionscached'
    const evictions = 'kafka_server_fetchsessioncache_incrementalfetchsessionevictionspersec_count'
    assert.deepEqual([m2.get(sessions), m2.get(cached), m2.get(evictions)], [0, 0, 0])
    const full = await fetch(
      c,
      [
        { topic: 'orders', partition: 0, offset: 0 },
        { topic: 'orders', partition: 1, offset: 0 },
      ],
      { sessionEpoch: 0 },
    )
    assert.ok(full.sessionId > 0, 'a session was created')
    const { samples: m3 } = await metrics.scrape()
    assert.deepEqual([m3.get(sessions), m3.get(cached), m3.get(evictions)], [1, 2, 0])
  } finally {
    c?.close()
    await metrics?.stop()
  }
})
