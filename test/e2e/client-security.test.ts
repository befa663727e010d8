// Topograph's clients against a real Topograph server with secured listeners (certificates made
// with openssl for the test): the admin client over SCRAM-SHA-256/512 and PLAIN, refused
// credentials without a retry storm, TLS with and without hostname verification, a client
// certificate principal, a StreamsMember over SASL_SSL, re-authentication before the session
// ends, and the kafka-streams-groups and console commands with --command-config.
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Writable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { runConsoleCommand } from '../../src/cli/console-command.js'
import { execute } from '../../src/cli/kafka-streams-groups.js'
import {
  Admin,
  type AdminOptions,
  KafkaError,
  SaslAuthenticationError,
  SslAuthenticationError,
} from '../../src/clients/admin/index.js'
import { StreamsMember, Topology } from '../../src/clients/streams/index.js'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { createLogger } from '../../src/server/logger.js'
import { makeCerts, signedCert, type TestCerts } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const SCRAM_USERS = [
  scramUserEntry('alice', 'SCRAM-SHA-256', 'alice-secret'),
  scramUserEntry('bob', 'SCRAM-SHA-512', 'bob-secret'),
].join(',')
const SCRAM = 'org.apache.kafka.common.security.scram.ScramLoginModule'
const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule'
const APP = 'secure-app'

let certs: TestCerts
let ts: TestServer
let port: Record<'SASL_PLAINTEXT' | 'SASL_SSL' | 'SSL' | 'MISNAMED', number>
const serverLog: string[] = []
const principals: string[] = []
const admins: Admin[] = []
let member: StreamsMember | null = null

function admin(opts: Omit<AdminOptions, 'bootstrapServers'>, listener: keyof typeof port): Admin {
  const a = Admin.create({
    bootstrapServers: `127.0.0.1:${port[listener]}`,
    requestTimeoutMs: 5000,
    retryBackoffMs: 20,
    retryBackoffMaxMs: 100,
    ...opts,
  })
  admins.push(a)
  return a
}

function scramKeys(mechanism: string, user: string, password: string, tls: boolean): AdminOptions {
  return {
    bootstrapServers: '',
    'security.protocol': tls ? 'SASL_SSL' : 'SASL_PLAINTEXT',
    'sasl.mechanism': mechanism,
    'sasl.jaas.config': `${SCRAM} required username="${user}" password="${password}";`,
    ...(tls ? { 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.caCert } : {}),
  }
}

const strip = ({ bootstrapServers: _, ...rest }: AdminOptions) => rest

async function waitFor(what: string, cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}

const failedAuthentications = () => serverLog.filter((l) => l.includes('Failed authentication')).length

before(async () => {
  certs = makeCerts()
  const misnamed = signedCert(certs.dir, 'misnamed', '/CN=broker.invalid', 'DNS:broker.invalid').pem
  ts = await startTestServer(
    {
      listeners:
        'SASL_PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0,SSL://127.0.0.1:0,MISNAMED://127.0.0.1:0',
      'listener.security.protocol.map':
        'SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL,MISNAMED:SSL',
      'ssl.keystore.location': certs.serverPem,
      'listener.name.ssl.ssl.truststore.location': certs.caCert,
      'listener.name.ssl.ssl.client.auth': 'required',
      'listener.name.misnamed.ssl.keystore.location': misnamed,
      'sasl.scram.users': SCRAM_USERS,
      'sasl.plain.users': 'carol:carol-pw',
      'connection.failed.authentication.delay.ms': '0',
      'coordinator.storage': 'memory',
      'group.streams.initial.rebalance.delay.ms': '0',
      'group.streams.assignment.interval.ms': '0',
      'group.streams.heartbeat.interval.ms': '200',
      'group.streams.min.heartbeat.interval.ms': '200',
    },
    {
      logger: createLogger({
        level: 'info',
        destination: new Writable({
          write(chunk, _enc, cb) {
            serverLog.push(String(chunk))
            cb()
          },
        }),
      }),
      authorizer: {
        authorize: (principal) => {
          principals.push(principal)
          return true
        },
      },
    },
  )
  const byName = new Map(ts.server.listeners.map((l) => [l.listenerName, l.port]))
  port = {
    SASL_PLAINTEXT: byName.get('SASL_PLAINTEXT')!,
    SASL_SSL: byName.get('SASL_SSL')!,
    SSL: byName.get('SSL')!,
    MISNAMED: byName.get('MISNAMED')!,
  }
  const setup = admin(strip(scramKeys('SCRAM-SHA-512', 'bob', 'bob-secret', true)), 'SASL_SSL')
  await setup.createTopics([{ name: 'orders', numPartitions: 2 }]).all()
})

