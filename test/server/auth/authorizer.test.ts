import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { createRecordStore } from '../../../src/coordinator/storage/index.js'
import {
  type AclBinding,
  type AclBindingFilter,
  bindingMatchesFilter,
  validateNewBinding,
} from '../../../src/server/auth/acl.js'
import { ACL_LOG_ID, decodeAclKey, encodeAclKey } from '../../../src/server/auth/acl-store.js'
import { AclAuthorizer, parseSuperUsers } from '../../../src/server/auth/authorizer.js'
import { runWithClientHost } from '../../../src/server/auth/request-scope.js'

function acl(over: Partial<AclBinding>): AclBinding {
  return {
    resourceType: 'TOPIC',
    resourceName: 'orders',
    patternType: 'LITERAL',
    principal: 'User:alice',
    host: '*',
    operation: 'READ',
    permissionType: 'ALLOW',
    ...over,
  }
}

const ANY: AclBindingFilter = {
  resourceType: 'ANY',
  resourceName: null,
  patternType: 'ANY',
  principal: null,
  host: null,
  operation: 'ANY',
  permissionType: 'ANY',
}

async function withAuthorizer(
  acls: readonly AclBinding[],
  fn: (a: AclAuthorizer) => void | Promise<void>,
  options = { superUsers: ['User:root'], allowEveryoneIfNoAclFound: false },
): Promise<void> {
  const store = createRecordStore('memory', '')
  await store.open()
  try {
    const a = await AclAuthorizer.load(store, options)
    await a.createAcls(acls)
    await fn(a)
  } finally {
    await store.close()
  }
}

