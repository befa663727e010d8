import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import {
  ConfigError,
  configFromEnv,
  envNameToKey,
  loadConfigFromSources,
  logConfig,
  mergeSources,
  parseConfig,
  parseOverride,
  parseProperties,
} from '../../src/server/config.js'
import { hideUrlPassword } from '../../src/server/config-defs.js'
import { describeBroker } from '../../src/server/configs/broker.js'

const dir = mkdtempSync(join(tmpdir(), 'topograph-config-'))
after(() => rmSync(dir, { recursive: true, force: true }))

function writeProps(name: string, text: string): string {
  const path = join(dir, name)
  writeFileSync(path, text)
  return path
}

describe('parseProperties', () => {
  it('reads the three separators and ignores comments and blank lines', () => {
    const text = [
      '# a comment',
      '! another comment',
      '',
      '   ',
      'a=1',
      'b: 2',
      'c 3',
      '  d   =   4',
      'e\t:\tfive',
      'f',
      'g=',
    ].join('\n')
    assert.deepEqual(parseProperties(text), { a: '1', b: '2', c: '3', d: '4', e: 'five', f: '', g: '' })
  })

  it('keeps trailing white space and separators inside the value', () => {
    assert.deepEqual(parseProperties('k = a=b: c  '), { k: 'a=b: c  ' })
  })

  it('joins continued lines, dropping the leading white space of the next line', () => {
    const text = 'listeners=PLAINTEXT://a:1,\\\n     PLAINTEXT2://b:2\nnext=x'
    assert.deepEqual(parseProperties(text), { listeners: 'PLAINTEXT://a:1,PLAINTEXT2://b:2', next: 'x' })
  })

  it('treats an even number of trailing backslashes as escaped backslashes, not a continuation', () => {
    assert.deepEqual(parseProperties('path=C:\\\\dir\\\\\nother=1'), { path: 'C:\\dir\\', other: '1' })
  })

  it('does not continue a comment line', () => {
    assert.deepEqual(parseProperties('# comment \\\nkey=value'), { key: 'value' })
  })

  it('drops a continuation at the end of the text', () => {
    assert.deepEqual(parseProperties('key=value\\'), { key: 'value' })
  })

  it('decodes escapes in keys and values', () => {
    const text = 'my\\ key\\=x\\:y = tab\\there\\nnew\\u00e9\\\\\\q'
    assert.deepEqual(parseProperties(text), { 'my key=x:y': 'tab\there\nnew\u00e9\\q' })
  })

  it('accepts CRLF and CR line ends', () => {
    assert.deepEqual(parseProperties('a=1\r\nb=2\rc=3'), { a: '1', b: '2', c: '3' })
  })

  it('lets a later duplicate key win', () => {
    assert.deepEqual(parseProperties('a=1\na=2'), { a: '2' })
  })

  it('reads UTF-8 text as is', () => {
    assert.deepEqual(parseProperties('plugin.label=café ✓'), { 'plugin.label': 'café ✓' })
  })

  it('refuses a malformed \\u escape, naming the source and line', () => {
    assert.throws(
      () => parseProperties('ok=1\nbad=\\u12G4', 'server.properties'),
      (e: unknown) =>
        e instanceof ConfigError && e.message === "server.properties:2: malformed \\uXXXX escape '\\u12G4'",
    )
  })
})

describe('environment variables', () => {
  it('maps names as Kafka’s container image does', () => {
    assert.equal(
      envNameToKey('TOPOGRAPH_GROUP_STREAMS_SESSION_TIMEOUT_MS'),
      'group.streams.session.timeout.ms',
    )
    assert.equal(envNameToKey('TOPOGRAPH_NODE_ID'), 'node.id')
    assert.equal(envNameToKey('TOPOGRAPH_MY__PLUGIN___OPTION'), 'my_plugin-option')
    assert.equal(envNameToKey('TOPOGRAPH_A____B'), 'a-.b')
    assert.equal(envNameToKey('TOPOGRAPH_A_____B'), 'a-_b')
    assert.equal(envNameToKey('TOPOGRAPH_'), null)
    assert.equal(envNameToKey('KAFKA_NODE_ID'), null)
    assert.equal(envNameToKey('PATH'), null)
  })

  it('collects only TOPOGRAPH_ variables', () => {
    assert.deepEqual(configFromEnv({ TOPOGRAPH_NODE_ID: '4', HOME: '/root', TOPOGRAPH_X: undefined }), {
      'node.id': '4',
    })
  })
})

