// Client security settings (Kafka's keys, JAAS parsing, PEM handling) and the client side of the
// SASL mechanisms, checked against the RFC 7677 SCRAM-SHA-256 example exchange.
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { KafkaError, SaslAuthenticationError } from '../../../src/clients/network/errors.js'
import { createSaslMechanism } from '../../../src/clients/network/sasl.js'
import {
  parseJaasConfig,
  resolveSecurity,
  securityConfigFromProperties,
  tlsConnectOptions,
} from '../../../src/clients/network/security.js'

// Shapes only; never parsed as real certificates here.
const CERT = '-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----'
const KEY = '-----BEGIN PRIVATE KEY-----\nREVG\n-----END PRIVATE KEY-----'

let dir: string
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'topograph-client-security-'))
})
after(() => rmSync(dir, { recursive: true, force: true }))

const configError = (re: RegExp) => (e: unknown) =>
  e instanceof KafkaError &&
  e.javaClassName === 'org.apache.kafka.common.config.ConfigException' &&
  re.test(e.message)

describe('sasl.jaas.config', () => {
  it('reads Kafka’s PlainLoginModule and ScramLoginModule forms', () => {
    const p = parseJaasConfig(
      'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="a b;c\\"d";',
    )
    assert.equal(p.loginModule, 'org.apache.kafka.common.security.plain.PlainLoginModule')
    assert.equal(p.options.get('username'), 'alice')
    assert.equal(p.options.get('password'), 'a b;c"d')
    const s = parseJaasConfig(
      '  org.apache.kafka.common.security.scram.ScramLoginModule   required\n username = bob\n password="x=y" ;  ',
    )
    assert.equal(s.options.get('username'), 'bob')
    assert.equal(s.options.get('password'), 'x=y')
  })

  it('refuses malformed entries without repeating option values', () => {
    const bad = [
      ['', /login module class name/],
      ['org.Foo sometimes;', /control flag/],
      ['org.Foo required username="u" password="secret-value"', /must end with ";"/],
      ['org.Foo required password="secret-value', /unterminated quoted value of option password/],
      ['org.Foo required username;', /expected "=" after option username/],
      ['a.B required; c.D required;', /only one login module/],
    ] as const
    for (const [text, re] of bad) {
      assert.throws(
        () => parseJaasConfig(text),
        (e: unknown) => configError(re)(e) && !(e as Error).message.includes('secret-value'),
        text,
      )
    }
  })
})

