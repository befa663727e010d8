// Third-party clients in the window between a topic change's answer and its logs: with
// topic.change.log.wait.ms=0 the server answers CreateTopics once the change is durable, as Kafka's
// controller does, and a partition whose log is not open yet answers NOT_LEADER_OR_FOLLOWER. KafkaJS
// (producer and consumer) and kcat (librdkafka) sent to the last partition of a 1,000-partition
// topic right after its creation retry until it serves: none of them sees an error.
import assert from 'node:assert/strict'
import { execFile, spawn } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { Kafka, logLevel } from 'kafkajs'
import { startTestServer, type TestServer } from '../server/harness.js'
import { WireClient } from '../server/wire-client.js'

const run = promisify(execFile)
let ts: TestServer
before(async () => {
  ts = await startTestServer({ 'topic.change.log.wait.ms': '0' })
})
after(async () => {
  await ts?.stop()
})

/** CreateTopics of `partitions` over the wire: answered once durable, the logs still opening. */
async function createBig(name: string, partitions: number): Promise<void> {
  const c = await WireClient.connect(ts.port)
  try {
    const r = await c.request<{ topics: { errorCode: number }[] }>(19, 7, {
      topics: [{ name, numPartitions: partitions, replicationFactor: -1, assignments: [], configs: [] }],
      timeoutMs: 60_000,
      validateOnly: false,
    })
    assert.equal(r.body.topics[0].errorCode, 0)
  } finally {
    c.close()
  }
}

test('KafkaJS produces to and consumes from partitions whose logs are still opening', {
  timeout: 180_000,
}, async () => {
  const kafka = new Kafka({
    clientId: 'kjs-window',
    brokers: [`127.0.0.1:${ts.port}`],
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100, maxRetryTime: 2000 },
  })
  await createBig('kjs-window', 1000)
  const producer = kafka.producer()
  await producer.connect()
  const [sent] = await producer.send({
    topic: 'kjs-window',
    messages: [{ partition: 999, key: 'k', value: 'v-999' }],
  })
  assert.equal(sent.errorCode, 0)
  assert.equal(sent.partition, 999)
  await producer.disconnect()

  await createBig('kjs-window-read', 1000)
  const consumer = kafka.consumer({ groupId: 'kjs-window', maxWaitTimeInMs: 100 })
  await consumer.connect()
  await consumer.subscribe({ topic: 'kjs-window-read', fromBeginning: true })
  const seen = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the record was not consumed in 120 s')), 120_000)
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          clearTimeout(timer)
          resolve(`${partition}:${message.value?.toString()}`)
        },
      })
      .catch(reject)
  })
  const p2 = kafka.producer()
  await p2.connect()
  await p2.send({ topic: 'kjs-window-read', messages: [{ partition: 998, value: 'r-998' }] })
  await p2.disconnect()
  assert.equal(await seen, '998:r-998')
  await consumer.disconnect()
})

test('kcat produces to and consumes from a partition whose log is still opening', {
  timeout: 180_000,
}, async () => {
  const broker = `127.0.0.1:${ts.port}`
  await createBig('kcat-window', 1000)
  await new Promise<void>((resolve, reject) => {
    const child = spawn('kcat', ['-P', '-b', broker, '-t', 'kcat-window', '-p', '999', '-K:'], {
      stdio: ['pipe', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => {
      stderr += String(d)
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('exit', (code) => {
      clearTimeout(timer)
      if (code === 0) resolve()
      else reject(new Error(`kcat exited ${code}: ${stderr}`))
    })
    child.stdin.end('k:v-999\n')
  })
  const { stdout } = await run(
    'kcat',
    [
      '-C',
      '-b',
      broker,
      '-t',
      'kcat-window',
      '-p',
      '999',
      '-o',
      'beginning',
      '-e',
      '-q',
      '-f',
      '%p %k:%s\\n',
    ],
    { timeout: 120_000 },
  )
  assert.equal(stdout.trim(), '999 k:v-999')
})
