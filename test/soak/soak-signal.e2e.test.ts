// `npm run soak` stopped by a signal stops its server: a soak killed with SIGTERM (or SIGINT) sends
// SIGTERM to the `topograph start` process it started, instead of leaving it running on its port
// and data directory.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { test } from 'node:test'

/** The pids whose parent is `ppid` (from /proc/<pid>/stat: the field after the state). */
function childrenOf(ppid: number): number[] {
  const out: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[1]) === ppid) out.push(Number(name))
    } catch {
      // exited while listed
    }
  }
  return out
}

/** Whether `pid` still runs (an exited process not yet reaped by its new parent does not). */
const alive = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
  } catch {
    return false
  }
}

const commandLine = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')
  } catch {
    return ''
  }
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`a soak stopped by ${signal} stops its server`, { timeout: 120_000 }, async () => {
    const soak = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'tools/soak/main.ts',
        '--minutes',
        '2',
        '--minute-seconds',
        '60',
        '--members',
        '20',
        '--groups',
        '2',
        '--load-threads',
        '1',
        '--ceiling-members',
        '0',
        '--producers',
        '0',
        '--consumers',
        '0',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let out = ''
    soak.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    soak.stderr.on('data', (d: Buffer) => {
      out += d.toString()
    })
    const exited = new Promise<number | null>((resolve) => soak.once('exit', (code) => resolve(code)))
    let servers: number[] = []
    try {
      // The members have joined: the server is up.
      for (let i = 0; i < 900 && !out.includes('set-up:'); i++) await new Promise((r) => setTimeout(r, 100))
      assert.ok(out.includes('set-up:'), `the soak did not set up:\n${out}`)
      servers = childrenOf(soak.pid!).filter((pid) => commandLine(pid).includes('topograph.ts start'))
      assert.equal(servers.length, 1, `one server process under the soak:\n${out}`)
      soak.kill(signal)
      assert.equal(await exited, signal === 'SIGINT' ? 130 : 143, out)
      assert.match(out, new RegExp(`soak: ${signal}: stopping 1 server process\\b`))
      for (let i = 0; i < 300 && alive(servers[0]); i++) await new Promise((r) => setTimeout(r, 100))
      assert.equal(alive(servers[0]), false, `the server (pid ${servers[0]}) outlived the soak`)
    } finally {
      if (soak.exitCode === null) soak.kill('SIGKILL')
      for (const pid of servers.filter(alive)) process.kill(pid, 'SIGKILL')
    }
  })
}
