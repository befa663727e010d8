/**
 * Config resources in the admin client, as Kafka's Admin handles them: `describeConfigs`
 * (DescribeConfigs) and `incrementalAlterConfigs` (IncrementalAlterConfigs). A BROKER resource with
 * a broker id and a BROKER_LOGGER resource go to that broker; every other resource goes, in one
 * request, to any broker. Each resource's promise settles on its own: with the broker's error for
 * it (Kafka's exception for the code, the broker's message when it sent one), or its result.
 */
import type { DescribeConfigsResponseDescribeConfigsResult } from '../../protocol/generated/messages/DescribeConfigsResponse.js'
import type { BrokerNode, NetworkClient } from '../network/client.js'
import { IllegalStateError, KafkaError, kafkaErrorFromCode } from '../network/errors.js'
import type { RequestOf, ResponseOf } from '../network/framing.js'

/** Kafka's ConfigResource.Type names, with their wire ids. */
export const ConfigResourceTypes = {
  TOPIC: 2,
  BROKER: 4,
  BROKER_LOGGER: 8,
  CLIENT_METRICS: 16,
  GROUP: 32,
} as const
export type ConfigResourceType = keyof typeof ConfigResourceTypes

/** A config resource: `{ type: 'GROUP', name: 'my-app' }`; the type may also be given in lower case. */
export interface ConfigResource {
  readonly type: ConfigResourceType | Lowercase<ConfigResourceType>
  readonly name: string
}

/** Where a value comes from (Kafka's ConfigEntry.ConfigSource). */
export type ConfigSource =
  | 'UNKNOWN'
  | 'DYNAMIC_TOPIC_CONFIG'
  | 'DYNAMIC_BROKER_CONFIG'
  | 'DYNAMIC_DEFAULT_BROKER_CONFIG'
  | 'STATIC_BROKER_CONFIG'
  | 'DEFAULT_CONFIG'
  | 'DYNAMIC_BROKER_LOGGER_CONFIG'
  | 'DYNAMIC_CLIENT_METRICS_CONFIG'
  | 'DYNAMIC_GROUP_CONFIG'

/** DescribeConfigs source ids, in id order. */
const SOURCES: readonly ConfigSource[] = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'DYNAMIC_CLIENT_METRICS_CONFIG',
  'DYNAMIC_GROUP_CONFIG',
]

/** A value's type (Kafka's ConfigEntry.ConfigType). */
export type ConfigType =
  | 'UNKNOWN'
  | 'BOOLEAN'
  | 'STRING'
  | 'INT'
  | 'SHORT'
  | 'LONG'
  | 'DOUBLE'
  | 'LIST'
  | 'CLASS'
  | 'PASSWORD'

const TYPES: readonly ConfigType[] = [
  'UNKNOWN',
  'BOOLEAN',
  'STRING',
  'INT',
  'SHORT',
  'LONG',
  'DOUBLE',
  'LIST',
  'CLASS',
  'PASSWORD',
]

export interface ConfigSynonym {
  readonly name: string
  readonly value: string | null
  readonly source: ConfigSource
}

export interface ConfigEntry {
  readonly name: string
  /** null when unset or sensitive */
  readonly value: string | null
  readonly source: ConfigSource
  readonly isSensitive: boolean
  readonly isReadOnly: boolean
  /** empty unless includeSynonyms was set */
  readonly synonyms: readonly ConfigSynonym[]
  /** UNKNOWN from brokers older than DescribeConfigs v3 */
  readonly type: ConfigType
  /** null unless includeDocumentation was set */
  readonly documentation: string | null
}

/** The described configuration of one resource. */
export class Config {
  readonly entries: readonly ConfigEntry[]
  readonly #byName: ReadonlyMap<string, ConfigEntry>

  constructor(entries: readonly ConfigEntry[]) {
    this.entries = entries
    this.#byName = new Map(entries.map((e) => [e.name, e]))
  }

  /** The entry of one key, if the broker reported it. */
  get(name: string): ConfigEntry | undefined {
    return this.#byName.get(name)
  }
}

/** Kafka's AlterConfigOp.OpType. */
export type AlterConfigOpType = 'SET' | 'DELETE' | 'APPEND' | 'SUBTRACT'
const OP_IDS: Readonly<Record<AlterConfigOpType, number>> = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 }

