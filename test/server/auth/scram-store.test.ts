// The SCRAM credential store: Kafka's validation of AlterUserScramCredentials and its texts, the
// description of DescribeUserScramCredentials, the precedence of stored over configured
// credentials, what an exchange sees after a change, and the replay of the stored records; on the
// memory record store, no sockets.
import assert from 'node:assert/strict'
import { pbkdf2Sync, randomBytes } from 'node:crypto'
import { describe, it } from 'node:test'
import { GROUP_CONFIG_LOG_ID } from '../../../src/coordinator/service/group-config-manager.js'
import { createRecordStore } from '../../../src/coordinator/storage/index.js'
import { ErrorCode } from '../../../src/protocol/errors.js'
import {
  decodeScramKey,
  decodeScramValue,
  encodeScramKey,
  encodeScramValue,
  SCRAM_RECORD_TYPE,
  ScramCredentialStore,
  type ScramUpsertion,
} from '../../../src/server/auth/scram-store.js'
import {
  computeScramCredential,
  parseScramUsers,
  type ScramMechanism,
  ScramServer,
  scramUserEntry,
} from '../../../src/server/auth/scram.js'
import { createLogger } from '../../../src/server/logger.js'
import { encodeClientQuotaKey } from '../../../src/server/quotas/client-quotas.js'
import { ScramClient } from './helpers.js'

const logger = createLogger({ level: 'silent' })
const SHA256 = 1
const SHA512 = 2

async function open(configured = '') {
  const store = createRecordStore('memory', '.')
  await store.open()
  const scram = new ScramCredentialStore({ configured: parseScramUsers(configured), logger })
  await scram.load(store)
  return { store, scram }
}

function upsertion(name: string, mechanism: number, password: string, iterations = 4096): ScramUpsertion {
  const salt = randomBytes(16)
  const hash = mechanism === SHA512 ? 'sha512' : 'sha256'
  const saltedPassword = pbkdf2Sync(password, salt, iterations, mechanism === SHA512 ? 64 : 32, hash)
  return { name, mechanism, iterations, salt, saltedPassword }
}

/** Whether a full exchange with this password succeeds against the store's current credentials. */
function authenticates(
  scram: ScramCredentialStore,
  mechanism: ScramMechanism,
  user: string,
  password: string,
) {
  const server = new ScramServer(mechanism, scram.lookup(mechanism))
  const client = new ScramClient(mechanism, user, password)
  try {
    return client.verify(server.evaluate(client.final(server.evaluate(client.first()))))
  } catch {
    return false
  }
}

const ok = (user: string) => ({ user, errorCode: 0, errorMessage: null })

describe('AlterUserScramCredentials validation', () => {
  it("answers Kafka's errors and messages per user", async () => {
    const { scram } = await open()
    const results = await scram.alter(
      [
        { name: '', mechanism: SHA256 },
        { name: 'unknown-mech', mechanism: 3 },
        { name: 'zero-mech', mechanism: 0 },
        { name: 'absent', mechanism: SHA512 },
      ],
      [
        upsertion('few', SHA256, 'p', 4095),
        upsertion('many', SHA512, 'p', 16385),
        { ...upsertion('up-mech', SHA256, 'p'), mechanism: 7 },
        upsertion('edge-low', SHA256, 'p', 4096),
        upsertion('edge-high', SHA512, 'p', 16384),
      ],
    )
    // Kafka's order: the upsertions done, then the failed users, each in its HashMap's order.
    assert.deepEqual(results, [
      ok('edge-high'),
      ok('edge-low'),
      { user: '', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' },
      {
        user: 'zero-mech',
        errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        errorMessage: 'Unknown SCRAM mechanism',
      },
      {
        user: 'unknown-mech',
        errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        errorMessage: 'Unknown SCRAM mechanism',
      },
      {
        user: 'absent',
        errorCode: ErrorCode.RESOURCE_NOT_FOUND,
        errorMessage: 'Attempt to delete a user credential that does not exist',
      },
      { user: 'few', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' },
      {
        user: 'up-mech',
        errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
        errorMessage: 'Unknown SCRAM mechanism',
      },
      { user: 'many', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too many iterations' },
    ])
    assert.deepEqual(
      scram.describe(null).map((r) => r.user),
      ['edge-high', 'edge-low'],
    )
  })

  it('refuses a user altered twice in one request, whatever the mechanisms, and stores nothing of it', async () => {
    const { scram } = await open()
    await scram.alter(
      [],
      [upsertion('d', SHA256, 'p'), upsertion('e', SHA256, 'p'), upsertion('e2', SHA512, 'p')],
    )
    const twice = {
      errorCode: ErrorCode.DUPLICATE_RESOURCE,
      errorMessage: 'A user credential cannot be altered twice in the same request',
    }
    const results = await scram.alter(
      [
        { name: 'd', mechanism: SHA256 },
        { name: 'd', mechanism: SHA512 }, // another mechanism: still the same user
        { name: 'e', mechanism: SHA256 },
        { name: 'e2', mechanism: SHA512 },
      ],
      [
        upsertion('e', SHA512, 'new'), // deleted and upserted
        upsertion('u', SHA256, 'new'),
        upsertion('u', SHA256, 'again'), // upserted twice
        upsertion('e2', SHA512, 'new'),
        upsertion('e2', SHA512, 'third'), // after the error: still one result
        upsertion('fine', SHA512, 'new'),
      ],
    )
    assert.deepEqual(results, [
      ok('fine'),
      { user: 'd', ...twice },
      { user: 'e', ...twice },
      { user: 'u', ...twice },
      { user: 'e2', ...twice },
    ])
    // Nothing of the refused users changed.
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'd', 'p'), true)
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'e', 'p'), true)
    assert.equal(authenticates(scram, 'SCRAM-SHA-512', 'e2', 'p'), true)
    assert.equal(scram.credential('SCRAM-SHA-256', 'u'), undefined)
    assert.equal(authenticates(scram, 'SCRAM-SHA-512', 'fine', 'new'), true)
  })

  it('keeps the first error of a user: a deletion that failed validation hides later alterations', async () => {
    const { scram } = await open()
    const results = await scram.alter([{ name: 'x', mechanism: SHA256 }], [upsertion('x', SHA256, 'p')])
    assert.deepEqual(results, [
      {
        user: 'x',
        errorCode: ErrorCode.RESOURCE_NOT_FOUND,
        errorMessage: 'Attempt to delete a user credential that does not exist',
      },
    ])
  })

  it('fails an empty SaltedPassword as Kafka (its HMAC refuses an empty key)', async () => {
    const { scram } = await open()
    const results = await scram.alter(
      [],
      [{ ...upsertion('x', SHA256, 'p'), saltedPassword: new Uint8Array(0) }],
    )
    assert.deepEqual(results, [{ user: 'x', errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null }])
  })
})

