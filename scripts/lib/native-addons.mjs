// Preloaded through NODE_OPTIONS (--import) by scripts/run-tests.mjs when the tests run on a Node
// version whose ABI differs from the one node_modules was installed with. better-sqlite3 is the
// one native dependency compiled against a single Node ABI (the others use Node-API, which every
// version loads); its addon for this ABI is built once into the cache (scripts/lib/node-versions.mjs)
// and TOPOGRAPH_BETTER_SQLITE3_ADDON names it. Loading the installed addon is redirected there, so
// node_modules stays as installed and every process the tests start (servers, CLIs) follows suit.
import { basename, dirname } from 'node:path'

const addon = process.env.TOPOGRAPH_BETTER_SQLITE3_ADDON
if (addon) {
  const dlopen = process.dlopen
  process.dlopen = function redirected(module, filename, ...rest) {
    const installed =
      basename(filename) === 'better_sqlite3.node' &&
      /[\\/]better-sqlite3[\\/]build[\\/]/.test(dirname(filename))
    return dlopen.call(this, module, installed ? addon : filename, ...rest)
  }
}
