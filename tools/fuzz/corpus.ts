/**
 * The fuzz corpus: every input that found a bug, replayed against a fresh server by the tests
 * (test/fuzz/corpus.e2e.test.ts). One file per input, `<name>.hex`: lines starting with # say what
 * the input is and where it came from; every other line is one frame in hex, size prefix included,
 * sent in order, each on a connection of its own. After a line `#! together`, the frames are sent in
 * one write on one connection instead (inputs that fail only behind other answers): each must be
 * answered, its answer must decode, and it must be byte for byte the answer the same frame gets
 * alone on a connection of its own afterwards (so those frames must not change the server's state).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { decodeResponse, encodeRequestFrame } from '../../src/protocol/frames.js'
import { API_DEFINITIONS, type ApiMessageTypes } from '../../src/protocol/generated/registry.js'
import { expectationOf, FuzzConnection, wellFormedRequest } from './wire.js'

export interface CorpusEntry {
  readonly name: string
  readonly about: string
  /** Sent each on a connection of its own. */
  readonly frames: readonly Buffer[]
  /** Sent after them, together on one connection (`#! together`). */
  readonly together: readonly Buffer[]
}

function hexFrame(file: string, line: string): Buffer {
  if (!/^([0-9a-f]{2})+$/i.test(line)) throw new Error(`${file}: not hex: ${line.slice(0, 40)}`)
  return Buffer.from(line, 'hex')
}

export function readCorpus(dir: string): CorpusEntry[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.hex'))
    .sort()
    .map((file) => {
      const lines = readFileSync(join(dir, file), 'utf8').split('\n')
      const about = lines
        .filter((l) => l.startsWith('#') && !l.startsWith('#!'))
        .map((l) => l.replace(/^#\s?/, ''))
        .join(' ')
      const frames: Buffer[] = []
      const together: Buffer[] = []
      let into = frames
      for (const raw of lines) {
        const l = raw.trim()
        if (l === '#! together') into = together
        else if (l.startsWith('#!')) throw new Error(`${file}: unknown directive ${l}`)
        else if (l !== '' && !l.startsWith('#')) into.push(hexFrame(file, l))
      }
      return { name: file.replace(/\.hex$/, ''), about, frames, together }
    })
}

/** Requests that must be answered by a healthy server: they touch every topic and every group. */
function healthRequests(): { apiKey: keyof ApiMessageTypes; version: number; frame: Buffer; what: string }[] {
  const req = <K extends keyof ApiMessageTypes>(
    apiKey: K,
    version: number,
    init: Partial<ApiMessageTypes[K]['request']>,
  ) => encodeRequestFrame(apiKey, version, 7, 'corpus-health', API_DEFINITIONS[apiKey].createRequest(init))
  return [
    {
      apiKey: 18,
      version: 3,
      what: 'ApiVersions v3',
      frame: req(18, 3, { clientSoftwareName: 'corpus', clientSoftwareVersion: '1' }),
    },
    {
      apiKey: 3,
      version: 12,
      what: 'Metadata v12 of every topic',
      frame: req(3, 12, { topics: null, allowAutoTopicCreation: false }),
    },
    { apiKey: 16, version: 4, what: 'ListGroups v4', frame: req(16, 4, {}) },
  ]
}

/**
 * Sends the entry's frames to the server on `port`, each on a new connection, and then asks it
 * the health requests on another. Returns what went wrong: a frame neither answered nor closed
 * within `timeoutMs`, a size prefix out of range not closed, a health request not answered or not
 * decodable.
 */
export async function replayEntry(port: number, entry: CorpusEntry, timeoutMs: number): Promise<string[]> {
  const problems: string[] = []
  for (const [i, frame] of entry.frames.entries()) {
    const expected = expectationOf(frame)
    const valid = wellFormedRequest(frame)
    const conn = await FuzzConnection.open(port)
    try {
      await conn.write([frame])
      const o = await conn.take(expected.complete, timeoutMs)
      if (o.timedOut && expected.invalidSize)
        problems.push(`frame ${i}: size out of range and the connection still open after ${timeoutMs} ms`)
      else if (o.timedOut && o.responses.length < expected.complete)
        problems.push(
          `frame ${i}: ${o.responses.length} of ${expected.complete} answered, connection still open after ${timeoutMs} ms`,
        )
      else if (valid !== null && o.responses.length === 0)
        problems.push(
          `frame ${i}: a well-formed ${valid.name} v${valid.version} request, and the server closed the connection instead of answering`,
        )
      else if (valid !== null) {
        try {
          decodeResponse(valid.apiKey, valid.version, o.responses[0]!)
        } catch (e) {
          problems.push(
            `frame ${i}: the answer to ${valid.name} v${valid.version} does not decode (${(e as Error).message})`,
          )
        }
      }
    } finally {
      conn.destroy()
    }
  }
  if (entry.together.length > 0) problems.push(...(await replayTogether(port, entry.together, timeoutMs)))
  for (const h of healthRequests()) {
    const conn = await FuzzConnection.open(port)
    try {
      await conn.write([h.frame])
      const o = await conn.take(1, timeoutMs)
      if (o.responses.length === 0) {
        problems.push(
          `then ${h.what}: ${o.closed ? 'connection closed' : `no answer within ${timeoutMs} ms`}`,
        )
        continue
      }
      try {
        decodeResponse(h.apiKey, h.version, o.responses[0]!)
      } catch (e) {
        problems.push(`then ${h.what}: the answer does not decode (${(e as Error).message})`)
      }
    } finally {
      conn.destroy()
    }
  }
  return problems
}

/**
 * Frames sent in one write on one connection: each well-formed request answered, in order, with the
 * bytes the same frame gets alone on a connection of its own afterwards.
 */
async function replayTogether(port: number, frames: readonly Buffer[], timeoutMs: number): Promise<string[]> {
  const problems: string[] = []
  const requests = frames.map((f, i) => {
    const valid = wellFormedRequest(f)
    if (valid === null) throw new Error(`frame ${i} after #! together is not a well-formed request`)
    return valid
  })
  const conn = await FuzzConnection.open(port)
  let together: Buffer[]
  try {
    await conn.write([Buffer.concat(frames)])
    const o = await conn.take(frames.length, timeoutMs)
    together = o.responses
  } finally {
    conn.destroy()
  }
  if (together.length < frames.length)
    problems.push(`together: ${together.length} of ${frames.length} frames answered`)
  for (const [i, answer] of together.slice(0, frames.length).entries()) {
    const { apiKey, version, name } = requests[i]!
    try {
      decodeResponse(apiKey, version, answer)
    } catch (e) {
      problems.push(
        `together, frame ${i}: the answer to ${name} v${version} does not decode (${(e as Error).message})`,
      )
      continue
    }
    const alone = await FuzzConnection.open(port)
    try {
      await alone.write([frames[i]!])
      const o = await alone.take(1, timeoutMs)
      if (o.responses.length === 0) problems.push(`frame ${i} alone: not answered`)
      else if (!o.responses[0]!.equals(answer))
        problems.push(`together, frame ${i}: the answer to ${name} v${version} differs from its answer alone`)
    } finally {
      alone.destroy()
    }
  }
  return problems
}