/** One change: set a key, delete it (back to the default), or append to / subtract from a list. */
export interface AlterConfigOp {
  readonly name: string
  /** The value; for DELETE it is ignored (Kafka sends what is given, usually null or ""). */
  readonly value: string | null
  readonly opType: AlterConfigOpType
}

export interface DescribeConfigsOptions {
  readonly timeoutMs?: number
  readonly includeSynonyms?: boolean
  readonly includeDocumentation?: boolean
}

export interface AlterConfigsOptions {
  readonly timeoutMs?: number
  /** Only check the changes (ValidateOnly). */
  readonly validateOnly?: boolean
}

/** Per-resource results: each promise settles on its own; `all()` fails on the first failure. */
export class ConfigResourceResult<T> {
  readonly #entries: readonly { readonly resource: ConfigResource; readonly promise: Promise<T> }[]

  constructor(entries: readonly { readonly resource: ConfigResource; readonly promise: Promise<T> }[]) {
    for (const e of entries) e.promise.catch(() => undefined)
    this.#entries = entries
  }

  /** The resources, normalized (upper-case types), in request order. */
  get resources(): ConfigResource[] {
    return this.#entries.map((e) => e.resource)
  }

  /** The result of one resource, matched by type and name. */
  get(resource: ConfigResource): Promise<T> {
    const type = normalizeType(resource.type)
    const e = this.#entries.find((x) => x.resource.type === type && x.resource.name === resource.name)
    if (e === undefined) return Promise.reject(new KafkaError(`No result for ${type} ${resource.name}`))
    return e.promise
  }

  /** Every value by resource (the normalized resource objects), in request order. */
  async all(): Promise<Map<ConfigResource, T>> {
    const out = new Map<ConfigResource, T>()
    for (const e of this.#entries) out.set(e.resource, await e.promise)
    return out
  }
}

function normalizeType(type: string): ConfigResourceType {
  const upper = type.toUpperCase()
  if (!Object.hasOwn(ConfigResourceTypes, upper)) throw new KafkaError(`Unknown config resource type ${type}`)
  return upper as ConfigResourceType
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => undefined)
  return { promise, resolve, reject }
}

interface Pending<T> {
  readonly resource: ConfigResource & { readonly type: ConfigResourceType }
  readonly d: ReturnType<typeof deferred<T>>
}

/** The broker a resource must go to (Kafka's nodeFor), or null for any broker. */
function brokerFor(resource: { type: ConfigResourceType; name: string }): number | null {
  if ((resource.type === 'BROKER' && resource.name !== '') || resource.type === 'BROKER_LOGGER') {
    if (!/^[+-]?\d+$/.test(resource.name)) throw new KafkaError(`For input string: "${resource.name}"`)
    return Number(resource.name)
  }
  return null
}

/** Groups resources by destination; a resource whose broker id does not parse fails at once. */
function route<T>(resources: readonly ConfigResource[]): {
  readonly entries: Pending<T>[]
  readonly byNode: Map<number | null, Pending<T>[]>
} {
  const entries: Pending<T>[] = []
  const byNode = new Map<number | null, Pending<T>[]>()
  for (const r of resources) {
    const d = deferred<T>()
    let resource: Pending<T>['resource']
    try {
      resource = { type: normalizeType(r.type), name: r.name }
    } catch (e) {
      entries.push({ resource: { type: 'GROUP', name: r.name }, d })
      d.reject(e)
      continue
    }
    const p: Pending<T> = { resource, d }
    entries.push(p)
    let node: number | null
    try {
      node = brokerFor(resource)
    } catch (e) {
      d.reject(e)
      continue
    }
    const list = byNode.get(node) ?? []
    list.push(p)
    byNode.set(node, list)
  }
  return { entries, byNode }
}

/** Sends to broker `nodeId` (looked up in fresh metadata) or to any broker. */
async function sendTo<K extends 32 | 44>(
  client: NetworkClient,
  nodeId: number | null,
  apiKey: K,
  request: RequestOf<K>,
): Promise<ResponseOf<K>> {
  if (nodeId === null) return client.sendAny(apiKey, request)
  let node: BrokerNode | undefined = client.brokers.find((b) => b.nodeId === nodeId)
  if (node === undefined) {
    await client.metadata([])
    node = client.brokers.find((b) => b.nodeId === nodeId)
  }
  if (node === undefined) {
    throw new KafkaError(`Node ${nodeId} is not in the metadata`, { retriable: true, errorName: 'UNKNOWN' })
  }
  return client.sendTo(node, apiKey, request)
}