describe('parseOverride', () => {
  it('splits at the first =', () => {
    assert.deepEqual(parseOverride('listeners=PLAINTEXT://a:1'), ['listeners', 'PLAINTEXT://a:1'])
    assert.deepEqual(parseOverride('k=a=b'), ['k', 'a=b'])
    assert.deepEqual(parseOverride('k='), ['k', ''])
  })

  it('refuses an argument without a key', () => {
    for (const bad of ['novalue', '=x', ' =x']) {
      assert.throws(
        () => parseOverride(bad),
        (e: unknown) => e instanceof ConfigError && /expected key=value/.test(e.message),
      )
    }
  })
})

describe('sources and precedence', () => {
  it('uses the defaults when there is no source', () => {
    assert.equal(loadConfigFromSources({}).groupStreamsSessionTimeoutMs, 45000)
  })

  it('file < environment < --override, each key on its own', () => {
    const file = writeProps(
      'precedence.properties',
      ['node.id=10', 'group.streams.num.standby.replicas=1', 'data.dir=/from/file', 'plugin.extra=file'].join(
        '\n',
      ),
    )
    const env = { TOPOGRAPH_NODE_ID: '20', TOPOGRAPH_GROUP_STREAMS_NUM_STANDBY_REPLICAS: '2' }
    const c = loadConfigFromSources({ configFile: file, env, overrides: ['node.id=30'] })
    assert.equal(c.nodeId, 30, 'override beats environment and file')
    assert.equal(c.groupStreamsNumStandbyReplicas, 2, 'environment beats file')
    assert.equal(c.dataDir, '/from/file', 'file beats default')
    assert.equal(c.offsetsTopicNumPartitions, 50, 'default when no source sets it')
    assert.deepEqual(c.unknownKeys, ['plugin.extra'])
    assert.deepEqual(c.raw, {
      'node.id': '30',
      'group.streams.num.standby.replicas': '2',
      'data.dir': '/from/file',
      'plugin.extra': 'file',
    })
  })

  it('lets a later --override win over an earlier one', () => {
    assert.equal(loadConfigFromSources({ overrides: ['node.id=1', 'node.id=2'] }).nodeId, 2)
  })

  it('reports an unreadable file without a key', () => {
    const missing = join(dir, 'missing.properties')
    const e = (() => {
      try {
        mergeSources({ configFile: missing })
      } catch (err) {
        return err
      }
    })()
    assert.ok(e instanceof ConfigError)
    assert.equal(e.key, null)
    assert.ok(e.message.startsWith(`Cannot read configuration file ${missing}: `), e.message)
    assert.match(e.message, /ENOENT/)
  })

  it('names the key of a bad value from any source', () => {
    const file = writeProps('bad.properties', 'queued.max.requests=0\n')
    assert.throws(
      () => loadConfigFromSources({ configFile: file }),
      /configuration queued\.max\.requests: Value must be at least 1/,
    )
    assert.throws(
      () => loadConfigFromSources({ env: { TOPOGRAPH_LOG_LEVEL: 'loud' } }),
      /Invalid value loud for configuration log\.level/,
    )
  })

  it('parses the shipped config/server.properties', () => {
    const c = loadConfigFromSources({
      configFile: new URL('../../config/server.properties', import.meta.url).pathname,
    })
    assert.deepEqual(c.listeners, [{ listenerName: 'PLAINTEXT', host: 'localhost', port: 9092 }])
    assert.equal(c.dataDir, './data')
    assert.equal(c.groupStreamsTopologyDescriptionPluginClass, 'sqlite')
    assert.deepEqual(c.consoleListener, { host: 'localhost', port: 8080 })
    assert.deepEqual(c.unknownKeys, [])
  })
})

