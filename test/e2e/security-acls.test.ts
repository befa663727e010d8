// ACLs over the wire: CreateAcls / DescribeAcls / DeleteAcls round trips, validation, cluster
// permission, durability across a restart, SECURITY_DISABLED without an authorizer, and the
// authorization matrix of the cluster-level APIs (allowed and denied principal) over SASL_SSL.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { ErrorCode } from '../../src/protocol/errors.js'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { makeCerts, SecureClient, scramLogin, type TestCerts } from '../server/auth/helpers.js'
import { startTestServer, type TestServer } from '../server/harness.js'

const ZERO = 'AAAAAAAAAAAAAAAAAAAAAA'
const USERS = ['admin', 'alice', 'bob'].map((u) => scramUserEntry(u, 'SCRAM-SHA-256', `${u}-pw`)).join(',')

let certs: TestCerts
let ts: TestServer
let overrides: Record<string, string>

async function as(user: string, fn: (c: SecureClient) => Promise<void>, server = ts): Promise<void> {
  const c = await SecureClient.connect(server.port, { ca: certs.caCert })
  try {
    assert.equal((await scramLogin(c, 'SCRAM-SHA-256', user, `${user}-pw`))?.errorCode, 0)
    await fn(c)
  } finally {
    c.close()
  }
}

interface Creation {
  resourceType: number
  resourceName: string
  resourcePatternType: number
  principal: string
  host: string
  operation: number
  permissionType: number
}
const acl = (o: Partial<Creation>): Creation => ({
  resourceType: 2,
  resourceName: 't1',
  resourcePatternType: 3,
  principal: 'User:alice',
  host: '*',
  operation: 8,
  permissionType: 3,
  ...o,
})
const ANY_FILTER = {
  resourceTypeFilter: 1,
  resourceNameFilter: null,
  patternTypeFilter: 1,
  principalFilter: null,
  hostFilter: null,
  operation: 1,
  permissionType: 1,
}

type Results = { results: { errorCode: number; errorMessage: string | null }[] }
type Described = {
  errorCode: number
  errorMessage: string | null
  resources: { resourceName: string; patternType: number; acls: { principal: string; operation: number }[] }[]
}

before(async () => {
  certs = makeCerts()
  overrides = {
    listeners: 'SASL_SSL://127.0.0.1:0',
    'sasl.scram.users': USERS,
    'connection.failed.authentication.delay.ms': '0',
    'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
    'super.users': 'User:admin',
  }
  // Inline PEM this time (ssl.keystore.location is used by the other suite).
  overrides['ssl.keystore.certificate.chain'] = readFileSync(certs.serverCert, 'utf8')
  overrides['ssl.keystore.key'] = readFileSync(certs.serverKey, 'utf8')
  ts = await startTestServer(overrides)
})

after(async () => {
  await ts?.stop()
  certs?.remove()
})