after(async () => {
  await member?.close()
  for (const a of admins) await a.close()
  await ts?.stop()
  certs?.remove()
})

describe('clients over secured listeners', { timeout: 90_000 }, () => {
  it('a StreamsMember joins over SASL_SSL (SCRAM-SHA-512) and gets every task', async () => {
    member = new StreamsMember({
      bootstrapServers: `127.0.0.1:${port.SASL_SSL}`,
      applicationId: APP,
      topology: new Topology().addSource('src', 'orders').addProcessor('proc', ['src']),
      rebalanceTimeoutMs: 5000,
      retryBackoffMs: 20,
      securityProtocol: 'SASL_SSL',
      ssl: { ca: readFileSync(certs.caCert, 'utf8') },
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'bob', password: 'bob-secret' },
    })
    await member.start()
    await waitFor('every task', () => member!.tasks().activeTasks.flatMap((t) => t.partitions).length === 2)
    assert.ok(principals.includes('User:bob'), 'the broker saw the SASL principal')
  })

  // Options are built when the test runs: the certificates exist only after before().
  const cases: Array<[string, () => AdminOptions, keyof typeof port]> = [
    [
      'SCRAM-SHA-256 over SASL_SSL',
      () => scramKeys('SCRAM-SHA-256', 'alice', 'alice-secret', true),
      'SASL_SSL',
    ],
    [
      'SCRAM-SHA-512 over SASL_PLAINTEXT',
      () => scramKeys('SCRAM-SHA-512', 'bob', 'bob-secret', false),
      'SASL_PLAINTEXT',
    ],
    [
      'PLAIN over SASL_SSL (JAAS form, inline PEM trust store)',
      () => ({
        bootstrapServers: '',
        'security.protocol': 'SASL_SSL',
        'sasl.mechanism': 'PLAIN',
        'sasl.jaas.config': `${PLAIN} required username="carol" password="carol-pw";`,
        'ssl.truststore.certificates': readFileSync(certs.caCert, 'utf8'),
      }),
      'SASL_SSL',
    ],
    [
      'PLAIN over SASL_PLAINTEXT (sasl.username/sasl.password)',
      () => ({
        bootstrapServers: '',
        'security.protocol': 'SASL_PLAINTEXT',
        'sasl.mechanism': 'PLAIN',
        'sasl.username': 'carol',
        'sasl.password': 'carol-pw',
      }),
      'SASL_PLAINTEXT',
    ],
  ]
  for (const [name, opts, listener] of cases) {
    it(`admin listGroups and describeStreamsGroups with ${name}`, async () => {
      const a = admin(strip(opts()), listener)
      const groups = await a.listGroups({ types: ['streams'], timeoutMs: 10_000 })
      assert.deepEqual(
        groups.map((g) => g.groupId),
        [APP],
      )
      const d = await a.describeStreamsGroups([APP], { timeoutMs: 10_000 }).get(APP)
      assert.equal(d.members.length, 1)
      assert.equal(d.members[0]!.memberId, member?.memberId)
    })
  }

  for (const [mechanism, user, message] of [
    [
      'SCRAM-SHA-256',
      'alice',
      'Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256',
    ],
    ['PLAIN', 'carol', 'Authentication failed: Invalid username or password'],
  ] as const) {
    it(`a wrong ${mechanism} password fails at once with the broker's message, without retries`, async () => {
      const before = failedAuthentications()
      const a = admin(
        {
          'security.protocol': 'SASL_SSL',
          'sasl.mechanism': mechanism,
          'sasl.jaas.config': `${mechanism === 'PLAIN' ? PLAIN : SCRAM} required username="${user}" password="WRONG-pw-42";`,
          'ssl.truststore.location': certs.caCert,
        },
        'SASL_SSL',
      )
      const started = Date.now()
      const err = await a.listGroups({ timeoutMs: 20_000 }).then(
        () => assert.fail('listGroups succeeded with a wrong password'),
        (e: unknown) => e,
      )
      assert.ok(err instanceof SaslAuthenticationError, String(err))
      assert.equal(err.message, message)
      assert.equal(err.retriable, false)
      assert.equal(err.toString(), `org.apache.kafka.common.errors.SaslAuthenticationException: ${message}`)
      assert.ok(Date.now() - started < 5000, 'no retries until the deadline')
      assert.ok(!String(err.stack).includes('WRONG-pw-42'))
      await waitFor('the server log line', () => failedAuthentications() > before, 2000)
      await new Promise((r) => setTimeout(r, 300))
      assert.equal(failedAuthentications() - before, 1, 'exactly one authentication attempt')
    })
  }

  it('SASL against a listener without SASL fails clearly, without retries', async () => {
    const wrongListener = admin(
      {
        ...strip(scramKeys('SCRAM-SHA-256', 'alice', 'alice-secret', true)),
        'ssl.endpoint.identification.algorithm': '',
      },
      'MISNAMED',
    )
    await assert.rejects(
      wrongListener.listTopics({ timeoutMs: 10_000 }),
      (e: unknown) =>
        e instanceof KafkaError &&
        e.errorName === 'ILLEGAL_SASL_STATE' &&
        !e.retriable &&
        /the listener does not use SASL, check security.protocol/.test(e.message),
    )
  })

  it('TLS hostname verification: on by default, off with an empty ssl.endpoint.identification.algorithm', async () => {
    const verifying = admin(
      { 'security.protocol': 'SSL', 'ssl.truststore.location': certs.caCert },
      'MISNAMED',
    )
    await assert.rejects(
      verifying.listTopics({ timeoutMs: 10_000 }),
      (e: unknown) => e instanceof SslAuthenticationError && /broker\.invalid|altnames/i.test(e.message),
    )
    const relaxed = admin(
      {
        'security.protocol': 'SSL',
        'ssl.truststore.location': certs.caCert,
        'ssl.endpoint.identification.algorithm': '',
      },
      'MISNAMED',
    )
    assert.ok((await relaxed.listTopics({ timeoutMs: 10_000 })).includes('orders'))
    // Without the test CA the chain is not trusted, hostname check or not.
    const untrusted = admin(
      { 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': '' },
      'MISNAMED',
    )
    await assert.rejects(untrusted.listTopics({ timeoutMs: 10_000 }), SslAuthenticationError)
  })

  it('a client certificate gives the principal on an ssl.client.auth=required listener', async () => {
    const keystore = join(certs.dir, 'client.pem')
    writeFileSync(keystore, readFileSync(certs.clientKey, 'utf8') + readFileSync(certs.clientCert, 'utf8'))
    principals.length = 0
    const fromFile = admin(
      {
        'security.protocol': 'SSL',
        'ssl.truststore.location': certs.caCert,
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': keystore,
      },
      'SSL',
    )
    await fromFile.createTopics([{ name: 'by-cert', numPartitions: 1 }]).all()
    assert.ok(principals.includes('User:CN=writer,O=Example,C=FR'), principals.join(' '))
    principals.length = 0
    const inline = admin(
      {
        'security.protocol': 'SSL',
        'ssl.truststore.certificates': readFileSync(certs.caCert, 'utf8'),
        'ssl.keystore.certificate.chain': readFileSync(certs.clientCert, 'utf8'),
        'ssl.keystore.key': readFileSync(certs.clientKey, 'utf8'),
      },
      'SSL',
    )
    await inline.createTopics([{ name: 'by-inline-cert', numPartitions: 1 }]).all()
    assert.ok(principals.includes('User:CN=writer,O=Example,C=FR'), principals.join(' '))
    const anonymous = admin({ 'security.protocol': 'SSL', 'ssl.truststore.location': certs.caCert }, 'SSL')
    // TLS 1.3: the broker's refusal arrives as an alert after the client's side of the handshake.
    await assert.rejects(
      anonymous.listTopics({ timeoutMs: 10_000 }),
      (e: unknown) => e instanceof SslAuthenticationError && /certificate required/.test(e.message),
    )
  })

  it('kafka-streams-groups --command-config against the SASL_SSL listener', async () => {
    const file = join(certs.dir, 'admin.properties')
    writeFileSync(
      file,
      [
        'security.protocol=SASL_SSL',
        'sasl.mechanism=SCRAM-SHA-256',
        `sasl.jaas.config=${SCRAM} required \\`,
        '    username="alice" \\',
        '    password="alice-secret";',
        'ssl.truststore.type=PEM',
        `ssl.truststore.location=${certs.caCert}`,
        '',
      ].join('\n'),
    )
    const run = async (args: string[]) => {
      let out = ''
      let err = ''
      const code = await execute(args, { out: (s) => void (out += s), err: (s) => void (err += s) })
      return { code, out, err }
    }
    const bootstrap = `127.0.0.1:${port.SASL_SSL}`
    const list = await run(['--bootstrap-server', bootstrap, '--list', '--command-config', file])
    assert.equal(list.code, 0, list.out + list.err)
    assert.equal(list.out, `${APP}\n`)
    const described = await run([
      '--bootstrap-server',
      bootstrap,
      '--describe',
      '--members',
      '--group',
      APP,
      '--command-config',
      file,
    ])
    assert.equal(described.code, 0, described.out + described.err)
    assert.ok(described.out.includes(member!.memberId), described.out)

    const wrong = join(certs.dir, 'wrong.properties')
    writeFileSync(wrong, readFileSync(file, 'utf8').replace('alice-secret', 'WRONG-pw-42'))
    const refused = await run([
      '--bootstrap-server',
      bootstrap,
      '--list',
      '--command-config',
      wrong,
      '--timeout',
      '20000',
    ])
    assert.equal(refused.code, 1)
    // Kafka's form: ListGroups fails at finding the brokers, rethrown by the tool in a RuntimeException
    assert.equal(
      refused.out,
      '\nError: Executing streams group command failed due to java.util.concurrent.ExecutionException: org.apache.kafka.common.KafkaException: Failed to find brokers to send ListGroups\n',
    )
    assert.equal(
      refused.err.split('\n')[0],
      'java.lang.RuntimeException: java.util.concurrent.ExecutionException: org.apache.kafka.common.KafkaException: Failed to find brokers to send ListGroups',
    )
    assert.match(
      refused.err,
      /\nCaused by: org\.apache\.kafka\.common\.errors\.SaslAuthenticationException: Authentication failed during authentication due to invalid credentials/,
    )
    assert.ok(!(refused.out + refused.err).includes('WRONG-pw-42'))

    const jks = join(certs.dir, 'jks.properties')
    writeFileSync(
      jks,
      'security.protocol=SSL\nssl.truststore.type=JKS\nssl.truststore.location=/nowhere.jks\n',
    )
    const badStore = await run(['--bootstrap-server', bootstrap, '--list', '--command-config', jks])
    assert.equal(badStore.code, 1)
    assert.match(badStore.out, /ConfigException: ssl.truststore.type=JKS is not supported: only PEM/)
  })

  it('topograph console --command-config serves the groups of the SASL_SSL listener', async () => {
    const file = join(certs.dir, 'console.properties')
    writeFileSync(
      file,
      `security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.jaas.config=${PLAIN} required username="carol" password="carol-pw";\nssl.truststore.location=${certs.caCert}\n`,
    )
    const out: string[] = []
    const err: string[] = []
    let stop: ((s: string) => void) | null = null
    const io = {
      stdout: (t: string) => void out.push(t),
      stderr: (t: string) => void err.push(t),
      onStopSignal: (h: (s: string) => void) => {
        stop = h
        return () => {
          stop = null
        }
      },
    }
    const exit = runConsoleCommand(
      [
        '--bootstrap-server',
        `127.0.0.1:${port.SASL_SSL}`,
        '--listener',
        'http://127.0.0.1:0',
        '--command-config',
        file,
      ],
      io,
    )
    try {
      await waitFor('the console', () => out.join('').includes('at http://') || err.length > 0)
      assert.deepEqual(err, [])
      const url = /at (http:\/\/\S+)/.exec(out.join(''))![1]!
      const res = await fetch(`${url}/api/groups`, { signal: AbortSignal.timeout(10_000) })
      assert.equal(res.status, 200)
      const body = (await res.json()) as { groups: Array<{ groupId: string; memberCount: number | null }> }
      assert.deepEqual(
        body.groups.map((g) => [g.groupId, g.memberCount]),
        [[APP, 1]],
      )
    } finally {
      ;(stop as ((s: string) => void) | null)?.('SIGTERM')
    }
    assert.equal(await exit, 0)

    const missing = await runConsoleCommand(
      [
        '--bootstrap-server',
        `127.0.0.1:${port.SASL_SSL}`,
        '--command-config',
        join(certs.dir, 'none.properties'),
      ],
      io,
    )
    assert.equal(missing, 1)
    assert.match(err.join(''), /--command-config: .*none\.properties \(No such file or directory\)/)
    const jks = join(certs.dir, 'console-jks.properties')
    writeFileSync(
      jks,
      'security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=/nowhere.p12\n',
    )
    err.length = 0
    out.length = 0
    const refused = await runConsoleCommand(
      [
        '--bootstrap-server',
        `127.0.0.1:${port.SSL}`,
        '--listener',
        'http://127.0.0.1:0',
        '--command-config',
        jks,
      ],
      io,
    )
    assert.equal(refused, 1)
    assert.match(
      err.join(''),
      /^topograph console: --command-config: ssl\.keystore\.type=PKCS12 is not supported: only PEM/,
    )
    assert.ok(!out.join('').includes('Console for'), 'no console was started')
  })
})

