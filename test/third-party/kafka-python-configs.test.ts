// kafka-python's admin client (Debian python3-kafka) describes a topic's and this broker's configs:
// DescribeConfigs v2 with synonyms, as it asks a Kafka broker (`describe_configs`).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { after, before, test } from 'node:test'
import { promisify } from 'node:util'
import { startTestServer, type TestServer } from '../server/harness.js'

const run = promisify(execFile)
let ts: TestServer
before(async () => {
  ts = await startTestServer({ 'ssl.key.password': 'not-shown' })
})
after(async () => {
  await ts.stop()
})

const SCRIPT = `
import json, sys
from kafka.admin import KafkaAdminClient, NewTopic, ConfigResource, ConfigResourceType
admin = KafkaAdminClient(bootstrap_servers=sys.argv[1], client_id='kpy', request_timeout_ms=10000)
admin.create_topics([NewTopic(name='py-cfg', num_partitions=1, replication_factor=1,
                              topic_configs={'retention.ms': '1234'})])
out = {}
for r in admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, 'py-cfg'),
                                 ConfigResource(ConfigResourceType.BROKER, '1')], include_synonyms=True):
    out['version'] = r.API_VERSION
    for error_code, error_message, resource_type, resource_name, entries in r.resources:
        wanted = {'retention.ms', 'cleanup.policy', 'node.id', 'ssl.key.password'}
        out['%d:%s' % (resource_type, resource_name)] = {
            'error': error_code,
            'entries': len(entries),
            'picked': sorted([[name, value, read_only, source, sensitive, [list(s) for s in synonyms]]
                              for name, value, read_only, source, sensitive, synonyms in entries if name in wanted]),
        }
admin.close()
print(json.dumps(out))
`

test('kafka-python describe_configs on a topic and on the broker', { timeout: 60_000 }, async () => {
  const { stdout } = await run('/usr/bin/python3', ['-c', SCRIPT, `127.0.0.1:${ts.port}`], {
    timeout: 45_000,
  })
  const out = JSON.parse(stdout.trim().split('\n').pop() as string)
  assert.equal(out.version, 2)
  assert.deepEqual(out['2:py-cfg'], {
    error: 0,
    entries: 36,
    picked: [
      ['cleanup.policy', 'delete', false, 5, false, [['log.cleanup.policy', 'delete', 5]]],
      [
        'retention.ms',
        '1234',
        false,
        1,
        false,
        [
          ['retention.ms', '1234', 1],
          ['log.retention.hours', '168', 5],
        ],
      ],
    ],
  })
  const broker = out['4:1']
  assert.equal(broker.error, 0)
  assert.ok(broker.entries > 50)
  assert.deepEqual(broker.picked, [
    ['node.id', '1', true, 5, false, [['node.id', '1', 5]]],
    [
      'ssl.key.password',
      null,
      true,
      4,
      true,
      [
        ['ssl.key.password', null, 4],
        ['ssl.key.password', null, 5],
      ],
    ],
  ])
})
