import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseArgs, UsageError } from '../../src/cli/args.js'

describe('parseArgs', () => {
  it('reads start with --config and repeated --override, in both spellings', () => {
    assert.deepEqual(
      parseArgs([
        'start',
        '--config',
        'a.properties',
        '--override',
        'node.id=2',
        '--override=log.level=debug',
      ]),
      {
        command: 'start',
        configFile: 'a.properties',
        overrides: ['node.id=2', 'log.level=debug'],
        demo: false,
      },
    )
    assert.deepEqual(parseArgs(['start', '--config=b.properties']), {
      command: 'start',
      configFile: 'b.properties',
      overrides: [],
      demo: false,
    })
    assert.deepEqual(parseArgs(['start']), {
      command: 'start',
      configFile: undefined,
      overrides: [],
      demo: false,
    })
    assert.deepEqual(parseArgs(['start', '--demo', '--config', 'c.properties']), {
      command: 'start',
      configFile: 'c.properties',
      overrides: [],
      demo: true,
    })
  })

  it('keeps = inside an override value', () => {
    assert.deepEqual(parseArgs(['start', '--override', 'plugin.dsn=a=b']), {
      command: 'start',
      configFile: undefined,
      overrides: ['plugin.dsn=a=b'],
      demo: false,
    })
  })

  it('reads help and version', () => {
    for (const a of [['--help'], ['-h'], ['help'], ['start', '--help']])
      assert.deepEqual(parseArgs(a), { command: 'help' })
    for (const a of [['--version'], ['-V']]) assert.deepEqual(parseArgs(a), { command: 'version' })
  })

  const bad: [argv: string[], message: string][] = [
    [[], 'no command given'],
    [['stop'], "unknown command 'stop'"],
    [['start', '--config'], '--config needs a value'],
    [['start', '--config', '--override', 'a=b'], '--config needs a value'],
    [['start', '--config='], '--config needs a file name'],
    [['start', '--config', 'a', '--config', 'b'], '--config may be given only once'],
    [['start', '--override'], '--override needs a value'],
    [['start', '--override', 'novalue'], "--override 'novalue' is not of the form key=value"],
    [['start', '--override', '=x'], "--override '=x' is not of the form key=value"],
    [['start', '--port', '9092'], "unknown option '--port' for start"],
    [['start', 'extra'], "unknown option 'extra' for start"],
  ]
  for (const [argv, message] of bad) {
    it(`refuses ${JSON.stringify(argv)}`, () => {
      assert.throws(
        () => parseArgs(argv),
        (e: unknown) => e instanceof UsageError && e.message === message,
      )
    })
  }
})
