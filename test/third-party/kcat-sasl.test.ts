// kcat (librdkafka) authenticates with SASL/PLAIN over SASL_SSL, verifying the server certificate
// against a CA the test makes; a wrong password is refused with the server's message.
//
// SCRAM-SHA-256/512 over SASL_PLAINTEXT and SASL_SSL: librdkafka before 2.6.1 (the Debian kcat
// links 2.0.2) sends `r=<c-nonce><c-nonce><s-nonce>` in its client-final message, its client nonce
// once more in front of the combined nonce of the server-first message. RFC 5802 section 5.1
// requires the server to refuse that nonce, and so do this server and Kafka 4.0 and later (see
// docs/security.md, "SCRAM and librdkafka before 2.6.1"). With such a kcat the tests assert the
// refusal: the generic SCRAM failure on kcat's side and the nonce as the reason in the server log.
// With librdkafka 2.6.1 or later they assert that kcat authenticates.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { promisify } from 'node:util'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { createLogger } from '../../src/server/logger.js'
import { makeCerts, type TestCerts } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const run = promisify(execFile)
let certs: TestCerts
let ts: TestServer
const ports = new Map<string, number>()
const logLines: string[] = []

type Protocol = 'SASL_PLAINTEXT' | 'SASL_SSL'

before(async () => {
  certs = makeCerts()
  const logger = createLogger({
    level: 'info',
    destination: new Writable({
      write(chunk, _enc, cb) {
        logLines.push(
          ...String(chunk)
            .split('\n')
            .filter((l) => l !== ''),
        )
        cb()
      },
    }),
  })
  ts = await startTestServer(
    {
      listeners: 'SASL_SSL://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0',
      'ssl.keystore.location': certs.serverPem,
      'sasl.plain.users': 'kc:kc-secret',
      'sasl.scram.users': [
        scramUserEntry('kc', 'SCRAM-SHA-256', 'kc-secret'),
        scramUserEntry('kc', 'SCRAM-SHA-512', 'kc-secret'),
      ].join(','),
      'connection.failed.authentication.delay.ms': '0',
    },
    { logger },
  )
  for (const l of ts.server.listeners) ports.set(l.listenerName, l.port)
})
after(async () => {
  await ts?.stop()
  certs?.remove()
})

/** `kcat -L` as user kc; `wait` is kcat's metadata timeout in seconds (-m). */
function kcat(mechanism: string, password: string, protocol: Protocol = 'SASL_SSL', wait = 10) {
  const port = ports.get(protocol) as number
  return run(
    'kcat',
    [
      '-L',
      '-b',
      `127.0.0.1:${port}`,
      '-m',
      String(wait),
      '-X',
      `security.protocol=${protocol}`,
      '-X',
      `sasl.mechanisms=${mechanism}`,
      '-X',
      'sasl.username=kc',
      '-X',
      `sasl.password=${password}`,
      ...(protocol === 'SASL_SSL' ? ['-X', `ssl.ca.location=${certs.caCert}`] : []),
    ],
    { timeout: 20_000 },
  )
}

/** The librdkafka version kcat links, from `kcat -V`. */
async function librdkafkaVersion(): Promise<[number, number, number]> {
  const { stdout } = await run('kcat', ['-V'])
  const m = /librdkafka (\d+)\.(\d+)\.(\d+)/.exec(stdout)
  assert.ok(m, `no librdkafka version in kcat -V: ${stdout}`)
  return [Number(m[1]), Number(m[2]), Number(m[3])]
}

function before261([major, minor, patch]: readonly number[]): boolean {
  return major < 2 || (major === 2 && (minor < 6 || (minor === 6 && patch < 1)))
}

test('kcat -L over SASL_SSL with PLAIN', { timeout: 30_000 }, async () => {
  const { stdout } = await kcat('PLAIN', 'kc-secret')
  assert.match(stdout, new RegExp(`broker 1 at 127\\.0\\.0\\.1:${ports.get('SASL_SSL')}`))
})

test('kcat with a wrong password fails to authenticate', { timeout: 30_000 }, async () => {
  await assert.rejects(kcat('PLAIN', 'wrong', 'SASL_SSL', 3), (e: Error & { stderr?: string }) =>
    /Authentication failed: Invalid username or password/.test(`${e.stderr ?? ''}${e.message}`),
  )
})

describe('kcat with SCRAM', () => {
  for (const protocol of ['SASL_PLAINTEXT', 'SASL_SSL'] as const) {
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512']) {
      test(`${mechanism} over ${protocol}`, { timeout: 30_000 }, async () => {
        const version = await librdkafkaVersion()
        if (!before261(version)) {
          const { stdout } = await kcat(mechanism, 'kc-secret', protocol)
          assert.match(stdout, new RegExp(`broker 1 at 127\\.0\\.0\\.1:${ports.get(protocol)}`))
          return
        }
        // librdkafka before 2.6.1 repeats its client nonce in the client-final message.
        const from = logLines.length
        await assert.rejects(kcat(mechanism, 'kc-secret', protocol, 3), (e: Error & { stderr?: string }) =>
          new RegExp(
            `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`,
          ).test(`${e.stderr ?? ''}${e.message}`),
        )
        const refusals = logLines
          .slice(from)
          .map((l) => JSON.parse(l) as Record<string, unknown>)
          .filter((r) => typeof r.msg === 'string' && r.msg.startsWith('Failed authentication with'))
        assert.ok(refusals.length > 0, 'the server logs the refusal')
        for (const r of refusals) {
          assert.equal(r.listener, protocol)
          assert.equal(r.mechanism, mechanism)
          // The reason: the nonce, not the password (which is right).
          assert.equal(r.detail, 'Invalid client nonce in the final client message.')
          assert.ok(!JSON.stringify(r).includes('kc-secret'))
        }
      })
    }
  }
})
