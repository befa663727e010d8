/**
 * Mutations of a valid request frame: structure-aware ones aimed at the map of the frame (values,
 * lengths, varints, tagged fields, record batches, the header, the framing) and raw byte mutations.
 * Every mutation is drawn from the frame's own generator, so a frame is rebuilt exactly from the
 * campaign seed and its index.
 */
import { crc32c } from '@node-rs/crc32'
import { BATCH_FIELDS, type FrameMap, INTERESTING, type Span } from './model.js'
import type { Rng } from './rng.js'

export interface Mutated {
  /** The bytes to send, in one write per chunk. */
  readonly chunks: Buffer[]
  /** What was done, e.g. "length len32@41=-1". */
  readonly mutation: string
  /** The mutation family, for grouping findings. */
  readonly family: string
}

function uvarintBytes(value: number): Buffer {
  const out: number[] = []
  let v = value
  while (v >= 0x80) {
    out.push((v % 128) | 0x80)
    v = Math.floor(v / 128)
  }
  out.push(v)
  return Buffer.from(out)
}

function readUVarint(b: Buffer, at: number): number {
  let value = 0
  let shift = 0
  for (let i = at; i < b.length; i++) {
    value += (b[i]! & 0x7f) * 2 ** shift
    if ((b[i]! & 0x80) === 0) break
    shift += 7
  }
  return value
}

/** `frame` with `size` bytes at `at` replaced by `bytes`, and its size prefix set to the new length. */
function replace(frame: Buffer, at: number, size: number, bytes: Buffer): Buffer {
  const out = Buffer.concat([frame.subarray(0, at), bytes, frame.subarray(at + size)])
  out.writeInt32BE(out.length - 4, 0)
  return out
}

function intBytes(width: number, value: number | bigint): Buffer {
  const b = Buffer.alloc(width)
  if (width === 1) b.writeInt8(Number(BigInt.asIntN(8, BigInt(value))), 0)
  else if (width === 2) b.writeUInt16BE(Number(BigInt.asUintN(16, BigInt(value))), 0)
  else if (width === 4) b.writeInt32BE(Number(BigInt.asIntN(32, BigInt(value))), 0)
  else if (width === 8) b.writeBigInt64BE(BigInt.asIntN(64, BigInt(value)), 0)
  return b
}

function spansOf(map: FrameMap, kinds: readonly Span['kind'][]): Span[] {
  return map.spans.filter((s) => kinds.includes(s.kind))
}

function mutateValue(rng: Rng, frame: Buffer, map: FrameMap): [Buffer, string] | null {
  const ints = spansOf(map, ['int']).filter((s) => s.at >= map.bodyAt)
  if (ints.length === 0) return null
  const s = rng.pick(ints)
  if (s.size === 16) return [replace(frame, s.at, 16, rng.bytes(16)), `uuid@${s.at}`]
  const key = s.size === 1 ? 'int8' : s.size === 2 ? 'int16' : s.size === 4 ? 'int32' : 'int64'
  const value = rng.chance(0.8) ? rng.pick(INTERESTING[key]!) : BigInt(rng.u32()) - 2n ** 31n
  return [replace(frame, s.at, s.size, intBytes(s.size, value)), `int${s.size * 8}@${s.at}=${value}`]
}

function mutateLength(rng: Rng, frame: Buffer, map: FrameMap): [Buffer, string] | null {
  const lens = spansOf(map, ['len16', 'len32', 'uvlen'])
  if (lens.length === 0) return null
  const s = rng.pick(lens)
  if (s.kind === 'uvlen') {
    const stored = readUVarint(frame, s.at)
    const value = rng.pick([
      0,
      1,
      stored + 1,
      Math.max(0, stored - 1),
      stored * 2 + 7,
      2 ** 31,
      2 ** 32 - 1,
      0x7fffffff,
    ])
    return [replace(frame, s.at, s.size, uvarintBytes(value)), `uvlen@${s.at}=${value}`]
  }
  const current = s.size === 2 ? frame.readInt16BE(s.at) : frame.readInt32BE(s.at)
  const max = s.size === 2 ? 0x7fff : 0x7fffffff
  const min = s.size === 2 ? -0x8000 : -0x80000000
  const value = rng.pick([-1, -2, 0, current + 1, current - 1, current * 2 + 7, max, min, 1 << 20])
  const clamped = Math.max(min, Math.min(max, value))
  return [replace(frame, s.at, s.size, intBytes(s.size, clamped)), `${s.kind}@${s.at}=${clamped}`]
}

