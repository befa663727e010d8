/**
 * Loads the plugin named by `group.streams.topology.description.plugin.class`, the way Kafka's
 * `AbstractConfig.getConfiguredInstance` does for a class name: unset means no plugin; otherwise
 * instantiate, check the shape, and configure with every config. Any failure is a
 * {@link PluginLoadError} naming the key and the cause, which stops start-up.
 */
import { LocalError } from '../errors.js'
import { existsSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isAbsolute, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { type GuardedTopologyDescriptionPlugin, guardPlugin } from './guard.js'
import type { StreamsGroupTopologyDescriptionPlugin } from './spi.js'

export const PLUGIN_CLASS_KEY = 'group.streams.topology.description.plugin.class'
export const PLUGIN_TIMEOUT_KEY = 'group.streams.topology.description.plugin.timeout.ms'

/** Built-in plugins by alias; imported lazily so `pg` is loaded only when the postgres plugin is used. */
const BUILTINS: Readonly<Record<string, () => Promise<Record<string, unknown>>>> = {
  memory: () => import('./builtin/memory.js'),
  sqlite: () => import('./builtin/sqlite.js'),
  postgres: () => import('./builtin/postgres.js'),
}

const METHODS = ['configure', 'setTopology', 'getTopology', 'deleteTopology', 'close'] as const

/** A plugin that cannot be loaded or configured. The message names the config key and the cause. */
export class PluginLoadError extends LocalError {
  /** The config key at fault. */
  readonly key: string
  /** Its value. */
  readonly value: string

  constructor(key: string, value: string, reason: string, options?: { readonly cause?: unknown }) {
    super('PLUGIN_LOAD_FAILED', `Invalid value ${value} for configuration ${key}: ${reason}`, options)
    this.name = 'PluginLoadError'
    this.key = key
    this.value = value
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) return e.message === '' ? e.name : e.message
  return String(e)
}

/**
 * The deadline of `group.streams.topology.description.plugin.timeout.ms` (D5), or undefined when
 * unset (no deadline, as in Kafka).
 * @throws PluginLoadError when the value is not an integer from 1 to 2147483647.
 */
export function pluginTimeoutMs(configs: Readonly<Record<string, string>>): number | undefined {
  const raw = configs[PLUGIN_TIMEOUT_KEY]
  if (raw === undefined || raw.trim() === '') return undefined
  const v = Number(raw.trim())
  if (!/^\d+$/.test(raw.trim()) || v < 1 || v > 2_147_483_647) {
    throw new PluginLoadError(
      PLUGIN_TIMEOUT_KEY,
      raw,
      'must be an integer from 1 to 2147483647 (milliseconds)',
    )
  }
  return v
}

/** Splits `module#Export`. A leading '#' belongs to the specifier (Node's subpath imports). */
function splitExport(value: string): { readonly specifier: string; readonly exportName: string | null } {
  const i = value.lastIndexOf('#')
  if (i <= 0) return { specifier: value, exportName: null }
  return { specifier: value.slice(0, i), exportName: value.slice(i + 1) }
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile()
  } catch {
    return false
  }
}

/** Imports the module a specifier names: an alias, a file path (absolute or cwd-relative) or a package. */
async function importModule(specifier: string, cwd: string): Promise<Record<string, unknown>> {
  const builtin = BUILTINS[specifier]
  if (builtin !== undefined) return builtin()
  if (specifier.startsWith('file:')) return import(specifier)
  const looksLikePath = isAbsolute(specifier) || /^\.\.?([/\\]|$)/.test(specifier)
  const asPath = resolve(cwd, specifier)
  if (looksLikePath || isFile(asPath)) {
    if (!existsSync(asPath)) throw new Error(`no such file ${asPath}`)
    return import(pathToFileURL(asPath).href)
  }
  // A package: resolved from the working directory first (the operator's project), then from
  // Topograph's own location (a package installed next to it).
  let resolved: string | null = null
  try {
    resolved = createRequire(join(cwd, 'package.json')).resolve(specifier)
  } catch {
    resolved = null
  }
  return resolved !== null ? import(pathToFileURL(resolved).href) : import(specifier)
}

