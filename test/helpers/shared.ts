// Reference material kept beside the repository, in ../shared (Kafka's message definitions, Kafka's
// own Java clients and tools). A clone without it still passes its tests: a test that needs a
// missing folder is reported as not run (node:test `skip` with the reason), never as passed or
// failed. CI sets TOPOGRAPH_REQUIRE_SHARED=1, and then a missing folder fails those tests instead.
import { existsSync } from 'node:fs'
import { relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** ../shared/<parts…> as an absolute path. */
export function sharedPath(...parts: string[]): string {
  return resolve(REPO_ROOT, '..', 'shared', ...parts)
}

/**
 * The `skip` option for a test that reads `path`: false when it exists (or when CI requires it),
 * otherwise "<path> not found: not run", which node:test prints beside the test.
 */
export function skipUnlessPresent(path: string): string | false {
  if (existsSync(path) || process.env.TOPOGRAPH_REQUIRE_SHARED === '1') return false
  return `${relative(REPO_ROOT, path)} not found: not run`
}
