// Kafka's Java producer and consumer in the window between a topic change's answer and its logs:
// with topic.change.log.wait.ms=0 the server answers CreateTopics once the change is durable (as
// Kafka's controller does), and a partition whose log is not open yet answers
// NOT_LEADER_OR_FOLLOWER. The producer sending to, and the consumer reading from, the last
// partitions of a 1,000-partition topic right after its creation retry until they serve.
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createTopics, InteropServer, JavaClients, kafkaJavaSkip, killAll } from '../helpers/interop.js'

let server: InteropServer
let java: JavaClients
before(async () => {
  if (kafkaJavaSkip) return
  server = await InteropServer.start({ 'topic.change.log.wait.ms': '0' })
  java = await JavaClients.start(server.bootstrap)
})
after(async () => {
  try {
    await java?.close()
    await server?.close()
  } finally {
    await killAll()
  }
})

test('the Java producer and consumer retry partitions whose logs are still opening', {
  skip: kafkaJavaSkip,
  timeout: 300_000,
}, async () => {
  await createTopics(server.bootstrap, [{ name: 'java-window', partitions: 1000 }])
  const [ack] = await java.produce([{ topic: 'java-window', partition: 999, key: 'k', value: 'v-999' }], {
    acks: 'all',
  })
  assert.deepEqual([ack.partition, ack.offset], [999, 0])

  // The consumer first: its ListOffsets and Fetch meet partitions still opening.
  await createTopics(server.bootstrap, [{ name: 'java-window-read', partitions: 1000 }])
  const early = await java.consume({
    assign: [['java-window-read', 998]],
    seek: 'beginning',
    timeoutMs: 3000,
  })
  assert.deepEqual(early.records, [])
  await java.produce([{ topic: 'java-window-read', partition: 998, value: 'r-998' }])
  const read = await java.consume({
    assign: [['java-window-read', 998]],
    seek: 'beginning',
    maxRecords: 1,
    timeoutMs: 60_000,
  })
  assert.deepEqual(
    read.records.map((r) => [r.partition, r.offset, r.value]),
    [[998, 0, 'r-998']],
  )
})
