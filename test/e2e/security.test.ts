// SASL over SASL_PLAINTEXT and SASL_SSL (certificates made with openssl for the test), TLS client
// certificates on an SSL listener, refusals, pre-authentication rules and session expiry.
import assert from 'node:assert/strict'
import { createConnection } from 'node:net'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { ErrorCode } from '../../src/protocol/errors.js'
import { createLogger, type Logger } from '../../src/server/logger.js'
import { startTestServer, type TestServer } from '../server/harness.js'
import { rawFrame, requestFrame } from '../server/wire-client.js'
import {
  makeCerts,
  plainLogin,
  ScramClient,
  type SaslAuthenticateBody,
  SecureClient,
  scramLogin,
  type TestCerts,
} from '../server/auth/helpers.js'

const SCRAM_USERS = [
  scramUserEntry('alice', 'SCRAM-SHA-256', 'alice-secret'),
  scramUserEntry('alice', 'SCRAM-SHA-512', 'alice-secret'),
  scramUserEntry('bob', 'SCRAM-SHA-512', 'bob-secret'),
].join(',')

function capturingLogger(): { logger: Logger; text: () => string } {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(String(chunk))
      cb()
    },
  })
  return { logger: createLogger({ level: 'debug', destination: stream }), text: () => lines.join('') }
}

let certs: TestCerts
let ts: TestServer
const log = capturingLogger()
let plainPort: number
let sslPort: number

async function client(tls: boolean): Promise<SecureClient> {
  return SecureClient.connect(tls ? sslPort : plainPort, tls ? { ca: certs.caCert } : undefined)
}

async function withClient(tls: boolean, fn: (c: SecureClient) => Promise<void>): Promise<void> {
  const c = await client(tls)
  try {
    await fn(c)
  } finally {
    c.close()
  }
}

before(async () => {
  certs = makeCerts()
  ts = await startTestServer(
    {
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0',
      'ssl.keystore.location': certs.serverPem,
      'sasl.scram.users': SCRAM_USERS,
      'sasl.plain.users': 'carol:carol-pw',
      'connection.failed.authentication.delay.ms': '0',
      'sasl.server.max.receive.size': '1024',
    },
    { logger: log.logger },
  )
  const byName = new Map(ts.server.listeners.map((l) => [l.listenerName, l.port]))
  plainPort = byName.get('SASL_PLAINTEXT') as number
  sslPort = byName.get('SASL_SSL') as number
})

after(async () => {
  await ts?.stop()
  certs?.remove()
})