describe('re-authentication (connections.max.reauth.ms)', { timeout: 60_000 }, () => {
  let short: TestServer
  before(async () => {
    short = await startTestServer({
      listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
      'sasl.scram.users': SCRAM_USERS,
      // The client re-authenticates at 85–95% of the session, so a session of 1 s left it 50–150 ms,
      // which a timer on a loaded machine overran (the broker then closes the connection, as
      // Kafka's does, and the client reconnects); 5 s leaves 250–750 ms.
      'connections.max.reauth.ms': '5000',
      'sasl.enabled.mechanisms': 'SCRAM-SHA-256',
      'coordinator.storage': 'memory',
    })
  })
  after(async () => {
    await short?.stop()
  })

  it('a mechanism the broker does not enable is refused with the enabled list', async () => {
    const a = Admin.create({
      bootstrapServers: `127.0.0.1:${short.port}`,
      sasl: { mechanism: 'PLAIN', username: 'alice', password: 'alice-secret' },
    })
    admins.push(a)
    await assert.rejects(
      a.listTopics({ timeoutMs: 10_000 }),
      (e: unknown) =>
        e instanceof KafkaError &&
        e.errorName === 'UNSUPPORTED_SASL_MECHANISM' &&
        /Client SASL mechanism PLAIN is not enabled on .*; enabled mechanisms: SCRAM-SHA-256$/.test(
          e.message,
        ),
    )
  })

  it('re-authenticates on the same connection before the session ends; requests keep working', async () => {
    const lines: string[] = []
    const record = (o: object | string, msg?: string) => void lines.push(`${msg ?? ''} ${JSON.stringify(o)}`)
    const a = Admin.create({
      bootstrapServers: `127.0.0.1:${short.port}`,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'SCRAM-SHA-256',
      'sasl.jaas.config': `${SCRAM} required username="alice" password="alice-secret";`,
      requestTimeoutMs: 5000,
      logger: { debug: record, info: record, warn: record },
    })
    admins.push(a)
    const reauthenticated = () => lines.filter((l) => l.startsWith('SASL re-authentication succeeded'))
    // Requests every 50 ms until two re-authentications went through (the bound only catches a hang).
    const end = Date.now() + 40_000
    let calls = 0
    while (Date.now() < end && (reauthenticated().length < 2 || calls <= 20)) {
      await a.listTopics({ timeoutMs: 5000 })
      calls++
      await new Promise((r) => setTimeout(r, 50))
    }
    assert.ok(calls > 20)
    const first = lines.filter((l) => l.startsWith('SASL authentication succeeded'))
    const again = reauthenticated()
    assert.equal(first.length, 1, lines.join('\n'))
    assert.ok(again.length >= 2, lines.join('\n'))
    assert.ok(first[0]!.includes('"sessionLifetimeMs":5000'))
    assert.ok(!lines.join('\n').includes('alice-secret'), 'no secret in the client log')
  })
})