describe('resolveSecurity', () => {
  it('defaults to PLAINTEXT and, as Kafka, ignores ssl/sasl keys without security.protocol', () => {
    assert.deepEqual(resolveSecurity({}), { protocol: 'PLAINTEXT', tls: null, sasl: null })
    assert.deepEqual(resolveSecurity({ 'sasl.mechanism': 'PLAIN', 'ssl.truststore.type': 'JKS' }), {
      protocol: 'PLAINTEXT',
      tls: null,
      sasl: null,
    })
  })

  it('SASL_SSL from Kafka keys: JAAS credentials, inline PEM trust store, hostname verification', () => {
    const r = resolveSecurity({
      'security.protocol': 'sasl_ssl',
      'sasl.mechanism': 'SCRAM-SHA-512',
      'sasl.jaas.config':
        'org.apache.kafka.common.security.scram.ScramLoginModule required username="alice" password="pw";',
      'ssl.truststore.type': 'PEM',
      // Kafka's properties files often carry inline PEM on one line.
      'ssl.truststore.certificates': CERT.replace(/\n/g, ' '),
    })
    assert.equal(r.protocol, 'SASL_SSL')
    assert.deepEqual(r.sasl, { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'pw' })
    assert.deepEqual(r.tls?.ca, [`${CERT}\n`])
    assert.equal(r.tls?.checkHostname, true)
    const opts = tlsConnectOptions(r.tls!, '127.0.0.1', 9093)
    assert.equal(opts.checkServerIdentity, undefined)
    assert.equal(opts.servername, undefined, 'no SNI for an IP address')
    assert.equal(tlsConnectOptions(r.tls!, 'broker.example', 9093).servername, 'broker.example')
  })

  it('Topograph’s sasl.username/sasl.password; PlainLoginModule implies PLAIN', () => {
    const r = resolveSecurity({
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'SCRAM-SHA-256',
      'sasl.username': 'u',
      'sasl.password': 'p',
    })
    assert.deepEqual(r.sasl, { mechanism: 'SCRAM-SHA-256', username: 'u', password: 'p' })
    const plain = resolveSecurity({
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.jaas.config':
        'org.apache.kafka.common.security.plain.PlainLoginModule required username=u password=p;',
    })
    assert.equal(plain.sasl?.mechanism, 'PLAIN')
  })

  it('key store file with key and chain, empty endpoint identification, enabled protocols', () => {
    const file = join(dir, 'client.pem')
    writeFileSync(file, `${KEY}\n${CERT}\n${CERT}\n`)
    const ca = join(dir, 'ca.pem')
    writeFileSync(ca, `${CERT}\n`)
    const r = resolveSecurity({
      'security.protocol': 'SSL',
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': file,
      'ssl.truststore.location': ca,
      'ssl.key.password': 'kp',
      'ssl.endpoint.identification.algorithm': '',
      'ssl.enabled.protocols': 'TLSv1.3,TLSv1.2',
    })
    assert.equal(r.tls?.key, `${KEY}\n`)
    assert.equal(r.tls?.cert, `${CERT}\n${CERT}\n`)
    assert.equal(r.tls?.passphrase, 'kp')
    assert.equal(r.tls?.checkHostname, false)
    assert.equal(r.tls?.minVersion, 'TLSv1.2')
    assert.equal(r.tls?.maxVersion, 'TLSv1.3')
    const opts = tlsConnectOptions(r.tls!, '127.0.0.1', 1)
    assert.equal(typeof opts.checkServerIdentity, 'function')
    assert.equal(opts.rejectUnauthorized, true, 'the chain is still verified')
  })

  it('structured options choose the protocol themselves', () => {
    const r = resolveSecurity({
      ssl: { ca: CERT, checkHostname: false },
      sasl: { mechanism: 'PLAIN', username: 'a', password: 'b' },
    })
    assert.equal(r.protocol, 'SASL_SSL')
    assert.deepEqual(r.tls?.ca, [CERT])
    assert.equal(resolveSecurity({ ssl: true }).protocol, 'SSL')
    assert.equal(
      resolveSecurity({ sasl: { mechanism: 'PLAIN', username: 'a', password: 'b' } }).protocol,
      'SASL_PLAINTEXT',
    )
  })

  it('refuses what it cannot honour with a ConfigException naming the key', () => {
    const jaas =
      'org.apache.kafka.common.security.scram.ScramLoginModule required username="u" password="hunter2";'
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { 'security.protocol': 'SSL', 'ssl.truststore.type': 'JKS' },
        /ssl.truststore.type=JKS is not supported: only PEM/,
      ],
      [
        { 'security.protocol': 'SSL', 'ssl.keystore.type': 'PKCS12' },
        /ssl.keystore.type=PKCS12 is not supported/,
      ],
      [
        { 'security.protocol': 'SSL', 'ssl.truststore.location': join(dir, 'missing.jks') },
        /Failed to load ssl.truststore.location/,
      ],
      [
        { 'security.protocol': 'SSL', 'ssl.endpoint.identification.algorithm': 'ldap' },
        /endpoint.identification/,
      ],
      [{ 'security.protocol': 'SSL', 'ssl.keystore.certificate.chain': CERT }, /must be set together/],
      [
        { 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'GSSAPI', 'sasl.jaas.config': jaas },
        /GSSAPI is not supported/,
      ],
      [{ 'security.protocol': 'SASL_SSL', 'sasl.jaas.config': jaas }, /sasl.mechanism is not set/],
      [{ 'security.protocol': 'SASL_SSL', 'sasl.mechanism': 'PLAIN' }, /SASL needs credentials/],
      [
        {
          'security.protocol': 'SASL_SSL',
          'sasl.mechanism': 'PLAIN',
          'sasl.jaas.config': 'com.sun.security.auth.module.Krb5LoginModule required;',
        },
        /Krb5LoginModule is not supported/,
      ],
      [{ 'security.protocol': 'TLS' }, /Invalid value TLS for configuration security.protocol/],
      [
        { securityProtocol: 'PLAINTEXT', ssl: true },
        /ssl options are set but security.protocol is PLAINTEXT/,
      ],
    ]
    for (const [opts, re] of cases) {
      assert.throws(
        () => resolveSecurity(opts),
        (e: unknown) => configError(re)(e) && !(e as Error).message.includes('hunter2'),
        JSON.stringify(opts),
      )
    }
    const jks = join(dir, 'store.jks')
    writeFileSync(jks, Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]))
    assert.throws(
      () => resolveSecurity({ 'security.protocol': 'SSL', 'ssl.truststore.location': jks }),
      configError(/is not a PEM file \(JKS and PKCS12 stores are not supported/),
    )
  })

  it('securityConfigFromProperties keeps the security keys and refuses Java-only ones', () => {
    const props = new Map([
      ['client.id', 'x'],
      ['security.protocol', 'SASL_SSL'],
      ['sasl.mechanism', 'PLAIN'],
      ['ssl.truststore.location', '/tmp/ca.pem'],
    ])
    assert.deepEqual(securityConfigFromProperties(props), {
      'security.protocol': 'SASL_SSL',
      'sasl.mechanism': 'PLAIN',
      'ssl.truststore.location': '/tmp/ca.pem',
    })
    assert.throws(
      () => securityConfigFromProperties({ 'sasl.login.callback.handler.class': 'com.example.Handler' }),
      configError(/sasl.login.callback.handler.class is not supported/),
    )
  })
})

