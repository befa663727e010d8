// kafka-python's admin client (Debian python3-kafka): create, list, describe, delete topics.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { startTestServer, type TestServer } from '../server/harness.js'

const run = promisify(execFile)
let ts: TestServer
before(async () => {
  ts = await startTestServer()
})
after(async () => {
  await ts.stop()
})

const SCRIPT = `
import json, sys
from kafka.admin import KafkaAdminClient, NewTopic
from kafka.errors import TopicAlreadyExistsError
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id='kpy', request_timeout_ms=10000)
out = {}
admin.create_topics([NewTopic(name='py-a', num_partitions=2, replication_factor=1)])
try:
    admin.create_topics([NewTopic(name='py-a', num_partitions=2, replication_factor=1)])
    out['duplicate'] = 'accepted'
except TopicAlreadyExistsError:
    out['duplicate'] = 'TopicAlreadyExistsError'
out['list'] = sorted(admin.list_topics())
desc = admin.describe_topics(['py-a'])
out['partitions'] = sorted([[p['partition'], p['leader'], p['replicas']] for p in desc[0]['partitions']])
out['cluster'] = admin.describe_cluster()['cluster_id']
admin.delete_topics(['py-a'])
out['after_delete'] = sorted(admin.list_topics())
admin.close()
print(json.dumps(out))
`

test('kafka-python admin works against the server', { timeout: 60_000 }, async () => {
  const { stdout } = await run('/usr/bin/python3', ['-c', SCRIPT, `127.0.0.1:${ts.port}`], {
    timeout: 45_000,
  })
  const out = JSON.parse(stdout.trim().split('\n').pop() as string)
  assert.deepEqual(out, {
    duplicate: 'TopicAlreadyExistsError',
    list: ['py-a'],
    partitions: [
      [0, 1, [1]],
      [1, 1, [1]],
    ],
    cluster: ts.server.clusterId,
    after_delete: [],
  })
})