describe('AclAuthorizer rules', () => {
  it('ALLOW, DENY wins, implications, wildcards, prefixes, hosts, super users', async () => {
    await withAuthorizer(
      [
        acl({}),
        acl({ operation: 'ALTER_CONFIGS' }),
        acl({ resourceName: 'pay-', patternType: 'PREFIXED', operation: 'WRITE' }),
        acl({ resourceName: 'pay-secret', operation: 'WRITE', permissionType: 'DENY' }),
        acl({ resourceType: 'GROUP', resourceName: '*', principal: 'User:*', operation: 'READ' }),
        acl({
          resourceType: 'GROUP',
          resourceName: 'locked',
          principal: 'User:bob',
          operation: 'ALL',
          permissionType: 'DENY',
        }),
        acl({ resourceName: 'by-host', host: '10.0.0.1', operation: 'READ' }),
      ],
      (a) => {
        const can = (
          p: string,
          op: Parameters<AclAuthorizer['authorizeAll']>[2][number]['operation'],
          type: 'TOPIC' | 'GROUP' | 'CLUSTER',
          name: string,
          host = '127.0.0.1',
        ) => a.authorize(p, host, op, type, name)
        assert.equal(can('User:alice', 'READ', 'TOPIC', 'orders'), true)
        assert.equal(can('User:alice', 'DESCRIBE', 'TOPIC', 'orders'), true, 'READ implies DESCRIBE')
        assert.equal(
          can('User:alice', 'DESCRIBE_CONFIGS', 'TOPIC', 'orders'),
          true,
          'ALTER_CONFIGS implies DESCRIBE_CONFIGS',
        )
        assert.equal(can('User:alice', 'WRITE', 'TOPIC', 'orders'), false, 'READ does not imply WRITE')
        assert.equal(can('User:alice', 'DELETE', 'TOPIC', 'orders'), false)
        assert.equal(can('User:bob', 'READ', 'TOPIC', 'orders'), false)
        assert.equal(can('User:alice', 'WRITE', 'TOPIC', 'pay-in'), true, 'PREFIXED')
        assert.equal(can('User:alice', 'WRITE', 'TOPIC', 'pay'), false)
        assert.equal(can('User:alice', 'WRITE', 'TOPIC', 'pay-secret'), false, 'DENY wins')
        assert.equal(
          can('User:alice', 'DESCRIBE', 'TOPIC', 'pay-secret'),
          true,
          'a DENY of WRITE does not deny DESCRIBE',
        )
        assert.equal(can('User:zed', 'READ', 'GROUP', 'any-group'), true, 'User:* on *')
        assert.equal(can('User:zed', 'DELETE', 'GROUP', 'any-group'), false)
        assert.equal(can('User:bob', 'READ', 'GROUP', 'locked'), false, 'DENY ALL')
        assert.equal(can('User:zed', 'READ', 'GROUP', 'locked'), true)
        assert.equal(can('User:alice', 'READ', 'TOPIC', 'by-host', '10.0.0.1'), true)
        assert.equal(can('User:alice', 'READ', 'TOPIC', 'by-host', '10.0.0.2'), false)
        assert.equal(can('User:root', 'ALTER', 'CLUSTER', 'kafka-cluster'), true, 'super user')
        assert.equal(can('User:alice', 'ALTER', 'CLUSTER', 'kafka-cluster'), false)
        assert.deepEqual(
          a.authorizeAll('User:alice', '127.0.0.1', [
            { operation: 'READ', resourceType: 'TOPIC', resourceName: 'orders' },
            { operation: 'WRITE', resourceType: 'TOPIC', resourceName: 'orders' },
          ]),
          [true, false],
        )
        // READ(3), DESCRIBE(8), DESCRIBE_CONFIGS(10), ALTER_CONFIGS(11)
        assert.equal(
          a.authorizedOperations('User:alice', '127.0.0.1', 'TOPIC', 'orders'),
          (1 << 3) | (1 << 8) | (1 << 10) | (1 << 11),
        )
        // The router's four-argument form takes the host of the request in scope.
        assert.equal(
          runWithClientHost('10.0.0.1', () => a.authorize('User:alice', 'READ', 'TOPIC', 'by-host')),
          true,
        )
        assert.equal(
          runWithClientHost('10.0.0.9', () => a.authorize('User:alice', 'READ', 'TOPIC', 'by-host')),
          false,
        )
        assert.equal(a.authorize('User:alice', 'READ', 'TOPIC', 'by-host'), false, 'no host in scope')
      },
    )
  })

  it('allow.everyone.if.no.acl.found applies only to resources no ACL covers', async () => {
    await withAuthorizer(
      [acl({ principal: 'User:bob' })],
      (a) => {
        assert.equal(a.authorize('User:alice', '*', 'READ', 'TOPIC', 'free'), true)
        assert.equal(a.authorize('User:alice', '*', 'READ', 'TOPIC', 'orders'), false)
      },
      { superUsers: [], allowEveryoneIfNoAclFound: true },
    )
    await withAuthorizer([], (a) =>
      assert.equal(a.authorize('User:alice', '*', 'READ', 'TOPIC', 'free'), false),
    )
  })

  it('parses super.users as Kafka does', () => {
    assert.deepEqual(parseSuperUsers(' User:a ; User:b;;'), ['User:a', 'User:b'])
  })
})