function configFromWire(r: DescribeConfigsResponseDescribeConfigsResult): Config {
  return new Config(
    r.configs.map((c) => ({
      name: c.name,
      value: c.value,
      source: SOURCES[c.configSource] ?? 'UNKNOWN',
      isSensitive: c.isSensitive,
      isReadOnly: c.readOnly,
      synonyms: c.synonyms.map((s) => ({
        name: s.name,
        value: s.value,
        source: SOURCES[s.source] ?? 'UNKNOWN',
      })),
      type: TYPES[c.configType] ?? 'UNKNOWN',
      documentation: c.documentation === '' ? null : c.documentation,
    })),
  )
}

export function describeConfigs(
  client: NetworkClient,
  resources: readonly ConfigResource[],
  opts: DescribeConfigsOptions,
  deadline: number,
): ConfigResourceResult<Config> {
  const { entries, byNode } = route<Config>(resources)
  for (const [nodeId, batch] of byNode) {
    void client
      .withRetries(
        () =>
          sendTo(client, nodeId, 32, {
            resources: batch.map((p) => ({
              resourceType: ConfigResourceTypes[p.resource.type],
              resourceName: p.resource.name,
              configurationKeys: null,
            })),
            includeSynonyms: opts.includeSynonyms ?? false,
            includeDocumentation: opts.includeDocumentation ?? false,
          }),
        { deadline, operation: 'describeConfigs' },
      )
      .then(
        (res) => {
          for (const p of batch) {
            const r = res.results.find(
              (x) =>
                x.resourceType === ConfigResourceTypes[p.resource.type] && x.resourceName === p.resource.name,
            )
            if (r === undefined) {
              p.d.reject(
                new IllegalStateError(
                  `The node response did not contain a result for config resource ${p.resource.type} ${p.resource.name}`,
                ),
              )
            } else if (r.errorCode !== 0) p.d.reject(kafkaErrorFromCode(r.errorCode, r.errorMessage))
            else p.d.resolve(configFromWire(r))
          }
        },
        (e: unknown) => {
          for (const p of batch) p.d.reject(e)
        },
      )
  }
  return new ConfigResourceResult(entries.map((p) => ({ resource: p.resource, promise: p.d.promise })))
}

export function incrementalAlterConfigs(
  client: NetworkClient,
  changes: Iterable<readonly [ConfigResource, readonly AlterConfigOp[]]>,
  opts: AlterConfigsOptions,
  deadline: number,
): ConfigResourceResult<void> {
  const list = [...changes]
  const { entries, byNode } = route<void>(list.map(([r]) => r))
  const opsOf = new Map(entries.map((p, i) => [p, list[i][1]]))
  for (const [nodeId, batch] of byNode) {
    void client
      .withRetries(
        () =>
          sendTo(client, nodeId, 44, {
            resources: batch.map((p) => ({
              resourceType: ConfigResourceTypes[p.resource.type],
              resourceName: p.resource.name,
              configs: (opsOf.get(p) ?? []).map((op) => ({
                name: op.name,
                configOperation: OP_IDS[op.opType],
                value: op.value,
              })),
            })),
            validateOnly: opts.validateOnly ?? false,
          }),
        { deadline, operation: 'incrementalAlterConfigs' },
      )
      .then(
        (res) => {
          for (const p of batch) {
            const r = res.responses.find(
              (x) =>
                x.resourceType === ConfigResourceTypes[p.resource.type] && x.resourceName === p.resource.name,
            )
            if (r === undefined) {
              p.d.reject(
                new IllegalStateError(
                  `The response did not contain a result for config resource ${p.resource.type} ${p.resource.name}`,
                ),
              )
            } else if (r.errorCode !== 0) p.d.reject(kafkaErrorFromCode(r.errorCode, r.errorMessage))
            else p.d.resolve()
          }
        },
        (e: unknown) => {
          for (const p of batch) p.d.reject(e)
        },
      )
  }
  return new ConfigResourceResult(entries.map((p) => ({ resource: p.resource, promise: p.d.promise })))
}
