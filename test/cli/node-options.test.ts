// `topograph start` runs with a young generation of fixed size and V8's helper threads sized to the
// machine (README, "Configuration"): the Node options sit on the CLI's #! line, and `npm start`
// (scripts/start.sh) takes them from there.
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { test } from 'node:test'
import { cliNodeOptions } from '../helpers/topograph-process.js'

test("the CLI's #! line fixes the young generation: the same minimum and maximum semi-space size", () => {
  const options = cliNodeOptions()
  const size = (name: string) => {
    const o = options.find((x) => x.startsWith(`--${name}=`))
    assert.ok(o !== undefined, `--${name} missing from ${options.join(' ')}`)
    return Number(o.slice(name.length + 3))
  }
  assert.ok(size('max-semi-space-size') > 0)
  assert.equal(size('min-semi-space-size'), size('max-semi-space-size'))
})

test("the CLI's #! line sizes V8's helper threads to the machine", () => {
  // 0: Node's own rule, one fewer than the CPUs it may use and at least one (Node's default is 4).
  // The end-to-end tests start every server process with these options, so each Node the tests run
  // on takes them.
  const options = cliNodeOptions()
  assert.ok(options.includes('--v8-pool-size=0'), `--v8-pool-size=0 missing from ${options.join(' ')}`)
})

test('npm start runs the built CLI with the options of its #! line', () => {
  const script = readFileSync('scripts/start.sh', 'utf8')
  const extract = /node_options=\$\(sed -n '1s\/\^#!\.\* node \/\/p' dist\/src\/cli\/topograph\.js\)/
  assert.match(script, extract)
  assert.match(script, /exec node \$node_options dist\/src\/cli\/topograph\.js start/)
  // What that sed prints for the #! line (the built file keeps the source's first line).
  const first = readFileSync('src/cli/topograph.ts', 'utf8').split('\n', 1)[0]
  assert.deepEqual(first.replace(/^#!.* node /, '').split(' '), cliNodeOptions())
})