describe('ACL filters and validation', () => {
  it('matches with Kafka ResourcePatternFilter rules', () => {
    const lit = acl({})
    const wild = acl({ resourceName: '*' })
    const pre = acl({ resourceName: 'ord', patternType: 'PREFIXED' })
    const f = (o: Partial<AclBindingFilter>) => ({ ...ANY, ...o })
    assert.deepEqual(
      [lit, wild, pre].map((b) =>
        bindingMatchesFilter(b, f({ resourceName: 'orders', patternType: 'MATCH' })),
      ),
      [true, true, true],
    )
    assert.deepEqual(
      [lit, wild, pre].map((b) => bindingMatchesFilter(b, f({ resourceName: 'orders', patternType: 'ANY' }))),
      [true, false, false],
    )
    assert.deepEqual(
      [lit, wild, pre].map((b) => bindingMatchesFilter(b, f({ patternType: 'PREFIXED' }))),
      [false, false, true],
    )
    assert.equal(bindingMatchesFilter(lit, f({ resourceType: 'GROUP' })), false)
    assert.equal(bindingMatchesFilter(lit, f({ principal: 'User:bob' })), false)
    assert.equal(bindingMatchesFilter(lit, f({ operation: 'WRITE' })), false)
    assert.equal(bindingMatchesFilter(lit, f({ permissionType: 'DENY' })), false)
    assert.equal(bindingMatchesFilter(lit, f({ host: '*' })), true)
  })

  it('validates new bindings with Kafka messages', () => {
    const cases: [Partial<AclBinding>, string][] = [
      [{ resourceType: 'ANY' }, 'Invalid resourceType ANY'],
      [{ patternType: 'MATCH' }, 'Invalid patternType MATCH'],
      [{ operation: 'ANY' }, 'Invalid operation ANY'],
      [{ permissionType: 'UNKNOWN' }, 'Invalid permissionType UNKNOWN'],
      [
        { resourceType: 'CLUSTER', resourceName: 'x' },
        'The only valid name for the CLUSTER resource is kafka-cluster',
      ],
      [{ resourceName: '' }, 'Invalid empty resource name'],
      [
        { principal: 'alice' },
        'Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)',
      ],
      [{ host: '' }, 'Host pattern cannot be null or empty'],
    ]
    for (const [over, message] of cases) assert.equal(validateNewBinding(acl(over)), message)
    assert.equal(validateNewBinding(acl({ resourceType: 'CLUSTER', resourceName: 'kafka-cluster' })), null)
  })
})

describe('ACL store', () => {
  it('encodes keys reversibly and survives a restart with creates and deletes', async () => {
    const b = acl({
      resourceName: 'ünïcode',
      host: '127.0.0.1',
      operation: 'IDEMPOTENT_WRITE',
      permissionType: 'DENY',
    })
    assert.deepEqual(decodeAclKey(encodeAclKey(b)), b)
    assert.throws(() => decodeAclKey(encodeAclKey(b).subarray(0, 9)), /truncated/)

    const dir = mkdtempSync(join(tmpdir(), 'topograph-acl-'))
    try {
      const opts = { superUsers: [], allowEveryoneIfNoAclFound: false }
      let store = createRecordStore('sqlite', dir)
      await store.open()
      let a = await AclAuthorizer.load(store, opts)
      await a.createAcls([acl({}), b, acl({ operation: 'WRITE' })])
      await a.createAcls([acl({})]) // existing: no change
      const deleted = await a.deleteAcls([{ ...ANY, operation: 'WRITE' }])
      assert.equal(deleted[0].length, 1)
      assert.equal(a.size, 2)
      assert.ok((await store.load(ACL_LOG_ID)).length >= 3)
      await store.close()

      store = createRecordStore('sqlite', dir)
      await store.open()
      a = await AclAuthorizer.load(store, opts)
      assert.equal(a.size, 2)
      assert.deepEqual(new Set(a.acls(ANY).map((x) => x.operation)), new Set(['READ', 'IDEMPOTENT_WRITE']))
      assert.equal(a.authorize('User:alice', '1.2.3.4', 'READ', 'TOPIC', 'orders'), true)
      assert.equal(a.authorize('User:alice', '1.2.3.4', 'WRITE', 'TOPIC', 'orders'), false)
      await store.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('a failed append changes nothing in memory', async () => {
    const store = createRecordStore('memory', '')
    await store.open()
    try {
      const a = await AclAuthorizer.load(store, { superUsers: [], allowEveryoneIfNoAclFound: false })
      store.failNextAppend()
      await assert.rejects(a.createAcls([acl({})]))
      assert.equal(a.size, 0)
      await a.createAcls([acl({})])
      assert.equal(a.size, 1)
    } finally {
      await store.close()
    }
  })
})
