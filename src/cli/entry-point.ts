import { realpathSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

/**
 * Whether the module at `moduleUrl` (its `import.meta.url`) is the script Node was started with.
 * npm installs a package's commands as symlinks (node_modules/.bin/<name>), and Node resolves the
 * symlink for the module's URL but not for `process.argv[1]`, so the two are compared by real path.
 */
export function isEntryPoint(moduleUrl: string): boolean {
  const script = process.argv[1]
  if (script === undefined) return false
  try {
    return pathToFileURL(realpathSync(script)).href === moduleUrl
  } catch {
    return false
  }
}