describe('SASL authentication', { timeout: 60_000 }, () => {
  for (const tls of [false, true]) {
    const where = tls ? 'SASL_SSL' : 'SASL_PLAINTEXT'
    for (const [mechanism, user, password] of [
      ['SCRAM-SHA-256', 'alice', 'alice-secret'],
      ['SCRAM-SHA-512', 'bob', 'bob-secret'],
    ]) {
      it(`${mechanism} succeeds over ${where}, then requests are served`, async () => {
        await withClient(tls, async (c) => {
          const versions = await c.request<{ errorCode: number; apiKeys: { apiKey: number }[] }>(18, 3, {
            clientSoftwareName: 'test',
            clientSoftwareVersion: '1',
          })
          assert.equal(versions?.errorCode, 0)
          assert.ok(versions?.apiKeys.some((k) => k.apiKey === 36))
          const final = await scramLogin(c, mechanism, user, password)
          assert.equal(final?.errorCode, 0)
          assert.equal(final?.sessionLifetimeMs, 0n)
          const md = await c.request<{ brokers: unknown[] }>(3, 12, { topics: null })
          assert.equal(md?.brokers.length, 1)
        })
      })
    }

    it(`PLAIN succeeds over ${where} (SaslAuthenticate v0 and v1)`, async () => {
      for (const version of [0, 1]) {
        await withClient(tls, async (c) => {
          const r = await plainLogin(c, 'carol', 'carol-pw', version)
          assert.equal(r?.errorCode, 0)
          assert.ok(await c.request(3, 1, { topics: null }))
        })
      }
    })

    it(`a wrong SCRAM password over ${where} gets SASL_AUTHENTICATION_FAILED and a close`, async () => {
      await withClient(tls, async (c) => {
        const r = await scramLogin(c, 'SCRAM-SHA-256', 'alice', 'not-it')
        assert.equal(r?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
        assert.equal(
          r?.errorMessage,
          'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256',
        )
        assert.ok(await c.closedWithin(2000))
      })
    })
  }

  it('an unknown SCRAM user gets the same generic answer at the first message', async () => {
    await withClient(false, async (c) => {
      const r = await scramLogin(c, 'SCRAM-SHA-512', 'mallory', 'x')
      assert.equal(r?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
      assert.match(r?.errorMessage ?? '', /due to invalid credentials with SASL mechanism SCRAM-SHA-512$/)
      assert.ok(await c.closedWithin(2000))
    })
  })

  it('a SCRAM user without a credential for the mechanism is refused', async () => {
    await withClient(false, async (c) => {
      const r = await scramLogin(c, 'SCRAM-SHA-256', 'bob', 'bob-secret')
      assert.equal(r?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
    })
  })

  it('a wrong PLAIN password gets Kafka’s PLAIN text', async () => {
    await withClient(true, async (c) => {
      const r = await plainLogin(c, 'carol', 'nope')
      assert.equal(r?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
      assert.equal(r?.errorMessage, 'Authentication failed: Invalid username or password')
      assert.ok(await c.closedWithin(2000))
    })
  })

  it('an unsupported mechanism gets UNSUPPORTED_SASL_MECHANISM with the enabled list, then a close', async () => {
    await withClient(false, async (c) => {
      const r = await c.request<{ errorCode: number; mechanisms: string[] }>(17, 1, { mechanism: 'GSSAPI' })
      assert.equal(r?.errorCode, ErrorCode.UNSUPPORTED_SASL_MECHANISM)
      assert.deepEqual(r?.mechanisms, ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'])
      assert.ok(await c.closedWithin(2000))
    })
  })

  it('SaslHandshake v0 exchanges raw tokens', async () => {
    await withClient(false, async (c) => {
      const hs = await c.request<{ errorCode: number }>(17, 0, { mechanism: 'SCRAM-SHA-256' })
      assert.equal(hs?.errorCode, 0)
      const scram = new ScramClient('SCRAM-SHA-256', 'alice', 'alice-secret')
      const raw = (b: Buffer) => {
        const out = Buffer.alloc(4 + b.length)
        out.writeInt32BE(b.length, 0)
        b.copy(out, 4)
        return out
      }
      c.write(raw(scram.first()))
      const serverFirst = await c.nextFrame()
      assert.ok(serverFirst)
      c.write(raw(scram.final(serverFirst)))
      const serverFinal = await c.nextFrame()
      assert.ok(serverFinal && scram.verify(serverFinal))
      assert.ok(await c.request(3, 1, { topics: null }))
    })
  })
})

describe('before authentication', { timeout: 60_000 }, () => {
  it('any API but ApiVersions and SaslHandshake closes the connection without an answer', async () => {
    for (const [key, version, body] of [
      [3, 12, { topics: null }],
      [19, 7, { topics: [], timeoutMs: 1 }],
      [36, 2, { authBytes: Buffer.from('x') }],
    ] as const) {
      await withClient(false, async (c) => {
        c.write(requestFrame(key, version, 1, body))
        assert.equal(await c.nextFrame(), null)
        assert.ok(await c.closedWithin(2000))
      })
    }
  })

  it('ApiVersions is answered once before the handshake; a second one closes', async () => {
    await withClient(false, async (c) => {
      assert.ok(await c.request(18, 0))
      c.write(requestFrame(18, 0, 9, {}))
      assert.equal(await c.nextFrame(), null)
    })
  })

  it('after the handshake only SaslAuthenticate is accepted', async () => {
    await withClient(false, async (c) => {
      assert.equal((await c.request<{ errorCode: number }>(17, 1, { mechanism: 'PLAIN' }))?.errorCode, 0)
      c.write(requestFrame(3, 12, 5, { topics: null }))
      assert.equal(await c.nextFrame(), null)
    })
  })

  it('malformed SASL frames are refused and the server keeps serving', async () => {
    const cases: ((c: SecureClient) => Promise<void>)[] = [
      // SaslAuthenticate whose body is cut short.
      async (c) => {
        await c.request(17, 1, { mechanism: 'SCRAM-SHA-256' })
        c.write(rawFrame(36, 1, 7, Buffer.from([0, 0, 0, 50, 1, 2])))
        assert.equal(await c.nextFrame(), null)
      },
      // A garbage SCRAM token: answered with SASL_AUTHENTICATION_FAILED.
      async (c) => {
        await c.request(17, 1, { mechanism: 'SCRAM-SHA-256' })
        const r = await c.request<SaslAuthenticateBody>(36, 2, {
          authBytes: Buffer.from([0xff, 0, 0x2c, 0x3d]),
        })
        assert.equal(r?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
        assert.ok(await c.closedWithin(2000))
      },
      // A PLAIN token without separators.
      async (c) => {
        await c.request(17, 1, { mechanism: 'PLAIN' })
        const r = await c.request<SaslAuthenticateBody>(36, 2, { authBytes: Buffer.from('carol') })
        assert.equal(r?.errorMessage, 'Invalid SASL/PLAIN response: expected 3 tokens, got 1')
      },
      // A truncated header.
      async (c) => {
        c.write(Buffer.from([0, 0, 0, 3, 0, 17, 0]))
        assert.equal(await c.nextFrame(), null)
      },
      // A frame above sasl.server.max.receive.size (1024 here) before authentication.
      async (c) => {
        const big = Buffer.alloc(4 + 2000)
        big.writeInt32BE(2000, 0)
        c.write(big)
        assert.equal(await c.nextFrame(), null)
      },
      // A handshake with an unsupported version.
      async (c) => {
        c.write(rawFrame(17, 9, 1, Buffer.from([0, 1, 0x41])))
        assert.equal(await c.nextFrame(), null)
      },
    ]
    for (const run of cases) {
      await withClient(false, async (c) => {
        await run(c)
        assert.ok(await c.closedWithin(2000))
      })
    }
    // The server is unharmed.
    await withClient(true, async (c) => {
      assert.equal((await scramLogin(c, 'SCRAM-SHA-512', 'bob', 'bob-secret'))?.errorCode, 0)
    })
  })

  it('after authentication SaslAuthenticate gets ILLEGAL_SASL_STATE', async () => {
    await withClient(false, async (c) => {
      assert.equal((await plainLogin(c, 'carol', 'carol-pw', 0))?.errorCode, 0)
      // v0 clients cannot re-authenticate: the handshake reaches the API handler.
      const hs = await c.request<{ errorCode: number }>(17, 1, { mechanism: 'PLAIN' })
      assert.equal(hs?.errorCode, ErrorCode.ILLEGAL_SASL_STATE)
      const r = await c.request<SaslAuthenticateBody>(36, 1, { authBytes: Buffer.alloc(0) })
      assert.equal(r?.errorCode, ErrorCode.ILLEGAL_SASL_STATE)
    })
  })

  it('failures are logged with the client address and without secrets', () => {
    const text = log.text()
    assert.match(
      text,
      /Failed authentication with 127\.0\.0\.1:\d+ \(Authentication failed during authentication due to invalid credentials/,
    )
    for (const secret of ['not-it', 'nope', 'alice-secret', 'bob-secret', 'carol-pw']) {
      assert.ok(!text.includes(secret), `the log holds ${secret}`)
    }
  })
})

describe('TLS connections that fail their handshake', { timeout: 60_000 }, () => {
  /** The log line naming the connection from local port `port`, once it is written. */
  const lineFor = async (port: number, text: string) => {
    const find = () =>
      log
        .text()
        .split('\n')
        .find((l) => l.includes(text) && l.includes(`"remote":"127.0.0.1:${port}"`))
    for (let i = 0; i < 150 && find() === undefined; i++) await new Promise((r) => setTimeout(r, 20))
    const found = find()
    assert.ok(found, `no "${text}" line for port ${port}`)
    return JSON.parse(found!) as { level: string; msg: string }
  }

  it('one that ends before its handshake is let go at once, logged as a disconnection', async () => {
    const sock = createConnection({ host: '127.0.0.1', port: sslPort })
    const local = await new Promise<number>((resolve) => sock.once('connect', () => resolve(sock.localPort!)))
    const closed = new Promise<void>((resolve) => sock.once('close', () => resolve()))
    sock.end()
    await closed
    const line = await lineFor(local, 'disconnected during the SSL handshake')
    assert.equal(line.level, 'debug')
    assert.equal(line.msg, 'Connection with 127.0.0.1 disconnected during the SSL handshake')
  })

  it('one that speaks plaintext is a failed authentication with its address', async () => {
    const sock = createConnection({ host: '127.0.0.1', port: sslPort })
    const local = await new Promise<number>((resolve) => sock.once('connect', () => resolve(sock.localPort!)))
    sock.write(requestFrame(18, 3, 1, { clientSoftwareName: 'test', clientSoftwareVersion: '1' }))
    const line = await lineFor(local, 'SSL handshake failed')
    sock.destroy()
    assert.equal(line.level, 'info')
    assert.equal(line.msg, 'Failed authentication with 127.0.0.1 (SSL handshake failed)')
  })
})

describe('session lifetime and re-authentication', { timeout: 60_000 }, () => {
  let short: TestServer
  before(async () => {
    short = await startTestServer({
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'sasl.scram.users': SCRAM_USERS,
      'connections.max.reauth.ms': '600',
      'connection.failed.authentication.delay.ms': '0',
    })
  })
  after(async () => {
    await short?.stop()
  })
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

  it('sends SessionLifetimeMs and closes on the first request after expiry', async () => {
    const c = await SecureClient.connect(short.port)
    try {
      const r = await scramLogin(c, 'SCRAM-SHA-256', 'alice', 'alice-secret', 1)
      assert.equal(r?.sessionLifetimeMs, 600n)
      assert.ok(await c.request(3, 12, { topics: null }))
      await sleep(700)
      assert.equal(await c.request(3, 12, { topics: null }), null)
      assert.ok(await c.closedWithin(2000))
    } finally {
      c.close()
    }
  })

  it('re-authentication renews the session; a principal change is refused', async () => {
    const c = await SecureClient.connect(short.port)
    try {
      assert.equal((await scramLogin(c, 'SCRAM-SHA-256', 'alice', 'alice-secret'))?.errorCode, 0)
      await sleep(400)
      const again = await scramLogin(c, 'SCRAM-SHA-256', 'alice', 'alice-secret')
      assert.equal(again?.errorCode, 0)
      assert.equal(again?.sessionLifetimeMs, 600n)
      await sleep(400) // 800 ms after the first login, 400 after the second
      assert.ok(await c.request(3, 12, { topics: null }))
    } finally {
      c.close()
    }
    const d = await SecureClient.connect(short.port)
    try {
      assert.equal((await scramLogin(d, 'SCRAM-SHA-512', 'alice', 'alice-secret'))?.errorCode, 0)
      const r = await scramLogin(d, 'SCRAM-SHA-512', 'bob', 'bob-secret')
      assert.equal(r?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
      assert.equal(
        r?.errorMessage,
        'Cannot change principals during re-authentication from User.alice: User.bob',
      )
      assert.ok(await d.closedWithin(2000))
    } finally {
      d.close()
    }
  })
})

describe('SSL listener', { timeout: 60_000 }, () => {
  it('takes the principal from the client certificate and refuses a client without one', async () => {
    const seen: string[] = []
    const ssl = await startTestServer(
      {
        listeners: 'SSL://127.0.0.1:0',
        'ssl.keystore.certificate.chain': '',
        'ssl.keystore.location': certs.serverPem,
        'ssl.truststore.location': certs.caCert,
        'ssl.client.auth': 'required',
      },
      {
        authorizer: {
          authorize: (principal) => {
            seen.push(principal)
            return true
          },
        },
      },
    ).catch((e: Error) => e)
    // Both key store forms at once are refused.
    assert.ok(ssl instanceof Error && /both set/.test(ssl.message))

    const server = await startTestServer(
      {
        listeners: 'SSL://127.0.0.1:0',
        'ssl.keystore.location': certs.serverPem,
        'ssl.truststore.location': certs.caCert,
        'ssl.client.auth': 'required',
      },
      {
        authorizer: {
          authorize: (principal) => {
            seen.push(principal)
            return true
          },
        },
      },
    )
    try {
      const c = await SecureClient.connect(server.port, {
        ca: certs.caCert,
        cert: certs.clientCert,
        key: certs.clientKey,
      })
      try {
        // DescribeCluster asks the authorizer about the cluster, with the connection's principal.
        assert.ok(await c.request(60, 0, { includeClusterAuthorizedOperations: true, endpointType: 1 }))
        assert.ok(seen.includes('User:CN=writer,O=Example,C=FR'), seen.join(' '))
      } finally {
        c.close()
      }
      const anonymous = await SecureClient.connect(server.port, { ca: certs.caCert }).catch(() => null)
      if (anonymous !== null) {
        try {
          assert.equal(await anonymous.request(18, 0).catch(() => null), null)
        } finally {
          anonymous.close()
        }
      }
    } finally {
      await server.stop()
    }
  })
})
