// Preloaded (--import) into every test file's process by scripts/run-tests.mjs. In a file of the
// unit tier (scripts/lib/tiers.mjs) it makes opening a socket (TCP, TLS, HTTP, a Unix socket, UDP,
// PostgreSQL) or spawning a process throw, and marks the file failed even if the code under test
// swallows the error. Files of the other tiers run untouched.
import childProcess from 'node:child_process'
import dgram from 'node:dgram'
import { syncBuiltinESMExports } from 'node:module'
import net from 'node:net'
import { relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { tierOf } from './tiers.mjs'

const root = fileURLToPath(new URL('../..', import.meta.url))
const file = process.argv[1] ? relative(root, resolve(process.argv[1])) : ''

if (file.endsWith('.test.ts') && tierOf(file) === 'unit') {
  const refuse = (what) => {
    const message =
      `${file} is a unit test and tried to ${what}. Unit tests open no sockets, spawn no processes ` +
      `and need no database: name the file *.e2e.test.ts (or move it to test/e2e/), or keep the ` +
      `test in process (README, "Tests").`
    process.stderr.write(`\n${message}\n`)
    process.exitCode = 1
    throw new Error(message)
  }
  const describeTarget = (args) => {
    const a = args[0]
    if (Array.isArray(a)) return describeTarget(a)
    if (a && typeof a === 'object') return a.path ?? `${a.host ?? 'localhost'}:${a.port}`
    if (typeof a === 'string' && typeof args[1] === 'string') return `${args[1]}:${a}`
    return String(a)
  }
  net.Socket.prototype.connect = function connect(...args) {
    refuse(`open a connection to ${describeTarget(args)}`)
  }
  net.Server.prototype.listen = function listen(...args) {
    refuse(`listen on ${describeTarget(args)}`)
  }
  dgram.Socket.prototype.bind = function bind() {
    refuse('bind a UDP socket')
  }
  for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork']) {
    childProcess[name] = function refused(command) {
      refuse(`spawn a process (${name} ${command})`)
    }
  }
  // ESM imports of node:child_process bind to its named exports; make them see the change.
  syncBuiltinESMExports()
}
