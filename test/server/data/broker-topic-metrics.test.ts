// The broker topic meters sum what is recorded and hand it to the Prometheus counters when they are
// read: each read sees everything recorded before it, once, per topic and over all topics, also
// when several servers in one process share the counters.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Registry } from 'prom-client'
import {
  BrokerTopicMetrics,
  brokerTopicMetricName,
  installFetchSessionMetrics,
} from '../../../src/server/data/broker-topic-metrics.js'

async function values(registry: Registry, name: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const v of (await registry.getSingleMetric(name)!.get()).values)
    out[String(v.labels.topic ?? '*')] = v.value
  return out
}

describe('broker topic metrics', () => {
  it('each read sees every value recorded before it, once', async () => {
    const registry = new Registry()
    const m = new BrokerTopicMetrics(() => [], registry)
    const bytesIn = brokerTopicMetricName('bytesIn')
    m.record('bytesIn', 'a', 100)
    m.record('bytesIn', 'b', 7)
    m.record('bytesIn', 'a', 20)
    m.record('bytesIn', 'a', 0)
    m.record('totalProduce', 'a')
    assert.deepEqual(await values(registry, bytesIn), { '*': 127, a: 120, b: 7 })
    assert.deepEqual(await values(registry, bytesIn), { '*': 127, a: 120, b: 7 }, 'not added twice')
    m.record('bytesIn', 'b', 1)
    assert.match(
      await registry.metrics(),
      /kafka_server_brokertopicmetrics_bytesinpersec_count\{topic="b"\} 8/,
    )
    assert.deepEqual(await values(registry, brokerTopicMetricName('totalProduce')), { '*': 1, a: 1 })
  })

  it('two servers sharing a registry: the counters hold both sums', async () => {
    const registry = new Registry()
    const one = new BrokerTopicMetrics(() => [], registry)
    const two = new BrokerTopicMetrics(() => [], registry)
    one.record('messagesIn', 't', 3)
    two.record('messagesIn', 't', 4)
    two.record('messagesIn', 'u', 1)
    assert.deepEqual(await values(registry, brokerTopicMetricName('messagesIn')), { '*': 8, t: 7, u: 1 })
  })

  it('every all-topics series is there at 0 before any traffic', async () => {
    const registry = new Registry()
    new BrokerTopicMetrics(() => [], registry)
    for (const meter of ['failedFetch', 'failedProduce', 'bytesRejected', 'messagesIn'] as const) {
      assert.deepEqual(await values(registry, brokerTopicMetricName(meter)), { '*': 0 }, meter)
    }
    assert.match(
      await registry.metrics(),
      /^kafka_server_brokertopicmetrics_failedfetchrequestspersec_count 0$/m,
    )
  })

  it("a deleted topic's series go, read or not; the totals keep its values", async () => {
    const registry = new Registry()
    const m = new BrokerTopicMetrics(() => [], registry)
    const messagesIn = brokerTopicMetricName('messagesIn')
    m.record('messagesIn', 'doomed', 5)
    m.record('messagesIn', 'kept', 2)
    assert.deepEqual(await values(registry, messagesIn), { '*': 7, doomed: 5, kept: 2 })
    m.record('messagesIn', 'doomed', 1)
    m.record('bytesOut', 'doomed', 10)
    m.removeTopic('doomed')
    assert.deepEqual(await values(registry, messagesIn), { '*': 8, kept: 2 })
    assert.deepEqual(await values(registry, brokerTopicMetricName('bytesOut')), { '*': 10 })
    assert.doesNotMatch(await registry.metrics(), /topic="doomed"/)
    // Created again: it starts from 0.
    m.record('messagesIn', 'doomed', 3)
    assert.deepEqual(await values(registry, messagesIn), { '*': 11, doomed: 3, kept: 2 })
  })

  it("the fetch session cache's metrics read the cache at each scrape", async () => {
    const registry = new Registry()
    let counts = { sessions: 0, partitionsCached: 0, evictions: 0 }
    installFetchSessionMetrics(() => counts, registry)
    assert.match(await registry.metrics(), /^kafka_server_fetchsessioncache_numincrementalfetchsessions 0$/m)
    counts = { sessions: 3, partitionsCached: 12, evictions: 2 }
    const text = await registry.metrics()
    assert.match(text, /^kafka_server_fetchsessioncache_numincrementalfetchsessions 3$/m)
    assert.match(text, /^kafka_server_fetchsessioncache_numincrementalfetchpartitionscached 12$/m)
    assert.match(text, /^kafka_server_fetchsessioncache_incrementalfetchsessionevictionspersec_count 2$/m)
    // Read again: the eviction count is the cache's total, not added to itself.
    assert.match(
      await registry.metrics(),
      /^kafka_server_fetchsessioncache_incrementalfetchsessionevictionspersec_count 2$/m,
    )
  })
})
