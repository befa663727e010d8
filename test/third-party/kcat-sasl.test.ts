// kcat (librdkafka) authenticates with SASL/PLAIN over SASL_SSL, verifying the server certificate
// against a CA the test makes; a wrong password is refused with the server's message.
//
// SCRAM is not exercised with kcat here: the Debian kcat links librdkafka 2.0.2, whose
// client-final-message repeats the client nonce in front of the server's combined nonce, which an
// RFC 5802 server (Kafka's included) refuses as "Invalid client nonce".
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { makeCerts, type TestCerts } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const run = promisify(execFile)
let certs: TestCerts
let ts: TestServer

before(async () => {
  certs = makeCerts()
  ts = await startTestServer({
    listeners: 'SASL_SSL://127.0.0.1:0',
    'ssl.keystore.location': certs.serverPem,
    'sasl.plain.users': 'kc:kc-secret',
    'connection.failed.authentication.delay.ms': '0',
  })
})
after(async () => {
  await ts?.stop()
  certs?.remove()
})

function kcat(mechanism: string, password: string) {
  return run(
    'kcat',
    [
      '-L',
      '-b',
      `127.0.0.1:${ts.port}`,
      '-m',
      '10',
      '-X',
      'security.protocol=SASL_SSL',
      '-X',
      `sasl.mechanisms=${mechanism}`,
      '-X',
      'sasl.username=kc',
      '-X',
      `sasl.password=${password}`,
      '-X',
      `ssl.ca.location=${certs.caCert}`,
    ],
    { timeout: 20_000 },
  )
}

test('kcat -L over SASL_SSL with PLAIN', { timeout: 30_000 }, async () => {
  const { stdout } = await kcat('PLAIN', 'kc-secret')
  assert.match(stdout, new RegExp(`broker 1 at 127\\.0\\.0\\.1:${ts.port}`))
})

test('kcat with a wrong password fails to authenticate', { timeout: 30_000 }, async () => {
  await assert.rejects(kcat('PLAIN', 'wrong'), (e: Error & { stderr?: string }) =>
    /Authentication failed: Invalid username or password/.test(`${e.stderr ?? ''}${e.message}`),
  )
})