describe('logConfig', () => {
  it('logs the effective values once and each unknown key once at WARN', () => {
    const infos: [object, string][] = []
    const warns: [object, string][] = []
    const logger = {
      info: (o: object, m: string) => void infos.push([o, m]),
      warn: (o: object, m: string) => void warns.push([o, m]),
    }
    logConfig(parseConfig({ 'node.id': '5', 'b.unknown': '1', 'a.unknown': '2' }), logger)
    assert.equal(infos.length, 1)
    const [fields, msg] = infos[0] as [{ config: Record<string, string | null> }, string]
    assert.equal(msg, 'TopographConfig values')
    assert.equal(fields.config['node.id'], '5')
    assert.equal(fields.config['offsets.topic.num.partitions'], '50')
    assert.equal(fields.config['group.streams.topology.description.plugin.class'], null)
    assert.deepEqual(warns, [
      [{ key: 'a.unknown' }, "The configuration 'a.unknown' was supplied but isn't a known config."],
      [{ key: 'b.unknown' }, "The configuration 'b.unknown' was supplied but isn't a known config."],
    ])
  })
  it("does not warn about the built-in plugins' own keys", () => {
    const warns: string[] = []
    const logger = { info: () => undefined, warn: (_o: object, m: string) => void warns.push(m) }
    const pluginKeys = {
      'topology.description.max.bytes': '1000',
      'topology.description.memory.max.groups': '10',
      'topology.description.memory.max.bytes': '1000',
      'topology.description.sqlite.path': '/tmp/x.db',
      'topology.description.postgres.url': 'postgres://db/x',
      'topology.description.postgres.pool.size': '2',
      'topology.description.postgres.connect.timeout.ms': '100',
      'topology.description.postgres.query.timeout.ms': '100',
      'topology.description.postgres.table': 't',
    }
    logConfig(parseConfig({ ...pluginKeys, 'topology.description.postgres.urll': 'x' }), logger)
    assert.deepEqual(warns, [
      "The configuration 'topology.description.postgres.urll' was supplied but isn't a known config.",
    ])
  })
})

describe('a password in the coordinator.storage URL', () => {
  const url = 'postgres://topograph:s3cret@db:5432/coordinator?options=-c%20search_path%3Dtg'
  const shown = 'postgres://topograph:***@db:5432/coordinator?options=-c%20search_path%3Dtg'

  it('is hidden in the logged configuration and in the broker configs DescribeConfigs answers', () => {
    const config = parseConfig({ 'coordinator.storage': url })
    assert.equal(config.coordinatorStorage, url, 'the server itself gets the whole URL')
    const infos: { config: Record<string, string | null> }[] = []
    logConfig(config, { info: (o) => void infos.push(o as (typeof infos)[0]), warn: () => undefined })
    assert.equal(infos[0].config['coordinator.storage'], shown)
    const described = describeBroker(config, 1, '1')
    assert.ok('entries' in described)
    const entry = described.entries.find((e) => e.name === 'coordinator.storage')
    assert.ok(entry !== undefined)
    assert.equal(entry.value, shown)
    assert.equal(entry.isSensitive, false)
    assert.deepEqual(
      entry.synonyms.map((s) => s.value),
      [shown, 'sqlite'],
    )
    assert.doesNotMatch(JSON.stringify(described), /s3cret/)
  })

  it('is hidden as a user-info password or a password parameter, whatever it contains', () => {
    assert.equal(hideUrlPassword('postgres://u:p@ss:w@db/x'), 'postgres://u:***@db/x')
    assert.equal(
      hideUrlPassword('postgresql://db/x?user=u&password=pw&sslmode=require'),
      'postgresql://db/x?user=u&password=***&sslmode=require',
    )
    assert.equal(hideUrlPassword('postgres://u@db/x'), 'postgres://u@db/x')
    assert.equal(hideUrlPassword('sqlite'), 'sqlite')
  })
})