function mutateVarint(rng: Rng, frame: Buffer, map: FrameMap): [Buffer, string] | null {
  const vs = spansOf(map, ['uvlen', 'tagcount', 'tag', 'tagsize'])
  if (vs.length === 0) return null
  const s = rng.pick(vs)
  const value = readUVarint(frame, s.at)
  switch (rng.int(4)) {
    case 0: {
      // the same value, not minimally encoded
      const min = uvarintBytes(value)
      const pad = rng.range(1, 4)
      const b = Buffer.concat([min, Buffer.alloc(pad)])
      for (let i = 0; i < min.length + pad - 1; i++) b[i] = b[i]! | 0x80
      return [replace(frame, s.at, s.size, b), `${s.kind}@${s.at} overlong(${pad})`]
    }
    case 1:
      return [
        replace(frame, s.at, s.size, Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f])),
        `${s.kind}@${s.at}=2^32-1`,
      ]
    case 2:
      return [
        replace(
          frame,
          s.at,
          s.size,
          Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
        ),
        `${s.kind}@${s.at} 10 bytes`,
      ]
    default: {
      // continuation bits to the end of the frame
      const out = Buffer.concat([frame.subarray(0, s.at), Buffer.alloc(rng.range(1, 6), 0x80)])
      out.writeInt32BE(out.length - 4, 0)
      return [out, `${s.kind}@${s.at} unterminated`]
    }
  }
}

function mutateTagged(rng: Rng, frame: Buffer, map: FrameMap): [Buffer, string] | null {
  if (map.sections.length === 0) return null
  const sec = rng.pick(map.sections)
  const count = readUVarint(frame, sec.at)
  const countSize = uvarintBytes(count).length
  const withCount = (n: number, body: Buffer): Buffer =>
    replace(frame, sec.at, sec.end - sec.at, Buffer.concat([uvarintBytes(n), body]))
  const fields = sec.fields.map((f) => frame.subarray(f.at, f.end))
  const rest = frame.subarray(sec.at + countSize, sec.end)
  switch (rng.int(6)) {
    case 0: {
      const tag = rng.pick([rng.int(10), rng.int(1000), 0x7fffffff, 2 ** 32 - 1])
      const data = rng.bytes(rng.int(12))
      const field = Buffer.concat([uvarintBytes(tag), uvarintBytes(data.length), data])
      const at = rng.int(fields.length + 1)
      return [
        withCount(count + 1, Buffer.concat([...fields.slice(0, at), field, ...fields.slice(at)])),
        `tagged@${sec.at} +tag ${tag}`,
      ]
    }
    case 1: {
      if (fields.length === 0) return null
      const i = rng.int(fields.length)
      return [
        withCount(count + 1, Buffer.concat([...fields.slice(0, i + 1), fields[i]!, ...fields.slice(i + 1)])),
        `tagged@${sec.at} duplicate`,
      ]
    }
    case 2: {
      if (fields.length < 2) return null
      return [withCount(count, Buffer.concat([...fields].reverse())), `tagged@${sec.at} reversed`]
    }
    case 3: {
      const n = rng.pick([count + 1, count + 2, 0x7fffffff, 2 ** 32 - 1])
      return [withCount(n, rest), `tagged@${sec.at} count=${n}`]
    }
    case 4: {
      if (fields.length === 0) return null
      const f = sec.fields[rng.int(fields.length)]!
      const tagSize = uvarintBytes(readUVarint(frame, f.at)).length
      const sizeAt = f.at + tagSize
      const size = readUVarint(frame, sizeAt)
      const value = rng.pick([0, size + 1, Math.max(0, size - 1), 0x7fffffff, 2 ** 32 - 1])
      return [
        replace(frame, sizeAt, uvarintBytes(size).length, uvarintBytes(value)),
        `tagged@${sec.at} size=${value}`,
      ]
    }
    default:
      return [withCount(0, Buffer.alloc(0)), `tagged@${sec.at} dropped`]
  }
}

