/**
 * Frame `index` of the campaign with `seed`: a valid request of a served API version, encoded with
 * the generated codec, then mutated. Everything is drawn from the frame's own generator, or from
 * the seed frames of the campaign (each built from a generator of its own), so
 * `buildFrame(plan, seed, index)` always gives the same bytes, whatever was built before it.
 *
 * Building and mapping a random request costs more than everything else the fuzzer does for a
 * frame, so most frames start from one of {@link SEED_SLOTS} seed frames of their API version,
 * built on first use and kept; one frame in {@link FRESH_ONE_IN} starts from a request built for it
 * alone, so the valid requests a campaign draws from are not a fixed set.
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
import { frameRng, Rng } from './rng.js'

/** Seed frames kept per API version. */
export const SEED_SLOTS = 64
/** One frame in this many starts from a request of its own instead of a seed frame. */
export const FRESH_ONE_IN = 8

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
  /** the APIs a donor frame (spliced into another, or sent after it) is drawn from */
  readonly donorApis: readonly ServedApi[]
  readonly maxVersionOf: (apiKey: number) => number
  /** frames whose map could not be read back (a fuzzer bug, reported at the end) */
  mapErrors: number
  /** seed frames by campaign seed, API key, version and slot */
  readonly seeds: Map<string, SeedFrame>
}

/** A valid request frame and its map (null: the map could not be read back). */
interface SeedFrame {
  readonly frame: Buffer
  readonly map: FrameMap | null
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
  return {
    apis,
    donorApis: apis.filter((a) => !MAY_WAIT_APIS.has(a.apiKey)),
    maxVersionOf: (k) => max.get(k) ?? 0,
    mapErrors: 0,
    seeds: new Map(),
  }
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

function mapped(plan: FramePlan, frame: Buffer, api: ServedApi, version: number): SeedFrame {
  try {
    return { frame, map: mapFrame(frame, api.schema, version) }
  } catch (e) {
    if (!(e instanceof FrameMapError)) throw e
    plan.mapErrors++
    return { frame, map: null }
  }
}

/** Seed frame `slot` of an API version in the campaign with `seed`, built from its own generator. */
function seedFrame(plan: FramePlan, seed: number, api: ServedApi, version: number, slot: number): SeedFrame {
  const key = `${seed}:${api.apiKey}:${version}:${slot}`
  let got = plan.seeds.get(key)
  if (got === undefined) {
    const rng = new Rng(
      (Math.imul(seed ^ 0x2545f491, 0x9e3779b1) +
        Math.imul(api.apiKey + 1, 0x85ebca6b) +
        Math.imul(version + 1, 0xc2b2ae35) +
        Math.imul(slot + 1, 0x27d4eb2f)) >>>
        0,
    )
    got = mapped(plan, validFrame(rng, api, version, 0), api, version)
    plan.seeds.set(key, got)
  }
  return got
}

/** `frame` with its correlation id set (a copy: seed frames are shared). */
function withCorrelationId(frame: Buffer, correlationId: number): Buffer {
  const out = Buffer.from(frame)
  out.writeInt32BE(correlationId, 8)
  return out
}

export function buildFrame(plan: FramePlan, seed: number, index: number): Frame {
  const rng = frameRng(seed, index)
  const api = rng.pick(plan.apis)
  const version = rng.range(api.minVersion, api.maxVersion)
  const correlationId = index & 0x7fffffff
  let original: Buffer
  let map: FrameMap | null
  if (rng.int(FRESH_ONE_IN) === 0) {
    ;({ frame: original, map } = mapped(plan, validFrame(rng, api, version, correlationId), api, version))
  } else {
    const s = seedFrame(plan, seed, api, version, rng.int(SEED_SLOTS))
    original = withCorrelationId(s.frame, correlationId)
    map = s.map
  }
  // The donor (another valid frame, for splices and two frames in one write) is a seed frame,
  // drawn only by the mutations that use it.
  const donor = (): Buffer => {
    const d = rng.pick(plan.donorApis)
    const v = rng.range(d.minVersion, d.maxVersion)
    return withCorrelationId(seedFrame(plan, seed, d, v, rng.int(SEED_SLOTS)).frame, (index + 1) & 0x7fffffff)
  }
  const mutated = mutate(rng, original, map, donor, plan.maxVersionOf)
  return { index, api, version, correlationId, original, mutated }
}