describe('ACL APIs', { timeout: 60_000 }, () => {
  it('create, describe, delete round trip with Kafka validation', async () => {
    await as('admin', async (c) => {
      const created = await c.request<Results>(30, 3, {
        creations: [
          acl({}),
          acl({ resourceName: 'pre-', resourcePatternType: 4, operation: 5 }),
          acl({ resourceType: 4, resourceName: 'other' }),
          acl({ principal: 'alice' }),
          acl({ resourcePatternType: 2 }),
        ],
      })
      assert.deepEqual(
        created?.results.map((r) => [r.errorCode, r.errorMessage]),
        [
          [0, null],
          [0, null],
          [ErrorCode.INVALID_REQUEST, 'The only valid name for the CLUSTER resource is kafka-cluster'],
          [
            ErrorCode.INVALID_REQUEST,
            'Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)',
          ],
          [ErrorCode.INVALID_REQUEST, 'Invalid patternType MATCH'],
        ],
      )
      const all = await c.request<Described>(29, 3, ANY_FILTER)
      assert.equal(all?.errorCode, 0)
      assert.deepEqual(all?.resources.map((r) => r.resourceName).sort(), ['pre-', 't1'])
      const match = await c.request<Described>(29, 2, {
        ...ANY_FILTER,
        resourceNameFilter: 'pre-x',
        patternTypeFilter: 2,
      })
      assert.deepEqual(
        match?.resources.map((r) => [r.resourceName, r.patternType]),
        [['pre-', 4]],
      )
      const unknown = await c.request<Described>(29, 1, { ...ANY_FILTER, operation: 0 })
      assert.equal(unknown?.errorCode, ErrorCode.INVALID_REQUEST)

      const deleted = await c.request<{
        filterResults: { errorCode: number; matchingAcls: { resourceName: string }[] }[]
      }>(31, 3, {
        filters: [
          { ...ANY_FILTER, patternTypeFilter: 4 },
          { ...ANY_FILTER, resourceNameFilter: 'nope' },
        ],
      })
      assert.deepEqual(
        deleted?.filterResults.map((f) => f.matchingAcls.map((m) => m.resourceName)),
        [['pre-'], []],
      )
      const left = await c.request<Described>(29, 3, ANY_FILTER)
      assert.deepEqual(
        left?.resources.map((r) => r.resourceName),
        ['t1'],
      )
    })
  })

  it('needs ALTER on the cluster to change ACLs and DESCRIBE to list them', async () => {
    await as('bob', async (c) => {
      const created = await c.request<Results>(30, 3, { creations: [acl({ principal: 'User:bob' })] })
      assert.equal(created?.results[0].errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
      const described = await c.request<Described>(29, 3, ANY_FILTER)
      assert.equal(described?.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
      const deleted = await c.request<{ filterResults: { errorCode: number }[] }>(31, 3, {
        filters: [ANY_FILTER],
      })
      assert.equal(deleted?.filterResults[0].errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    })
    await as('admin', async (c) => {
      assert.equal(
        (await c.request<Described>(29, 3, ANY_FILTER))?.resources.length,
        1,
        'nothing was deleted',
      )
    })
  })

  it('ACLs survive a restart', async () => {
    await ts.stop(true)
    ts = await startTestServer(overrides, {}, ts.dataDir)
    await as('admin', async (c) => {
      const all = await c.request<Described>(29, 3, ANY_FILTER)
      assert.deepEqual(
        all?.resources.map((r) => [r.resourceName, r.acls.map((a) => [a.principal, a.operation])]),
        [['t1', [['User:alice', 8]]]],
      )
    })
  })

  it('without an authorizer the ACL APIs answer SECURITY_DISABLED', async () => {
    const open = await startTestServer()
    try {
      const c = await SecureClient.connect(open.port)
      try {
        assert.equal((await c.request<Described>(29, 3, ANY_FILTER))?.errorCode, ErrorCode.SECURITY_DISABLED)
        const created = await c.request<Results>(30, 3, { creations: [acl({})] })
        assert.deepEqual(created?.results[0], {
          errorCode: ErrorCode.SECURITY_DISABLED,
          errorMessage: 'No Authorizer is configured.',
        })
      } finally {
        c.close()
      }
    } finally {
      await open.stop()
    }
  })
})

describe('authorization matrix of the cluster-level APIs', { timeout: 60_000 }, () => {
  before(async () => {
    await as('admin', async (c) => {
      await c.request(19, 7, {
        topics: [{ name: 'm-topic', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 1000,
      })
      await c.request(19, 7, {
        topics: [{ name: 'm-doomed', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 1000,
      })
      const r = await c.request<Results>(30, 3, {
        creations: [
          acl({ resourceName: 'm-topic', operation: 3 }), // READ implies DESCRIBE
          acl({ resourceName: 'm-new-', resourcePatternType: 4, operation: 5 }),
          acl({ resourceName: 'm-doomed', operation: 6 }),
          acl({ resourceType: 3, resourceName: 'm-group', operation: 8 }),
          acl({ resourceType: 4, resourceName: 'kafka-cluster', operation: 8 }),
        ],
      })
      assert.ok(r?.results.every((x) => x.errorCode === 0))
    })
  })

  type Case = {
    api: string
    run: (c: SecureClient) => Promise<unknown>
    allowed: (r: unknown) => boolean
  }
  const topicErr = (r: unknown) => (r as { topics: { errorCode: number }[] }).topics.map((t) => t.errorCode)
  const cases: Case[] = [
    {
      api: 'ApiVersions (no check)',
      run: (c) => c.request(18, 3, { clientSoftwareName: 'x', clientSoftwareVersion: '1' }),
      allowed: (r) => (r as { errorCode: number }).errorCode === 0,
    },
    {
      api: 'Metadata all topics (DESCRIBE TOPIC filters)',
      run: (c) => c.request(3, 12, { topics: null }),
      allowed: (r) => (r as { topics: { name: string }[] }).topics.some((t) => t.name === 'm-topic'),
    },
    {
      api: 'Metadata by name (TOPIC_AUTHORIZATION_FAILED)',
      run: (c) => c.request(3, 12, { topics: [{ name: 'm-topic', topicId: ZERO }] }),
      allowed: (r) => topicErr(r)[0] === 0,
    },
    {
      api: 'CreateTopics (CREATE TOPIC)',
      run: (c) =>
        c.request(19, 7, {
          topics: [
            {
              name: `m-new-${Math.random().toString(36).slice(2)}`,
              numPartitions: 1,
              replicationFactor: 1,
              assignments: [],
              configs: [],
            },
          ],
          timeoutMs: 1000,
          validateOnly: true,
        }),
      allowed: (r) => topicErr(r)[0] === 0,
    },
    {
      api: 'DeleteTopics (DELETE TOPIC)',
      run: (c) =>
        c.request(20, 6, { topics: [{ name: 'm-doomed', topicId: ZERO }], topicNames: [], timeoutMs: 1000 }),
      allowed: (r) => (r as { responses: { errorCode: number }[] }).responses[0].errorCode === 0,
    },
    {
      api: 'FindCoordinator (DESCRIBE GROUP)',
      run: (c) => c.request(10, 4, { keyType: 0, coordinatorKeys: ['m-group'] }),
      allowed: (r) => (r as { coordinators: { errorCode: number }[] }).coordinators[0].errorCode === 0,
    },
    {
      api: 'DescribeCluster (DESCRIBE CLUSTER → authorized operations)',
      run: (c) => c.request(60, 1, { includeClusterAuthorizedOperations: true, endpointType: 1 }),
      allowed: (r) =>
        ((r as { clusterAuthorizedOperations: number }).clusterAuthorizedOperations & (1 << 8)) !== 0,
    },
    {
      api: 'DescribeAcls (DESCRIBE CLUSTER)',
      run: (c) => c.request(29, 3, ANY_FILTER),
      allowed: (r) => (r as { errorCode: number }).errorCode === 0,
    },
  ]

  for (const k of cases) {
    it(`${k.api}: User:alice allowed, User:bob denied`, async () => {
      let denied: unknown
      await as('bob', async (c) => {
        denied = await k.run(c)
      })
      assert.ok(denied !== null, 'answered')
      if (k.api.startsWith('ApiVersions')) assert.equal(k.allowed(denied), true)
      else
        assert.equal(
          k.allowed(denied),
          false,
          `bob: ${JSON.stringify(denied, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
        )
      let allowed: unknown
      await as('alice', async (c) => {
        allowed = await k.run(c)
      })
      assert.equal(
        k.allowed(allowed),
        true,
        `alice: ${JSON.stringify(allowed, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
      )
    })
  }

  it('denied answers carry Kafka’s codes', async () => {
    await as('bob', async (c) => {
      const md = await c.request(3, 12, { topics: [{ name: 'm-topic', topicId: ZERO }] })
      assert.deepEqual(topicErr(md), [ErrorCode.TOPIC_AUTHORIZATION_FAILED])
      const ct = await c.request(19, 7, {
        topics: [{ name: 'm-new-x', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: 1000,
      })
      assert.deepEqual(topicErr(ct), [ErrorCode.TOPIC_AUTHORIZATION_FAILED])
      const fc = await c.request<{ coordinators: { errorCode: number }[] }>(10, 4, {
        keyType: 0,
        coordinatorKeys: ['m-group'],
      })
      assert.equal(fc?.coordinators[0].errorCode, ErrorCode.GROUP_AUTHORIZATION_FAILED)
      const da = await c.request<{ errorCode: number }>(29, 3, ANY_FILTER)
      assert.equal(da?.errorCode, ErrorCode.CLUSTER_AUTHORIZATION_FAILED)
    })
  })
})