describe('SCRAM credentials in use', () => {
  it('keeps StoredKey and ServerKey derived from SaltedPassword, as the password would give them', async () => {
    const { scram } = await open()
    const u = upsertion('alice', SHA512, 'secret', 8192)
    await scram.alter([], [u])
    const expected = computeScramCredential('SCRAM-SHA-512', 'secret', { iterations: 8192, salt: u.salt })
    assert.deepEqual(scram.credential('SCRAM-SHA-512', 'alice'), expected)
  })

  it('authenticates with a credential upserted at once, fails after its deletion', async () => {
    const { scram } = await open()
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'alice', 'one'), false)
    assert.deepEqual(await scram.alter([], [upsertion('alice', SHA256, 'one')]), [ok('alice')])
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'alice', 'one'), true)
    assert.equal(authenticates(scram, 'SCRAM-SHA-512', 'alice', 'one'), false)
    await scram.alter([], [upsertion('alice', SHA256, 'two')])
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'alice', 'one'), false)
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'alice', 'two'), true)
    assert.deepEqual(await scram.alter([{ name: 'alice', mechanism: SHA256 }], []), [ok('alice')])
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'alice', 'two'), false)
  })

  it('lets a stored credential win over a configured one; deleting it uncovers the configured one', async () => {
    const configured = [
      scramUserEntry('bob', 'SCRAM-SHA-256', 'from-config'),
      scramUserEntry('carol', 'SCRAM-SHA-512', 'carol-config', { iterations: 5000 }),
    ].join(',')
    const { scram } = await open(configured)
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'bob', 'from-config'), true)
    await scram.alter([], [upsertion('bob', SHA256, 'from-api', 6000)])
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'bob', 'from-config'), false)
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'bob', 'from-api'), true)
    assert.deepEqual(scram.describe(['bob'])[0].credentialInfos, [{ mechanism: SHA256, iterations: 6000 }])
    assert.deepEqual(await scram.alter([{ name: 'bob', mechanism: SHA256 }], []), [ok('bob')])
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'bob', 'from-config'), true)
    // A credential only in the configuration cannot be deleted through the API.
    assert.deepEqual(
      await scram.alter(
        [
          { name: 'bob', mechanism: SHA256 },
          { name: 'carol', mechanism: SHA512 },
        ],
        [],
      ),
      [
        {
          user: 'carol',
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage:
            'The SCRAM-SHA-512 credential of user carol comes from sasl.scram.users and cannot be deleted through the API; remove it from the configuration',
        },
        {
          user: 'bob',
          errorCode: ErrorCode.INVALID_REQUEST,
          errorMessage:
            'The SCRAM-SHA-256 credential of user bob comes from sasl.scram.users and cannot be deleted through the API; remove it from the configuration',
        },
      ],
    )
    assert.equal(authenticates(scram, 'SCRAM-SHA-512', 'carol', 'carol-config'), true)
  })

  it('answers UNKNOWN_SERVER_ERROR and changes nothing when the append fails', async () => {
    const { store, scram } = await open()
    await scram.alter([], [upsertion('alice', SHA256, 'one')])
    store.failNextAppend()
    const results = await scram.alter(
      [{ name: 'alice', mechanism: SHA256 }],
      [upsertion('x', SHA256, 'p', 100)],
    )
    assert.deepEqual(results, [
      { user: 'alice', errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null },
      { user: 'x', errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' },
    ])
    assert.equal(authenticates(scram, 'SCRAM-SHA-256', 'alice', 'one'), true)
  })
})

