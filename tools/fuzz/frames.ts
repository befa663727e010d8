/**
 * Frame `index` of the campaign with `seed`: a random valid request of a served API version,
 * encoded with the generated codec, then mutated. Everything is drawn from the frame's own
 * generator, so `buildFrame(plan, seed, index)` always gives the same bytes.
 */
import { fileURLToPath } from 'node:url'
import { allApiDefinitions } from '../../src/protocol/generated/registry.js'
import type { SchemaDef } from '../codegen/schema.js'
import {
  encodeFrame,
  type FrameMap,
  FrameMapError,
  mapFrame,
  randomRequest,
  requestSchemas,
} from './model.js'
import { type Mutated, mutate } from './mutate.js'
import { frameRng, type Rng } from './rng.js'

/** APIs whose answer Kafka may hold back (a rebalance in progress): never counted as a hang. */
export const MAY_WAIT_APIS: ReadonlySet<number> = new Set([11, 14])

export interface ServedApi {
  readonly apiKey: number
  readonly name: string
  readonly minVersion: number
  readonly maxVersion: number
  readonly schema: SchemaDef
}

export interface FramePlan {
  readonly apis: readonly ServedApi[]
  readonly maxVersionOf: (apiKey: number) => number
  /** frames whose map could not be read back (a fuzzer bug, reported at the end) */
  mapErrors: number
}

/** An API and version range as ApiVersions advertises it. */
export interface AdvertisedApi {
  readonly apiKey: number
  readonly minVersion: number
  readonly maxVersion: number
}

/**
 * The APIs to fuzz: those the server's ApiVersions answer advertises, in the advertised version
 * ranges (without it: every API of the generated registry). Throws when an advertised API has no
 * request schema, so that no served API goes unfuzzed.
 */
export function framePlan(advertised?: readonly AdvertisedApi[]): FramePlan {
  const root = fileURLToPath(new URL('../..', import.meta.url))
  const schemas = requestSchemas(root)
  const names = new Map(allApiDefinitions().map((d) => [d.apiKey, d.name]))
  const served = advertised ?? allApiDefinitions()
  const apis: ServedApi[] = []
  for (const d of [...served].sort((a, b) => a.apiKey - b.apiKey)) {
    const schema = schemas.get(d.apiKey)
    if (!schema) {
      if (advertised !== undefined)
        throw new Error(`the server advertises API ${d.apiKey}, which has no request schema`)
      continue
    }
    apis.push({
      apiKey: d.apiKey,
      name: names.get(d.apiKey) ?? `api-${d.apiKey}`,
      minVersion: d.minVersion,
      maxVersion: d.maxVersion,
      schema,
    })
  }
  const max = new Map(apis.map((a) => [a.apiKey, a.maxVersion]))
  return { apis, maxVersionOf: (k) => max.get(k) ?? 0, mapErrors: 0 }
}

export interface Frame {
  readonly index: number
  readonly api: ServedApi
  readonly version: number
  readonly correlationId: number
  readonly original: Buffer
  readonly mutated: Mutated
}

function validFrame(rng: Rng, api: ServedApi, version: number, correlationId: number): Buffer {
  const clientId = rng.pick(['kfuzz', 'kfuzz', null, '', 'x'.repeat(300)])
  for (let attempt = 0; ; attempt++) {
    try {
      return encodeFrame(
        api.apiKey,
        version,
        correlationId,
        clientId,
        randomRequest(rng, api.schema, version),
      )
    } catch (e) {
      // the codec refuses a value it cannot encode (e.g. an over-long string): draw again
      if (attempt >= 20) throw e
    }
  }
}

export function buildFrame(plan: FramePlan, seed: number, index: number): Frame {
  const rng = frameRng(seed, index)
  const api = rng.pick(plan.apis)
  const version = rng.range(api.minVersion, api.maxVersion)
  const correlationId = index & 0x7fffffff
  const original = validFrame(rng, api, version, correlationId)
  let map: FrameMap | null = null
  try {
    map = mapFrame(original, api.schema, version)
  } catch (e) {
    if (!(e instanceof FrameMapError)) throw e
    plan.mapErrors++
  }
  const donorApis = plan.apis.filter((a) => !MAY_WAIT_APIS.has(a.apiKey))
  const donorApi = rng.pick(donorApis)
  const donor = validFrame(
    rng,
    donorApi,
    rng.range(donorApi.minVersion, donorApi.maxVersion),
    (index + 1) & 0x7fffffff,
  )
  const mutated = mutate(rng, original, map, donor, plan.maxVersionOf)
  return { index, api, version, correlationId, original, mutated }
}
