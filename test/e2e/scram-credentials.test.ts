// SCRAM users managed over the wire, on SASL_PLAINTEXT and SQLite: AlterUserScramCredentials
// stores a credential that the next SASL/SCRAM authentication accepts, DescribeUserScramCredentials
// lists it beside the sasl.scram.users ones, a deletion fails the next authentication (a connection
// already authenticated stays), the cluster permissions are checked, and a restart keeps the state.
import assert from 'node:assert/strict'
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { SecureClient, scramLogin } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const SHA256 = 1
const SHA512 = 2
const CONFIGURED = ['admin', 'alice'].map((u) => scramUserEntry(u, 'SCRAM-SHA-256', `${u}-pw`)).join(',')
const overrides = {
  listeners: 'SASL_PLAINTEXT://127.0.0.1:0',
  'sasl.scram.users': CONFIGURED,
  'connection.failed.authentication.delay.ms': '0',
  'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
  'super.users': 'User:admin',
}

let ts: TestServer
const open: SecureClient[] = []

before(async () => {
  ts = await startTestServer(overrides)
})

after(async () => {
  for (const c of open) c.close()
  await ts?.stop()
})

/** A connection authenticated as `user`, or null when the authentication was refused. */
async function login(mechanism: string, user: string, password: string): Promise<SecureClient | null> {
  const c = await SecureClient.connect(ts.port)
  open.push(c)
  const answer = await scramLogin(c, mechanism, user, password)
  if (answer?.errorCode === 0) return c
  assert.equal(answer?.errorCode, ErrorCode.SASL_AUTHENTICATION_FAILED)
  assert.equal(
    answer?.errorMessage,
    `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`,
  )
  return null
}

function upsertion(name: string, mechanism: number, password: string, iterations: number) {
  const salt = randomBytes(24)
  const [hash, bytes] = mechanism === SHA512 ? ['sha512', 64] : ['sha256', 32]
  return {
    name,
    mechanism,
    iterations,
    salt,
    saltedPassword: pbkdf2Sync(password, salt, iterations, bytes, hash as string),
  }
}

type Altered = { results: { user: string; errorCode: number; errorMessage: string | null }[] }
type Described = {
  errorCode: number
  errorMessage: string | null
  results: {
    user: string
    errorCode: number
    errorMessage: string | null
    credentialInfos: { mechanism: number; iterations: number }[]
  }[]
}