function isClass(v: (...args: never[]) => unknown): boolean {
  if (/^class[\s{]/.test(Function.prototype.toString.call(v))) return true
  // A class compiled to a constructor function: its prototype carries the plugin methods.
  const proto: unknown = v.prototype
  return (
    typeof proto === 'object' && proto !== null && typeof Reflect.get(proto, 'setTopology') === 'function'
  )
}

function article(word: string): string {
  return `${/^[aeiou]/.test(word) ? 'an' : 'a'} ${word}`
}

async function instantiate(exported: unknown): Promise<unknown> {
  if (typeof exported !== 'function') {
    throw new Error(
      `it is ${article(exported === null ? 'null' : typeof exported)}, not a class or a factory function`,
    )
  }
  const fn = exported as (...args: never[]) => unknown
  if (isClass(fn)) return new (fn as unknown as new () => unknown)()
  return await fn()
}

function missingMethods(instance: unknown): string[] {
  if ((typeof instance !== 'object' && typeof instance !== 'function') || instance === null)
    return [...METHODS]
  return METHODS.filter((m) => typeof Reflect.get(instance, m) !== 'function')
}

/** Races `p` against a deadline; `ms` undefined means no deadline. */
async function within<T>(p: Promise<T>, ms: number | undefined, what: string): Promise<T> {
  if (ms === undefined) return p
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not complete within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([p, deadline])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Loads and configures the plugin named by `group.streams.topology.description.plugin.class`.
 *
 * - unset or blank → null (the feature is off);
 * - `memory`, `sqlite`, `postgres` → the built-in plugin;
 * - otherwise a module: an absolute path, a path relative to the working directory, a `file:` URL or a
 *   package specifier, optionally followed by `#ExportName` (the default export otherwise);
 * - the export is a class (constructed with `new`, no arguments) or a factory function (called with
 *   no arguments; it may return a promise);
 * - then `configure(configs)` is awaited with every config, known or not. With
 *   `group.streams.topology.description.plugin.timeout.ms` set, configure() gets that deadline too.
 *
 * If configure() fails, the half-built instance is closed (its own failure ignored).
 * @throws PluginLoadError for every failure, naming the key and the cause.
 */
export async function loadTopologyDescriptionPlugin(
  configs: Readonly<Record<string, string>>,
  options: { readonly cwd?: string } = {},
): Promise<StreamsGroupTopologyDescriptionPlugin | null> {
  const value = configs[PLUGIN_CLASS_KEY]
  if (value === undefined || value.trim() === '') return null
  const timeoutMs = pluginTimeoutMs(configs)
  const fail = (reason: string, cause?: unknown): PluginLoadError =>
    new PluginLoadError(PLUGIN_CLASS_KEY, value, reason, { cause })

  const { specifier, exportName } = splitExport(value.trim())
  if (exportName !== null && exportName === '') throw fail('the export name after # is empty')

  let mod: Record<string, unknown>
  try {
    mod = await importModule(specifier, options.cwd ?? process.cwd())
  } catch (e) {
    throw fail(`cannot load module ${specifier}: ${describe(e)}`, e)
  }

  const name = exportName ?? 'default'
  if (!(name in mod) || mod[name] === undefined) {
    throw fail(
      exportName === null
        ? `module ${specifier} has no default export (name the export with ${specifier}#ExportName)`
        : `module ${specifier} has no export named ${exportName}`,
    )
  }
  const what =
    exportName === null ? `the default export of ${specifier}` : `export ${exportName} of ${specifier}`

  let instance: unknown
  try {
    instance = await instantiate(mod[name])
  } catch (e) {
    throw fail(`cannot create the plugin from ${what}: ${describe(e)}`, e)
  }
  const missing = missingMethods(instance)
  if (missing.length > 0) {
    throw fail(
      `${what} did not produce a StreamsGroupTopologyDescriptionPlugin (missing method${missing.length > 1 ? 's' : ''} ${missing.join(', ')})`,
    )
  }
  const plugin = instance as StreamsGroupTopologyDescriptionPlugin
  try {
    await within(
      Promise.resolve().then(() => plugin.configure(Object.freeze({ ...configs }))),
      timeoutMs,
      'configure()',
    )
  } catch (e) {
    await within(
      Promise.resolve().then(() => plugin.close()),
      timeoutMs ?? 5_000,
      'close()',
    ).catch(() => undefined)
    throw fail(`configure() failed: ${describe(e)}`, e)
  }
  return plugin
}

/**
 * {@link loadTopologyDescriptionPlugin}, then {@link guardPlugin} with the deadline of
 * `group.streams.topology.description.plugin.timeout.ms`: what the coordinator service holds.
 */
export async function loadGuardedTopologyDescriptionPlugin(
  configs: Readonly<Record<string, string>>,
  options: { readonly cwd?: string } = {},
): Promise<GuardedTopologyDescriptionPlugin | null> {
  const plugin = await loadTopologyDescriptionPlugin(configs, options)
  return plugin === null ? null : guardPlugin(plugin, { timeoutMs: pluginTimeoutMs(configs) })
}
