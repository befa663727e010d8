/**
 * The compression codecs of record batches and CRC-32C, the two native pieces the sans-io batch
 * codec (batch.ts) leaves out. Formats are those Kafka's clients write:
 *
 * | codec  | written                                                  | read                         |
 * |--------|----------------------------------------------------------|------------------------------|
 * | gzip   | RFC 1952 stream (node:zlib)                               | same                         |
 * | snappy | xerial framing (`\x82SNAPPY\x00`, version 1, compatible 1, then int32-length-prefixed raw blocks of at most 32 KiB), as Java's `SnappyOutputStream` | xerial framing, or one raw snappy block (what some non-Java clients write) |
 * | lz4    | LZ4 frame format, 64 KiB independent blocks (lz4-napi)    | LZ4 frame format             |
 * | zstd   | zstd frame (zstd-napi)                                    | zstd frame                   |
 *
 * Decompression is bounded: a stream that inflates past `maxBytes` fails (a compressed batch cannot
 * be turned into unbounded memory).
 */
import { crc32c as nativeCrc32c } from '@node-rs/crc32'
import { gunzipSync, gzipSync } from 'node:zlib'
import { compressFrameSync, decompressFrameSync } from 'lz4-napi'
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy'
import { compress as zstdCompress, decompress as zstdDecompress } from 'zstd-napi'
import { CompressionCodec, type Crc32c, concatBytes } from './batch.js'

/** CRC-32C of the bytes, unsigned. */
export const crc32c: Crc32c = (bytes) => nativeCrc32c(bytes) >>> 0

const XERIAL_MAGIC = Uint8Array.of(0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00)
const XERIAL_HEADER = 16
const XERIAL_BLOCK = 32 * 1024

/** A compressed stream that cannot be decoded. INVALID_RECORD when `truncated`, else UNKNOWN_SERVER_ERROR. */
export class DecompressionError extends Error {
  override name = 'DecompressionError'
  readonly truncated: boolean
  constructor(message: string, truncated: boolean, cause?: unknown) {
    super(message, { cause })
    this.truncated = truncated
  }
}

export interface CompressionLevels {
  /** 1..9, or -1 for zlib's default (6). Kafka: compression.gzip.level */
  readonly gzip?: number
  /** 1..22 (negative: fast modes). Kafka: compression.zstd.level, default 3 */
  readonly zstd?: number
}

function isXerial(data: Uint8Array): boolean {
  if (data.byteLength < XERIAL_HEADER) return false
  for (let i = 0; i < XERIAL_MAGIC.length; i++) if (data[i] !== XERIAL_MAGIC[i]) return false
  return true
}

function snappyDecode(data: Uint8Array, maxBytes: number): Uint8Array {
  if (!isXerial(data)) return snappyUncompress(data) as Buffer
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const parts: Uint8Array[] = []
  let total = 0
  let pos = XERIAL_HEADER
  while (pos < data.byteLength) {
    if (pos + 4 > data.byteLength) throw new DecompressionError('truncated snappy chunk header', true)
    const len = dv.getInt32(pos)
    pos += 4
    if (len < 0 || pos + len > data.byteLength) throw new DecompressionError('truncated snappy chunk', true)
    const chunk = snappyUncompress(data.subarray(pos, pos + len)) as Buffer
    total += chunk.byteLength
    if (total > maxBytes) throw new DecompressionError(`decompressed size exceeds ${maxBytes} bytes`, false)
    parts.push(chunk)
    pos += len
  }
  return concatBytes(parts, total)
}

function snappyEncode(data: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = []
  const header = new Uint8Array(XERIAL_HEADER)
  header.set(XERIAL_MAGIC, 0)
  const hdv = new DataView(header.buffer)
  hdv.setInt32(8, 1)
  hdv.setInt32(12, 1)
  parts.push(header)
  let total = XERIAL_HEADER
  for (let pos = 0; pos < data.byteLength; pos += XERIAL_BLOCK) {
    const block = snappyCompress(
      Buffer.from(data.buffer, data.byteOffset + pos, Math.min(XERIAL_BLOCK, data.byteLength - pos)),
    )
    const len = new Uint8Array(4)
    new DataView(len.buffer).setInt32(0, block.byteLength)
    parts.push(len, block)
    total += 4 + block.byteLength
  }
  return concatBytes(parts, total)
}

function asBuffer(data: Uint8Array): Buffer {
  return Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
}

/** Decompresses a batch body written with `codec`. Throws DecompressionError. */
export function decompress(codec: number, data: Uint8Array, maxBytes: number): Uint8Array {
  let out: Uint8Array
  try {
    switch (codec) {
      case CompressionCodec.none:
        return data
      case CompressionCodec.gzip:
        out = gunzipSync(data, { maxOutputLength: maxBytes })
        break
      case CompressionCodec.snappy:
        out = snappyDecode(data, maxBytes)
        break
      case CompressionCodec.lz4:
        out = decompressFrameSync(asBuffer(data))
        break
      case CompressionCodec.zstd:
        out = zstdDecompress(data)
        break
      default:
        throw new DecompressionError(`Unknown compression type id: ${codec}`, false)
    }
  } catch (e) {
    if (e instanceof DecompressionError) throw e
    const message = e instanceof Error ? e.message : String(e)
    const code = (e as { code?: unknown }).code
    // A stream cut short reads as a truncated record stream (INVALID_RECORD); anything else is an
    // I/O failure of the decompressor, as Kafka answers it (UNKNOWN_SERVER_ERROR).
    const truncated =
      code === 'Z_BUF_ERROR' ||
      code === 'ERR_BUFFER_TOO_LARGE' ||
      /unexpected end|truncat|too short|eof/i.test(message)
    if (code === 'ERR_BUFFER_TOO_LARGE')
      throw new DecompressionError(`decompressed size exceeds ${maxBytes} bytes`, false, e)
    throw new DecompressionError(`Failed to decompress ${codec}: ${message}`, truncated, e)
  }
  if (out.byteLength > maxBytes) {
    throw new DecompressionError(`decompressed size exceeds ${maxBytes} bytes`, false)
  }
  return out
}

/** Compresses a records body with `codec` as Kafka's clients write it. */
export function compress(codec: number, data: Uint8Array, levels: CompressionLevels = {}): Uint8Array {
  switch (codec) {
    case CompressionCodec.none:
      return data
    case CompressionCodec.gzip:
      return gzipSync(data, { level: levels.gzip ?? -1 })
    case CompressionCodec.snappy:
      return snappyEncode(data)
    case CompressionCodec.lz4:
      return compressFrameSync(asBuffer(data))
    case CompressionCodec.zstd:
      return zstdCompress(data, { compressionLevel: levels.zstd ?? 3 })
    default:
      throw new RangeError(`unknown compression codec ${codec}`)
  }
}