describe('SCRAM credentials managed over the wire', { timeout: 60_000 }, () => {
  it('needs ALTER / DESCRIBE on the cluster', async () => {
    const alice = await login('SCRAM-SHA-256', 'alice', 'alice-pw')
    assert.ok(alice)
    const altered = await alice.request<Altered>(51, 0, {
      deletions: [{ name: 'zoe', mechanism: SHA256 }],
      upsertions: [upsertion('bob', SHA512, 'x', 4096), upsertion('zoe', SHA256, 'x', 4096)],
    })
    assert.deepEqual(altered?.results, [
      {
        user: 'bob',
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: 'Cluster authorization failed.',
      },
      {
        user: 'zoe',
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: 'Cluster authorization failed.',
      },
    ])
    const described = await alice.request<Described>(50, 0, { users: [{ name: 'alice' }] })
    assert.equal(described?.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    assert.deepEqual(described?.results, [
      {
        user: '',
        errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
        errorMessage: null,
        credentialInfos: [],
      },
    ])
    assert.equal(await login('SCRAM-SHA-512', 'bob', 'x'), null, 'nothing was stored')
  })

  it('authenticates with a stored credential at once, and no more after its deletion', async () => {
    const admin = await login('SCRAM-SHA-256', 'admin', 'admin-pw')
    assert.ok(admin)
    assert.equal(await login('SCRAM-SHA-512', 'bob', 'bob-pw'), null)
    const altered = await admin.request<Altered>(51, 0, {
      deletions: [],
      upsertions: [upsertion('bob', SHA512, 'bob-pw', 8192)],
    })
    assert.deepEqual(altered?.results, [{ user: 'bob', errorCode: 0, errorMessage: null }])
    const bob = await login('SCRAM-SHA-512', 'bob', 'bob-pw')
    assert.ok(bob, 'the new credential authenticates')
    assert.equal(await login('SCRAM-SHA-512', 'bob', 'wrong'), null)
    assert.equal(await login('SCRAM-SHA-256', 'bob', 'bob-pw'), null, 'only the mechanism stored')

    const described = await admin.request<Described>(50, 0, { users: null })
    assert.deepEqual(
      described?.results.map((r) => [r.user, r.errorCode, r.credentialInfos]),
      [
        ['bob', 0, [{ mechanism: SHA512, iterations: 8192 }]],
        ['admin', 0, [{ mechanism: SHA256, iterations: 4096 }]],
        ['alice', 0, [{ mechanism: SHA256, iterations: 4096 }]],
      ],
    )

    const deleted = await admin.request<Altered>(51, 0, {
      deletions: [{ name: 'bob', mechanism: SHA512 }],
      upsertions: [],
    })
    assert.deepEqual(deleted?.results, [{ user: 'bob', errorCode: 0, errorMessage: null }])
    assert.equal(await login('SCRAM-SHA-512', 'bob', 'bob-pw'), null, 'the deleted credential fails')
    // The connection authenticated before the deletion stays.
    const metadata = await bob.request<{ brokers: unknown[] }>(3, 12, {
      topics: [],
      allowAutoTopicCreation: false,
    })
    assert.equal(metadata?.brokers.length, 1)

    const again = await admin.request<Altered>(51, 0, {
      deletions: [
        { name: 'bob', mechanism: SHA512 },
        { name: 'alice', mechanism: SHA256 },
      ],
      upsertions: [],
    })
    assert.deepEqual(again?.results, [
      {
        user: 'bob',
        errorCode: ErrorCode.RESOURCE_NOT_FOUND,
        errorMessage: 'Attempt to delete a user credential that does not exist',
      },
      {
        user: 'alice',
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage:
          'The SCRAM-SHA-256 credential of user alice comes from sasl.scram.users and cannot be deleted through the API; remove it from the configuration',
      },
    ])
  })

  it('keeps stored credentials, replacements of configured ones and deletions across a restart', async () => {
    const admin = await login('SCRAM-SHA-256', 'admin', 'admin-pw')
    assert.ok(admin)
    const altered = await admin.request<Altered>(51, 0, {
      deletions: [],
      upsertions: [
        upsertion('carol', SHA512, 'carol-pw', 4096),
        upsertion('alice', SHA256, 'alice-new', 5000),
      ],
    })
    assert.deepEqual(
      altered?.results.map((r) => r.errorCode),
      [0, 0],
    )
    assert.equal(await login('SCRAM-SHA-256', 'alice', 'alice-pw'), null, 'the stored credential wins')
    await ts.stop(true)
    ts = await startTestServer(overrides, {}, ts.dataDir)

    assert.ok(await login('SCRAM-SHA-512', 'carol', 'carol-pw'))
    assert.ok(await login('SCRAM-SHA-256', 'alice', 'alice-new'))
    assert.equal(await login('SCRAM-SHA-256', 'alice', 'alice-pw'), null)
    assert.equal(await login('SCRAM-SHA-512', 'bob', 'bob-pw'), null, 'the deletion survived too')
    const admin2 = await login('SCRAM-SHA-256', 'admin', 'admin-pw')
    assert.ok(admin2)
    const described = await admin2.request<Described>(50, 0, {
      users: [{ name: 'alice' }, { name: 'bob' }, { name: 'carol' }],
    })
    assert.deepEqual(
      described?.results.map((r) => [r.user, r.errorCode, r.errorMessage, r.credentialInfos]),
      [
        ['carol', 0, null, [{ mechanism: SHA512, iterations: 4096 }]],
        [
          'bob',
          ErrorCode.RESOURCE_NOT_FOUND,
          'Attempt to describe a user credential that does not exist: bob',
          [],
        ],
        ['alice', 0, null, [{ mechanism: SHA256, iterations: 5000 }]],
      ],
    )
    // Deleting the stored one uncovers the configured one again.
    await admin2.request<Altered>(51, 0, {
      deletions: [{ name: 'alice', mechanism: SHA256 }],
      upsertions: [],
    })
    assert.ok(await login('SCRAM-SHA-256', 'alice', 'alice-pw'))
  })
})