describe('SASL mechanisms', () => {
  it('PLAIN sends NUL-separated authzid, user and password, then is complete', async () => {
    const m = createSaslMechanism({ mechanism: 'PLAIN', username: 'carol', password: 'pw' })
    assert.deepEqual(m.initial(), Buffer.from('\u0000carol\u0000pw'))
    assert.equal(m.complete, true)
    assert.equal(await m.next(Buffer.alloc(0)), null)
  })

  it('SCRAM-SHA-256 reproduces the RFC 7677 example and verifies the server signature', async () => {
    const m = createSaslMechanism(
      { mechanism: 'SCRAM-SHA-256', username: 'user', password: 'pencil' },
      'rOprNGfwEbeRWgbNEkqO',
    )
    assert.equal(m.initial().toString(), 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO')
    const final = await m.next(
      Buffer.from('r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'),
    )
    assert.equal(
      final?.toString(),
      'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
    )
    assert.equal(m.complete, false)
    assert.equal(await m.next(Buffer.from('v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')), null)
    assert.equal(m.complete, true)
  })

  it('SCRAM refuses a wrong server signature, a foreign nonce, few iterations and e=', async () => {
    const first = 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'
    const fresh = () =>
      createSaslMechanism(
        { mechanism: 'SCRAM-SHA-256', username: 'user', password: 'pencil' },
        'rOprNGfwEbeRWgbNEkqO',
      )
    const a = fresh()
    a.initial()
    await a.next(Buffer.from(first))
    await assert.rejects(
      a.next(Buffer.from('v=AAAA')),
      (e: unknown) => e instanceof SaslAuthenticationError && /server signature is invalid/.test(e.message),
    )
    assert.equal(a.complete, false)
    const b = fresh()
    b.initial()
    await assert.rejects(b.next(Buffer.from('r=other,s=AAAA,i=4096')), /does not extend the client nonce/)
    const c = fresh()
    c.initial()
    await assert.rejects(c.next(Buffer.from('r=rOprNGfwEbeRWgbNEkqOx,s=AAAA,i=1000')), /iteration count 1000/)
    const d = fresh()
    d.initial()
    await assert.rejects(d.next(Buffer.from('e=unknown-user')), /authentication failed: unknown-user/)
  })

  it('SCRAM escapes = and , in the user name and uses SHA-512 key sizes', async () => {
    const m = createSaslMechanism({ mechanism: 'SCRAM-SHA-512', username: 'a=b,c', password: 'p' }, 'n0nce')
    assert.equal(m.initial().toString(), 'n,,n=a=3Db=2Cc,r=n0nce')
    const final = await m.next(Buffer.from('r=n0nceSERVER,s=c2FsdA==,i=4096'))
    const proof = /,p=([^,]+)$/.exec(final!.toString())![1]!
    assert.equal(Buffer.from(proof, 'base64').length, 64)
  })
})