function mutateRecords(rng: Rng, frame: Buffer, map: FrameMap): [Buffer, string] | null {
  const batches = spansOf(map, ['records']).filter((s) => s.size >= 61)
  if (batches.length === 0) return null
  const s = rng.pick(batches)
  const out = Buffer.from(frame)
  const f = rng.pick(BATCH_FIELDS)
  const key = f.width === 1 ? 'int8' : f.width === 2 ? 'int16' : f.width === 4 ? 'int32' : 'int64'
  const value = rng.pick(INTERESTING[key]!)
  intBytes(f.width, value).copy(out, s.at + f.at)
  const fixCrc = f.name !== 'crc' && rng.chance(0.7)
  if (fixCrc) out.writeUInt32BE(crc32c(out.subarray(s.at + 21, s.at + s.size)), s.at + 17)
  return [out, `records@${s.at} ${f.name}=${value}${fixCrc ? ' (crc fixed)' : ''}`]
}

function mutateHeader(rng: Rng, frame: Buffer, maxVersionOf: (apiKey: number) => number): [Buffer, string] {
  const out = Buffer.from(frame)
  switch (rng.int(3)) {
    case 0: {
      const key = rng.pick([-1, 0, 1, 4, 21, 50, 94, 1000, 0x7fff, rng.int(100)])
      out.writeInt16BE(key, 4)
      return [out, `apiKey=${key}`]
    }
    case 1: {
      const v = rng.pick([-1, maxVersionOf(out.readInt16BE(4)) + 1, 0x7fff, -0x8000, rng.int(20)])
      out.writeInt16BE(v, 6)
      return [out, `apiVersion=${v}`]
    }
    default: {
      const c = rng.u32() | 0
      out.writeInt32BE(c, 8)
      return [out, `correlationId=${c}`]
    }
  }
}

function mutateRaw(rng: Rng, frame: Buffer, donorOf: () => Buffer): [Buffer, string] {
  const body = Buffer.from(frame.subarray(4))
  let b = body
  let what: string
  const n = Math.max(1, b.length)
  switch (rng.int(6)) {
    case 0: {
      const flips = rng.range(1, 8)
      for (let i = 0; i < flips; i++) b[rng.int(n)] ^= 1 << rng.int(8)
      what = `${flips} bit flips`
      break
    }
    case 1: {
      const at = rng.int(n)
      b[at] = rng.pick([0, 0xff, 0x7f, 0x80, rng.int(256)])
      what = `byte@${at + 4}=${b[at]}`
      break
    }
    case 2: {
      const at = rng.int(b.length + 1)
      const ins = rng.bytes(rng.range(1, 16))
      b = Buffer.concat([b.subarray(0, at), ins, b.subarray(at)])
      what = `insert ${ins.length}@${at + 4}`
      break
    }
    case 3: {
      const at = rng.int(n)
      const len = rng.range(1, Math.max(1, Math.min(32, b.length - at)))
      b = Buffer.concat([b.subarray(0, at), b.subarray(at + len)])
      what = `delete ${len}@${at + 4}`
      break
    }
    case 4: {
      const at = rng.int(b.length + 1)
      const donor = donorOf()
      const from = rng.int(Math.max(1, donor.length - 4)) + 4
      const part = donor.subarray(from, from + rng.range(1, 64))
      b = Buffer.concat([b.subarray(0, at), part, b.subarray(at + rng.int(16))])
      what = `splice ${part.length}@${at + 4}`
      break
    }
    default: {
      const at = rng.int(n)
      b = Buffer.concat([b.subarray(0, at), b.subarray(0, at), b.subarray(at)])
      what = `repeat ${at}`
      break
    }
  }
  const out = Buffer.concat([Buffer.alloc(4), b])
  if (rng.chance(0.9)) out.writeInt32BE(b.length, 0)
  else out.writeInt32BE(frame.readInt32BE(0), 0)
  return [out, what]
}

