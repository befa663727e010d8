// The ceilings of the data-plane benchmarks: bare Node TCP servers written only for the benchmark,
// doing the least any server must do for the same requests, with the same system calls the file
// engine uses (a positional writeSync into a file, a positional readSync from one).
//
// - The append ceiling frames Produce requests, appends each request's record bytes (found at a
//   fixed place in the frame, since every frame of the run has the same layout) to a file, and
//   answers fixed bytes (Topograph's answer to the same request).
// - The read ceiling frames Fetch requests, takes the fetch offset from a fixed place in the frame,
//   reads the bytes of the whole batches holding it from a file (every batch of the run has the same
//   size, so the position is a multiplication) and answers them between Topograph's own answer
//   prefix and suffix (so the answer has the same size).
//
// Like Topograph's connection, each writes the answers to one read in one go (cork).
import { closeSync, openSync, readSync, writeSync } from 'node:fs'
import { createServer, type Server, type Socket } from 'node:net'

/** Calls `onFrame(buf, start, size)` for every complete size-prefixed frame read from `socket`. */
function frames(socket: Socket, onFrames: (buf: Buffer, starts: number[]) => void): void {
  let buf: Buffer = Buffer.alloc(0)
  socket.on('data', (chunk: Buffer) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk])
    let off = 0
    const starts: number[] = []
    while (buf.length - off >= 4) {
      const size = buf.readInt32BE(off)
      if (buf.length - off < 4 + size) break
      starts.push(off)
      off += 4 + size
    }
    if (starts.length > 0) {
      socket.cork()
      onFrames(buf, starts)
      socket.uncork()
    }
    buf = off === buf.length ? Buffer.alloc(0) : buf.subarray(off)
  })
  socket.on('error', () => undefined)
}

export interface Ceiling {
  readonly port: number
  close(): Promise<void>
}

/** Listens on a loopback port; closing the server closes `fd`. */
async function listening(server: Server, fd: number): Promise<Ceiling> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  return {
    port: (server.address() as { port: number }).port,
    close: () =>
      new Promise((r) =>
        server.close(() => {
          closeSync(fd)
          r()
        }),
      ),
  }
}

/**
 * The append ceiling: each frame's bytes [recordsAt, recordsAt + recordsLength) (offsets within the
 * frame, size prefix included) are appended to `file`; `answer` (a complete frame) is written back.
 */
export async function appendCeiling(
  file: string,
  recordsAt: number,
  recordsLength: number,
  answer: Uint8Array,
): Promise<Ceiling> {
  const fd = openSync(file, 'w')
  let position = 0
  const out = Buffer.from(answer)
  const server = createServer({ noDelay: true }, (socket) =>
    frames(socket, (buf, starts) => {
      for (const s of starts) {
        position += writeSync(fd, buf, s + recordsAt, recordsLength, position)
        socket.write(out)
      }
    }),
  )
  return listening(server, fd)
}

/**
 * The read ceiling: the int64 fetch offset at `offsetAt` in each frame selects the batch
 * `offset / recordsPerBatch`; `batches` whole batches of `batchBytes` each are read from `file` at
 * that batch's position and written back between `prefix` (the size prefix included) and `suffix`.
 */
export async function readCeiling(
  file: string,
  offsetAt: number,
  recordsPerBatch: number,
  batchBytes: number,
  batches: number,
  prefix: Uint8Array,
  suffix: Uint8Array,
): Promise<Ceiling> {
  const fd = openSync(file, 'r')
  const head = Buffer.from(prefix)
  const tail = Buffer.from(suffix)
  const length = batches * batchBytes
  const server = createServer({ noDelay: true }, (socket) =>
    frames(socket, (buf, starts) => {
      for (const s of starts) {
        const offset = Number(buf.readBigInt64BE(s + offsetAt))
        const data = Buffer.allocUnsafe(length)
        readSync(fd, data, 0, length, Math.floor(offset / recordsPerBatch) * batchBytes)
        socket.write(head)
        socket.write(data)
        socket.write(tail)
      }
    }),
  )
  return listening(server, fd)
}
