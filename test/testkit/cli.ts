/**
 * The command-line tools as the tests run them: `kafka-streams-groups` in this process (through
 * `execute`, output captured: what the process would print and the status it would exit with,
 * without the seconds a new process costs on a loaded machine) or as its own process (the entry
 * point, its exit status and its own stdout/stderr), and `topograph` as a child process.
 */
import { execFile, spawnSync, type SpawnSyncReturns } from 'node:child_process'
import { execute } from '../../src/cli/kafka-streams-groups.js'

export interface CliRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const ROOT = new URL('../../', import.meta.url).pathname

/** `kafka-streams-groups <args>` in this process. */
export async function runStreamsGroups(args: readonly string[]): Promise<CliRun> {
  let stdout = ''
  let stderr = ''
  const code = await execute(args, {
    out: (s) => {
      stdout += s
    },
    err: (s) => {
      stderr += s
    },
  })
  return { code, stdout, stderr }
}

/** `kafka-streams-groups <args>` as its own process. */
export function runStreamsGroupsProcess(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'src/cli/kafka-streams-groups.ts', ...args],
      { cwd: ROOT, timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1
        resolve({ code, stdout, stderr })
      },
    )
  })
}

/**
 * `topograph <args>` as a child process that sees only the TOPOGRAPH_* variables in `env` (none is
 * inherited from the test's environment).
 */
export function runTopograph(
  args: readonly string[],
  env: Record<string, string> = {},
): SpawnSyncReturns<string> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TOPOGRAPH_')))
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/topograph.ts', ...args], {
    cwd: ROOT,
    env: { ...base, ...env },
    encoding: 'utf8',
    timeout: 30_000,
  })
}
