import assert from 'node:assert/strict'
import { createHash, createHmac, pbkdf2Sync } from 'node:crypto'
import { describe, it } from 'node:test'
import {
  createMechanismServer,
  fixedScramCredentials,
  parsePlainUsers,
  PlainServer,
  SaslFailure,
} from '../../../src/server/auth/sasl.js'
import {
  computeScramCredential,
  formatScramUser,
  parseScramUsers,
  type ScramMechanism,
  ScramServer,
  scramUserEntry,
} from '../../../src/server/auth/scram.js'
import { ScramClient } from './helpers.js'

describe('SCRAM credentials', () => {
  it('match the RFC 7677 SCRAM-SHA-256 example exchange', () => {
    const salt = Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64')
    const cred = computeScramCredential('SCRAM-SHA-256', 'pencil', { salt, iterations: 4096 })
    const server = new ScramServer(
      'SCRAM-SHA-256',
      new Map([['user', cred]]),
      () => '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
    )
    const first = server.evaluate(Buffer.from('n,,n=user,r=rOprNGfwEbeRWgbNEkqO'))
    assert.equal(
      Buffer.from(first).toString(),
      'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
    )
    const final = server.evaluate(
      Buffer.from(
        'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
      ),
    )
    assert.equal(Buffer.from(final).toString(), 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')
    assert.equal(server.complete, true)
    assert.equal(server.user, 'user')
  })

  it('round-trip through the config format and hold no password', () => {
    const entry = scramUserEntry('alice', 'SCRAM-SHA-512', 'alice-secret', { iterations: 8192 })
    assert.ok(!entry.includes('alice-secret'))
    const parsed = parseScramUsers(`${entry},${scramUserEntry('bob', 'SCRAM-SHA-256', 'b')}`)
    const alice = parsed.get('SCRAM-SHA-512')?.get('alice')
    assert.ok(alice)
    assert.equal(alice.iterations, 8192)
    assert.equal(alice.salt.length, 32)
    assert.equal(formatScramUser('alice', alice), entry)
    assert.equal(parsed.get('SCRAM-SHA-256')?.get('bob')?.iterations, 4096)
  })

  it('refuse bad entries without echoing them', () => {
    const good = scramUserEntry('alice', 'SCRAM-SHA-256', 'pw').split(':')
    const cases: [string, RegExp][] = [
      ['alice:SCRAM-SHA-256:4096', /entry 1 is not user:mechanism/],
      [[...good.slice(0, 1), 'SCRAM-SHA-1', ...good.slice(2)].join(':'), /names mechanism SCRAM-SHA-1/],
      [[...good.slice(0, 2), '1000', ...good.slice(3)].join(':'), /at least 4096/],
      [[...good.slice(0, 4), 'not*base64', good[5]].join(':'), /storedKey that is not base64/],
      [[...good.slice(0, 4), good[5], Buffer.alloc(5).toString('base64')].join(':'), /wrong length/],
      [`${good.join(':')},${good.join(':')}`, /two SCRAM-SHA-256 credentials/],
    ]
    for (const [text, re] of cases) {
      assert.throws(
        () => parseScramUsers(text),
        (e: Error) => re.test(e.message) && !e.message.includes(good[4]),
      )
    }
    assert.throws(() => computeScramCredential('SCRAM-SHA-256', 'x', { iterations: 100 }), RangeError)
    assert.throws(() => scramUserEntry('a:b', 'SCRAM-SHA-256', 'x'), RangeError)
  })
})

describe('ScramServer', () => {
  const creds = new Map([
    ['alice', computeScramCredential('SCRAM-SHA-512', 'right')],
    ['a,b=c', computeScramCredential('SCRAM-SHA-512', 'odd')],
  ])

  it('accepts the right password with SHA-512, and user names with escaped characters', () => {
    for (const [user, pw] of [
      ['alice', 'right'],
      ['a,b=c', 'odd'],
    ]) {
      const server = new ScramServer('SCRAM-SHA-512', creds)
      const client = new ScramClient('SCRAM-SHA-512', user, pw)
      const final = server.evaluate(client.final(server.evaluate(client.first())))
      assert.ok(client.verify(final))
      assert.equal(server.user, user)
    }
  })

  it('ignores extensions other than tokenauth, and refuses tokenauth', () => {
    const server = new ScramServer('SCRAM-SHA-512', creds)
    const client = new ScramClient('SCRAM-SHA-512', 'alice', 'right')
    server.evaluate(client.first(',ext=1'))
    assert.ok(server.state === 'client-final')
    const t = new ScramServer('SCRAM-SHA-512', creds)
    assert.throws(() =>
      t.evaluate(new ScramClient('SCRAM-SHA-512', 'alice', 'right').first(',tokenauth=true')),
    )
  })

  it('refuses a wrong password, an unknown user, a foreign authzid, malformed and replayed messages', () => {
    const wrong = new ScramServer('SCRAM-SHA-512', creds)
    const c = new ScramClient('SCRAM-SHA-512', 'alice', 'wrong')
    const sf = wrong.evaluate(c.first())
    assert.throws(
      () => wrong.evaluate(c.final(sf)),
      (e: SaslFailure) => e.clientMessage === null,
    )
    assert.equal(wrong.state, 'failed')
    assert.throws(() => wrong.evaluate(Buffer.from('x')), SaslFailure)

    const unknown = new ScramServer('SCRAM-SHA-512', creds)
    assert.throws(
      () => unknown.evaluate(new ScramClient('SCRAM-SHA-512', 'mallory', 'x').first()),
      /Invalid user credentials/,
    )

    const authz = new ScramServer('SCRAM-SHA-512', creds)
    assert.throws(
      () => authz.evaluate(new ScramClient('SCRAM-SHA-512', 'alice', 'right', 'n1', 'bob').first()),
      (e: SaslFailure) =>
        e.clientMessage ===
        'Authentication failed: Client requested an authorization id that is different from username',
    )

    for (const bad of [
      '',
      'y,,n=alice,r=abc',
      'p=tls,,n=alice,r=abc',
      'n,,n=,r=abc',
      '\u0000\u0001\u00ff',
      'n,,r=abc,n=alice',
    ]) {
      assert.throws(() => new ScramServer('SCRAM-SHA-512', creds).evaluate(Buffer.from(bad, 'latin1')))
    }

    const nonce = new ScramServer('SCRAM-SHA-512', creds)
    const c2 = new ScramClient('SCRAM-SHA-512', 'alice', 'right')
    nonce.evaluate(c2.first())
    assert.throws(() => nonce.evaluate(Buffer.from('c=biws,r=other,p=AAAA')), /Invalid client nonce/)
    const shortProof = new ScramServer('SCRAM-SHA-512', creds)
    const c3 = new ScramClient('SCRAM-SHA-512', 'alice', 'right')
    const r = Buffer.from(shortProof.evaluate(c3.first())).toString().split(',')[0].slice(2)
    assert.throws(
      () => shortProof.evaluate(Buffer.from(`c=biws,r=${r},p=AAAA`)),
      /Invalid client credentials/,
    )
    const badChannel = new ScramServer('SCRAM-SHA-512', creds)
    const c4 = new ScramClient('SCRAM-SHA-512', 'alice', 'right')
    const r4 = Buffer.from(badChannel.evaluate(c4.first())).toString().split(',')[0].slice(2)
    assert.throws(
      () => badChannel.evaluate(Buffer.from(`c=eSws,r=${r4},p=${Buffer.alloc(64).toString('base64')}`)),
      /channel binding/,
    )
  })
})

// The exact messages of one exchange between kcat 1.7.1 / librdkafka 2.0.2 (Debian) and this
// server, user kc, password kc-secret, salt "kcat-fixed-salt!", 4096 iterations. librdkafka chooses
// a 32-character client nonce; the server nonce is the one the server drew in that run.
const LIBRDKAFKA_2_0_2: readonly {
  readonly mechanism: ScramMechanism
  readonly clientNonce: string
  readonly serverNonce: string
  readonly clientFirst: string
  readonly serverFirst: string
  readonly clientFinal: string
}[] = [
  {
    mechanism: 'SCRAM-SHA-256',
    clientNonce: '-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.c',
    serverNonce: 'kdQT4M-U6hNhIDRIOn907rZWfevH1REa',
    clientFirst: 'n,,n=kc,r=-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.c',
    serverFirst:
      'r=-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.ckdQT4M-U6hNhIDRIOn907rZWfevH1REa,s=a2NhdC1maXhlZC1zYWx0IQ==,i=4096',
    clientFinal:
      'c=biws,r=-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.c-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.ckdQT4M-U6hNhIDRIOn907rZWfevH1REa,p=twubSXG3xD6g7vvm6gUhDDS0MkrjdAKQrmoHxqabbuY=',
  },
  {
    mechanism: 'SCRAM-SHA-512',
    clientNonce: 'y>J{^EGXLLNbDE>IsF7MtlNk.zurW3hj',
    serverNonce: 'RQpxCO7BYO2yrn5AZHzoD49PVCXgufpo',
    clientFirst: 'n,,n=kc,r=y>J{^EGXLLNbDE>IsF7MtlNk.zurW3hj',
    serverFirst:
      'r=y>J{^EGXLLNbDE>IsF7MtlNk.zurW3hjRQpxCO7BYO2yrn5AZHzoD49PVCXgufpo,s=a2NhdC1maXhlZC1zYWx0IQ==,i=4096',
    clientFinal:
      'c=biws,r=y>J{^EGXLLNbDE>IsF7MtlNk.zurW3hjy>J{^EGXLLNbDE>IsF7MtlNk.zurW3hjRQpxCO7BYO2yrn5AZHzoD49PVCXgufpo,p=WiZW66F08A5E0GxmHxfWRxcnmsKeLI+2Ufk6A2KYBRSnNPva32P4zYajKRv9dZGayPhZRfQNJr3apo+qMoVZbA==',
  },
]

describe('librdkafka before 2.6.1 (kcat in Debian)', () => {
  const salt = Buffer.from('kcat-fixed-salt!')
  const server = (x: (typeof LIBRDKAFKA_2_0_2)[number]) =>
    new ScramServer(
      x.mechanism,
      new Map([['kc', computeScramCredential(x.mechanism, 'kc-secret', { salt, iterations: 4096 })]]),
      () => x.serverNonce,
    )

  for (const x of LIBRDKAFKA_2_0_2) {
    it(`${x.mechanism}: the client-final nonce is c-nonce + the server's nonce, refused as RFC 5802 and Kafka 4 refuse it`, () => {
      const s = server(x)
      // The server-first message is what librdkafka answered to: r = c-nonce + s-nonce, base64 salt.
      assert.equal(Buffer.from(s.evaluate(Buffer.from(x.clientFirst))).toString(), x.serverFirst)
      const combined = x.clientNonce + x.serverNonce
      const sentNonce = /,r=([^,]*),p=/.exec(x.clientFinal)?.[1]
      assert.equal(sentNonce, x.clientNonce + combined, 'librdkafka prepends its c-nonce once more')
      assert.throws(
        () => s.evaluate(Buffer.from(x.clientFinal)),
        (e: SaslFailure) =>
          e instanceof SaslFailure &&
          e.message === 'Invalid client nonce in the final client message.' &&
          e.clientMessage === null,
      )
      assert.equal(s.state, 'failed')

      // Everything else in the message is right: the proof is valid for the AuthMessage that
      // holds the repeated nonce, so the password was right and only the nonce is refused.
      const hashName = x.mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512'
      const salted = pbkdf2Sync('kc-secret', salt, 4096, hashName === 'sha256' ? 32 : 64, hashName)
      const clientKey = createHmac(hashName, salted).update('Client Key').digest()
      const storedKey = createHash(hashName).update(clientKey).digest()
      const withoutProof = x.clientFinal.slice(0, x.clientFinal.lastIndexOf(',p='))
      const authMessage = `${x.clientFirst.slice(3)},${x.serverFirst},${withoutProof}`
      const signature = createHmac(hashName, storedKey).update(authMessage).digest()
      const proof = Buffer.from(clientKey.map((b, i) => b ^ signature[i]))
      assert.equal(x.clientFinal.slice(x.clientFinal.lastIndexOf(',p=') + 3), proof.toString('base64'))

      // The same exchange with the nonce sent as RFC 5802 requires (librdkafka 2.6.1 and later,
      // KafkaJS, Kafka's Java client) succeeds.
      const rfc = server(x)
      const client = new ScramClient(x.mechanism, 'kc', 'kc-secret', x.clientNonce)
      assert.equal(Buffer.from(client.first()).toString(), x.clientFirst)
      const final = rfc.evaluate(client.final(rfc.evaluate(client.first())))
      assert.ok(client.verify(final))
      assert.equal(rfc.user, 'kc')
    })
  }
})

describe('PLAIN', () => {
  const users = parsePlainUsers('alice:s3cr:et,bob:pw')

  it('parses users (password after the first colon) and refuses bad entries', () => {
    assert.equal(users.get('alice'), 's3cr:et')
    assert.throws(() => parsePlainUsers('alice'), /entry 1 is not user:password/)
    assert.throws(() => parsePlainUsers('alice:'), /empty password/)
    assert.throws(() => parsePlainUsers('a:1,a:2'), /listed twice/)
  })

  it('answers with Kafka texts', () => {
    const ok = new PlainServer(users)
    ok.evaluate(Buffer.from('\u0000alice\u0000s3cr:et'))
    assert.equal(ok.complete, true)
    assert.equal(ok.user, 'alice')
    const texts: [string, string][] = [
      ['alice\u0000s3cr:et', 'Invalid SASL/PLAIN response: expected 3 tokens, got 2'],
      ['\u0000\u0000pw', 'Authentication failed: username not specified'],
      ['\u0000bob\u0000', 'Authentication failed: password not specified'],
      ['\u0000bob\u0000nope', 'Authentication failed: Invalid username or password'],
      ['\u0000carol\u0000pw', 'Authentication failed: Invalid username or password'],
      [
        'alice\u0000bob\u0000pw',
        'Authentication failed: Client requested an authorization id that is different from username',
      ],
    ]
    for (const [token, message] of texts) {
      assert.throws(
        () =>
          createMechanismServer('PLAIN', { plain: users, scram: fixedScramCredentials(new Map()) }).evaluate(
            Buffer.from(token),
          ),
        (e: SaslFailure) => e.clientMessage === message && !e.message.includes('nope'),
      )
    }
  })
})
