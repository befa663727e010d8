// Kafka's Java Admin client manages SCRAM users on a real Topograph process
// (Admin.alterUserScramCredentials / describeUserScramCredentials: the requests kafka-configs
// --entity-type users --alter --add-config 'SCRAM-SHA-512=[…]' and --describe send), Kafka's
// validation errors reach it as Kafka's exceptions, and Kafka's Java producer then authenticates
// with SASL/SCRAM-SHA-512 as the user stored that way, until the credential is deleted.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { scramUserEntry } from '../../src/server/auth/scram.js'
import { closeInterop, InteropServer, JavaClients, kafkaJavaSkip } from '../helpers/interop.js'

const TOPIC = 'scram-users'

describe('SCRAM credentials through the Java Admin client', () => {
  let server: InteropServer
  let java: JavaClients
  before(async () => {
    if (kafkaJavaSkip) return
    server = await InteropServer.start(
      {
        'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512',
        'sasl.scram.users': scramUserEntry('configured', 'SCRAM-SHA-256', 'configured-pw', {
          iterations: 4100,
        }),
        'connection.failed.authentication.delay.ms': '0',
      },
      { extraListeners: ['SASL_PLAINTEXT'] },
    )
    java = await JavaClients.start(server.bootstrap)
  })
  after(() => closeInterop(java, server))

  /** Kafka's Java producer over the SASL_PLAINTEXT listener with SCRAM-SHA-512. */
  function produceAs(user: string, password: string) {
    return java.produce([{ topic: TOPIC, partition: 0, key: 'k', value: `from ${user}` }], {
      'bootstrap.servers': `127.0.0.1:${server.listenerPort('SASL_PLAINTEXT')}`,
      'security.protocol': 'SASL_PLAINTEXT',
      'sasl.mechanism': 'SCRAM-SHA-512',
      'sasl.jaas.config': `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${password}";`,
      'max.block.ms': 20000,
      'delivery.timeout.ms': 20000,
      'request.timeout.ms': 10000,
    })
  }

  test('alterUserScramCredentials, describeUserScramCredentials, then a SCRAM-SHA-512 producer', {
    skip: kafkaJavaSkip,
    timeout: 300_000,
  }, async () => {
    await java.call({ op: 'createTopics', topics: [{ name: TOPIC, partitions: 1 }] })
    assert.deepEqual(await java.call({ op: 'describeUserScramCredentials' }), {
      configured: [['SCRAM-SHA-256', 4100]],
    })
    await assert.rejects(produceAs('alice', 'alice-secret'), /SaslAuthenticationException/)

    assert.deepEqual(
      await java.call({
        op: 'alterUserScramCredentials',
        upsertions: [
          { user: 'alice', mechanism: 'SCRAM-SHA-512', iterations: 8192, password: 'alice-secret' },
          { user: 'bob', mechanism: 'SCRAM-SHA-256', iterations: 4096, password: 'bob-secret' },
        ],
      }),
      { alice: null, bob: null },
    )
    assert.deepEqual(await java.call({ op: 'describeUserScramCredentials' }), {
      alice: [['SCRAM-SHA-512', 8192]],
      bob: [['SCRAM-SHA-256', 4096]],
      configured: [['SCRAM-SHA-256', 4100]],
    })
    // A user without credential is described with none (the Admin client takes RESOURCE_NOT_FOUND
    // so); a user named twice fails the call.
    assert.deepEqual(await java.call({ op: 'describeUserScramCredentials', users: ['alice', 'nobody'] }), {
      alice: [['SCRAM-SHA-512', 8192]],
      nobody: [],
    })
    await assert.rejects(
      java.call({ op: 'describeUserScramCredentials', users: ['bob', 'bob'] }),
      /DuplicateResourceException: Cannot describe SCRAM credentials for the same user twice in a single request: bob/,
    )

    // Kafka's validation, as Kafka's exceptions.
    assert.deepEqual(
      await java.call({
        op: 'alterUserScramCredentials',
        upsertions: [
          { user: 'few', mechanism: 'SCRAM-SHA-256', iterations: 4000, password: 'x' },
          { user: 'many', mechanism: 'SCRAM-SHA-512', iterations: 20000, password: 'x' },
          { user: 'twice', mechanism: 'SCRAM-SHA-256', iterations: 4096, password: 'x' },
          { user: 'twice', mechanism: 'SCRAM-SHA-512', iterations: 4096, password: 'x' },
        ],
        deletions: [
          { user: 'nobody', mechanism: 'SCRAM-SHA-256' },
          { user: 'configured', mechanism: 'SCRAM-SHA-256' },
        ],
      }),
      {
        configured:
          'InvalidRequestException: The SCRAM-SHA-256 credential of user configured comes from sasl.scram.users and cannot be deleted through the API; remove it from the configuration',
        few: 'UnacceptableCredentialException: Too few iterations',
        many: 'UnacceptableCredentialException: Too many iterations',
        nobody: 'ResourceNotFoundException: Attempt to delete a user credential that does not exist',
        twice: 'DuplicateResourceException: A user credential cannot be altered twice in the same request',
      },
    )

    // Kafka's producer authenticates with the stored credential at once.
    const acked = await produceAs('alice', 'alice-secret')
    assert.equal(acked.length, 1)
    await assert.rejects(produceAs('alice', 'wrong'), /SaslAuthenticationException/)

    // Deleted: the next authentication fails.
    assert.deepEqual(
      await java.call({
        op: 'alterUserScramCredentials',
        deletions: [{ user: 'alice', mechanism: 'SCRAM-SHA-512' }],
      }),
      { alice: null },
    )
    await assert.rejects(produceAs('alice', 'alice-secret'), /SaslAuthenticationException/)
    assert.deepEqual(Object.keys(await java.call({ op: 'describeUserScramCredentials' })), [
      'bob',
      'configured',
    ])
  })
})