function framing(rng: Rng, frame: Buffer, donor: () => Buffer): Mutated {
  switch (rng.int(5)) {
    case 0: {
      const out = Buffer.from(frame)
      const size = rng.pick([
        0,
        -1,
        -2,
        1,
        0x7fffffff,
        104857601,
        frame.length - 4 + rng.range(1, 8),
        frame.length - 4 - rng.range(1, 8),
      ])
      out.writeInt32BE(size, 0)
      return { chunks: [out], mutation: `size=${size}`, family: 'framing' }
    }
    case 1: {
      const cuts = new Set<number>()
      const k = rng.range(1, 5)
      for (let i = 0; i < k; i++) cuts.add(rng.range(1, frame.length - 1))
      const at = [0, ...[...cuts].sort((a, b) => a - b), frame.length]
      const chunks = at
        .slice(1)
        .map((end, i) => frame.subarray(at[i]!, end))
        .filter((c) => c.length > 0)
      return { chunks, mutation: `split ${chunks.map((c) => c.length).join('+')}`, family: 'framing' }
    }
    case 2:
      return {
        chunks: [Buffer.concat([frame, donor()])],
        mutation: 'two frames in one write',
        family: 'framing',
      }
    case 3: {
      const cut = rng.range(0, frame.length - 1)
      return {
        chunks: [frame.subarray(0, cut)],
        mutation: `truncated at ${cut} (size prefix kept)`,
        family: 'framing',
      }
    }
    default: {
      const extra = rng.bytes(rng.range(1, 16))
      const out = Buffer.concat([frame, extra])
      out.writeInt32BE(out.length - 4, 0)
      return { chunks: [out], mutation: `${extra.length} trailing bytes`, family: 'framing' }
    }
  }
}

/**
 * One mutation (or none) of `frame`, drawn from `rng`; `donor` gives another valid frame (drawn from
 * `rng` too, only by the mutations that use one).
 */
export function mutate(
  rng: Rng,
  frame: Buffer,
  map: FrameMap | null,
  donor: () => Buffer,
  maxVersionOf: (apiKey: number) => number,
): Mutated {
  const r = rng.int(100)
  if (r < 8) return { chunks: [frame], mutation: 'none', family: 'valid' }
  if (r < 18) return framing(rng, frame, donor)
  if (r < 26) {
    const [b, m] = mutateHeader(rng, frame, maxVersionOf)
    return { chunks: [b], mutation: m, family: 'header' }
  }
  if (map !== null && r < 84) {
    const ops: [string, () => [Buffer, string] | null][] = [
      ['value', () => mutateValue(rng, frame, map)],
      ['length', () => mutateLength(rng, frame, map)],
      ['varint', () => mutateVarint(rng, frame, map)],
      ['tagged', () => mutateTagged(rng, frame, map)],
      ['records', () => mutateRecords(rng, frame, map)],
    ]
    const start = rng.int(ops.length)
    for (let i = 0; i < ops.length; i++) {
      const [family, op] = ops[(start + i) % ops.length]!
      const got = op()
      if (got !== null) return { chunks: [got[0]], mutation: `${family} ${got[1]}`, family }
    }
  }
  const [b, m] = mutateRaw(rng, frame, donor)
  return { chunks: [b], mutation: `raw ${m}`, family: 'raw' }
}