describe('DescribeUserScramCredentials', () => {
  it("describes every user, named users, and Kafka's errors for the others", async () => {
    const { scram } = await open(scramUserEntry('conf', 'SCRAM-SHA-512', 'c', { iterations: 4100 }))
    await scram.alter([], [upsertion('zed', SHA256, 'p', 4096), upsertion('amy', SHA512, 'p', 9000)])
    await scram.alter([], [upsertion('zed', SHA512, 'p', 10000)])
    // In the order of Kafka's HashMap of the users.
    assert.deepEqual(scram.describe(null), [
      {
        user: 'zed',
        errorCode: 0,
        errorMessage: null,
        credentialInfos: [
          { mechanism: SHA256, iterations: 4096 },
          { mechanism: SHA512, iterations: 10000 },
        ],
      },
      {
        user: 'conf',
        errorCode: 0,
        errorMessage: null,
        credentialInfos: [{ mechanism: SHA512, iterations: 4100 }],
      },
      {
        user: 'amy',
        errorCode: 0,
        errorMessage: null,
        credentialInfos: [{ mechanism: SHA512, iterations: 9000 }],
      },
    ])
    assert.deepEqual(scram.describe([]), scram.describe(null))
    assert.deepEqual(scram.describe(['amy', 'nobody', 'zed', 'amy']), [
      {
        user: 'zed',
        errorCode: 0,
        errorMessage: null,
        credentialInfos: [
          { mechanism: SHA256, iterations: 4096 },
          { mechanism: SHA512, iterations: 10000 },
        ],
      },
      {
        user: 'amy',
        errorCode: ErrorCode.DUPLICATE_RESOURCE,
        errorMessage: 'Cannot describe SCRAM credentials for the same user twice in a single request: amy',
        credentialInfos: [],
      },
      {
        user: 'nobody',
        errorCode: ErrorCode.RESOURCE_NOT_FOUND,
        errorMessage: 'Attempt to describe a user credential that does not exist: nobody',
        credentialInfos: [],
      },
    ])
  })
})

describe('SCRAM credential records', () => {
  it('round-trips the key and value', () => {
    const c = computeScramCredential('SCRAM-SHA-512', 'pw', { iterations: 5000 })
    const key = encodeScramKey('ålice', 'SCRAM-SHA-512')
    assert.equal(Buffer.from(key).readInt16BE(0), SCRAM_RECORD_TYPE)
    assert.deepEqual(decodeScramKey(key), { user: 'ålice', mechanism: 'SCRAM-SHA-512' })
    assert.deepEqual(decodeScramValue('SCRAM-SHA-512', encodeScramValue(c)), c)
    assert.throws(
      () => decodeScramKey(key.subarray(0, key.length - 1)),
      /malformed SCRAM credential record key/,
    )
  })

  it('replays the log: upsertions, replacements and tombstones, beside the other record types', async () => {
    const { store, scram } = await open()
    await scram.alter([], [upsertion('alice', SHA256, 'a1'), upsertion('bob', SHA512, 'b1')])
    // A client quota record in the same log is left to its owner.
    await store.append(GROUP_CONFIG_LOG_ID, [
      {
        key: encodeClientQuotaKey(new Map([['user', 'alice']]), 'producer_byte_rate'),
        value: Buffer.alloc(10),
      },
    ])
    await scram.alter([], [upsertion('alice', SHA256, 'a2', 5000)])
    await scram.alter([{ name: 'bob', mechanism: SHA512 }], [upsertion('carol', SHA512, 'c1')])
    const records = await store.load(GROUP_CONFIG_LOG_ID)
    assert.equal(records.filter((r) => r.value === null).length, 1, 'the deletion is a tombstone')

    const again = new ScramCredentialStore({ configured: new Map(), logger })
    await again.load(store)
    assert.deepEqual(again.describe(null), scram.describe(null))
    assert.deepEqual(
      again.describe(null).map((r) => r.user),
      ['carol', 'alice'],
    )
    assert.equal(authenticates(again, 'SCRAM-SHA-256', 'alice', 'a2'), true)
    assert.equal(authenticates(again, 'SCRAM-SHA-256', 'alice', 'a1'), false)
    assert.equal(authenticates(again, 'SCRAM-SHA-512', 'bob', 'b1'), false)
    assert.equal(authenticates(again, 'SCRAM-SHA-512', 'carol', 'c1'), true)
  })
})
