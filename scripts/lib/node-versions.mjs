// The Node versions the tests run on. The running Node is used as it is; another major version is
// taken from the npm registry package node-<platform>-<arch>@<major> (the official binary and its
// headers) and kept in the cache folder, ~/.cache/topograph-node or $TOPOGRAPH_NODE_CACHE:
//
//   node-<major>/bin/node                                       a Node version, fetched once
//   better-sqlite3/<version>-abi<N>-<platform>-<arch>/better_sqlite3.node
//                                                               better-sqlite3's addon for that ABI
//
// Nothing in node_modules changes. The native dependencies built on Node-API (@node-rs/crc32,
// snappy, lz4-napi, zstd-napi) load on every version as installed; better-sqlite3 is compiled per
// Node ABI, so for an ABI other than the installed one its addon is compiled once (node-gyp with the
// fetched version's headers) and scripts/lib/native-addons.mjs loads it in its place.
import { spawnSync } from 'node:child_process'
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import { homedir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
export const CACHE = process.env.TOPOGRAPH_NODE_CACHE ?? join(homedir(), '.cache', 'topograph-node')
const PRELOAD = fileURLToPath(new URL('./native-addons.mjs', import.meta.url))

function log(line) {
  process.stdout.write(`== ${line}\n`)
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: 'utf8', ...options })
  if (r.status !== 0) {
    const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n').slice(-30).join('\n')
    throw new Error(`${command} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`})\n${out}`)
  }
  return r.stdout
}

/** The node binary of a major version: the running one, or one from the cache (fetched when missing). */
export function ensureNode(major) {
  if (Number(process.versions.node.split('.')[0]) === major) return process.execPath
  const dir = join(CACHE, `node-${major}`)
  const bin = join(dir, 'bin', 'node')
  if (existsSync(bin)) return bin
  const pkg = `node-${process.platform}-${process.arch}@${major}`
  log(`fetching Node ${major} (${pkg}) into ${dir}`)
  mkdirSync(CACHE, { recursive: true })
  const tmp = mkdtempSync(join(CACHE, `.node-${major}-`))
  try {
    const file = run('npm', ['pack', pkg, '--silent', '--pack-destination', tmp], { cwd: tmp })
      .trim()
      .split('\n')
      .pop()
    run('tar', ['xzf', join(tmp, file), '-C', tmp])
    rmSync(dir, { recursive: true, force: true })
    renameSync(join(tmp, 'package'), dir)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return bin
}

/** Node's own npm-bundled node-gyp (npm sets npm_config_node_gyp for the scripts it runs). */
function nodeGyp() {
  const candidates = [process.env.npm_config_node_gyp]
  const npm = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim()
  if (npm)
    candidates.push(join(dirname(realpathSync(npm)), '..', 'node_modules', 'node-gyp', 'bin', 'node-gyp.js'))
  const found = candidates.find((p) => p && existsSync(p))
  if (!found) throw new Error('node-gyp not found (it comes with npm); cannot build better-sqlite3')
  return found
}

const PROBE = `
const Database = require('better-sqlite3')
new Database(':memory:').prepare('select 1').get()
require('@node-rs/crc32').crc32c(Buffer.from('x'))
require('snappy').compressSync(Buffer.from('x'))
require('lz4-napi').compressSync(Buffer.from('x'))
new (require('zstd-napi').Compressor)()
`

function probe(bin, env) {
  return spawnSync(bin, ['-e', PROBE], { cwd: ROOT, env, encoding: 'utf8' })
}

/**
 * The environment a run on `bin` needs: PATH with that Node first (tests that start `node`, and npm
 * bins, get the same version), and the addon redirect when better-sqlite3 must be built for its ABI.
 * Throws when a native dependency cannot be loaded.
 */
export function envFor(bin) {
  const env = { ...process.env, PATH: `${dirname(bin)}${delimiter}${process.env.PATH ?? ''}` }
  delete env.TOPOGRAPH_BETTER_SQLITE3_ADDON
  let r = probe(bin, env)
  if (r.status === 0) return env
  if (!/NODE_MODULE_VERSION|compiled against a different Node/.test(r.stderr)) {
    throw new Error(`native dependencies do not load on ${bin}:\n${r.stderr}`)
  }
  const addon = ensureBetterSqlite3(bin)
  env.TOPOGRAPH_BETTER_SQLITE3_ADDON = addon
  env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import ${PRELOAD}`.trim()
  r = probe(bin, env)
  if (r.status !== 0) throw new Error(`native dependencies do not load on ${bin} with ${addon}:\n${r.stderr}`)
  return env
}

/** better-sqlite3's addon compiled for the ABI of `bin`, built into the cache when missing. */
function ensureBetterSqlite3(bin) {
  const require = createRequire(join(ROOT, 'package.json'))
  const pkgDir = dirname(require.resolve('better-sqlite3/package.json'))
  const version = JSON.parse(readFileSync(join(pkgDir, 'package.json'), 'utf8')).version
  const abi = run(bin, ['-p', 'process.versions.modules']).trim()
  const dir = join(CACHE, 'better-sqlite3', `${version}-abi${abi}-${process.platform}-${process.arch}`)
  const addon = join(dir, 'better_sqlite3.node')
  if (existsSync(addon)) return addon
  const nodeDir = dirname(dirname(bin))
  if (!existsSync(join(nodeDir, 'include', 'node', 'node_version.h'))) {
    throw new Error(`better-sqlite3 needs a build for Node ABI ${abi}, and ${nodeDir} has no headers`)
  }
  log(`building better-sqlite3 ${version} for Node ABI ${abi} (once; a few minutes)`)
  mkdirSync(join(CACHE, 'better-sqlite3'), { recursive: true })
  const tmp = mkdtempSync(join(CACHE, 'better-sqlite3', '.build-'))
  try {
    for (const part of ['binding.gyp', 'package.json', 'deps', 'src'])
      cpSync(join(pkgDir, part), join(tmp, part), { recursive: true })
    // node-gyp takes every npm_config_* variable over its own flags: under `npm test` an npmrc's
    // `nodedir` (set on machines that build against the system Node's headers) would replace
    // --nodedir and build for the wrong ABI. The build gets none of them.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_config_/i.test(k)))
    run(bin, [nodeGyp(), 'rebuild', '--release', `--nodedir=${nodeDir}`, '-j', 'max'], {
      cwd: tmp,
      env: { ...env, PATH: `${dirname(bin)}${delimiter}${process.env.PATH}` },
    })
    mkdirSync(dir, { recursive: true })
    copyFileSync(join(tmp, 'build', 'Release', 'better_sqlite3.node'), addon)
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
  return addon
}
