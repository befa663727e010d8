// KafkaJS authenticates with SCRAM-SHA-256 and SCRAM-SHA-512 over SASL_SSL (certificates made for
// the test) and lists topics with its admin client; a wrong password is refused.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { Kafka, logLevel } from 'kafkajs'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { makeCerts, type TestCerts } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

let certs: TestCerts
let ts: TestServer

before(async () => {
  certs = makeCerts()
  ts = await startTestServer({
    listeners: 'SASL_SSL://127.0.0.1:0',
    'ssl.keystore.location': certs.serverPem,
    'sasl.scram.users': [
      scramUserEntry('kjs', 'SCRAM-SHA-256', 'kjs-secret', { iterations: 8192 }),
      scramUserEntry('kjs', 'SCRAM-SHA-512', 'kjs-secret'),
    ].join(','),
    'connection.failed.authentication.delay.ms': '0',
  })
})
after(async () => {
  await ts?.stop()
  certs?.remove()
})

function admin(mechanism: 'scram-sha-256' | 'scram-sha-512', password: string) {
  return new Kafka({
    clientId: 'kjs-sasl',
    brokers: [`127.0.0.1:${ts.port}`],
    ssl: { ca: [readFileSync(certs.caCert, 'utf8')], servername: 'localhost' },
    sasl:
      mechanism === 'scram-sha-256'
        ? { mechanism: 'scram-sha-256', username: 'kjs', password }
        : { mechanism: 'scram-sha-512', username: 'kjs', password },
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin()
}

for (const mechanism of ['scram-sha-256', 'scram-sha-512'] as const) {
  test(`KafkaJS admin listTopics over SASL_SSL with ${mechanism}`, { timeout: 30_000 }, async () => {
    const a = admin(mechanism, 'kjs-secret')
    await a.connect()
    try {
      await a.createTopics({ topics: [{ topic: `kjs-${mechanism}` }] })
      assert.ok((await a.listTopics()).includes(`kjs-${mechanism}`))
    } finally {
      await a.disconnect()
    }
  })
}

test('KafkaJS with a wrong SCRAM password is refused', { timeout: 30_000 }, async () => {
  const a = admin('scram-sha-256', 'wrong')
  try {
    await assert.rejects(a.connect(), /SASL SCRAM SHA256 authentication failed|Authentication failed/)
  } finally {
    await a.disconnect()
  }
})
