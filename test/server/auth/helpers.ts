// Test helpers for security: a SCRAM client, certificates from the openssl CLI, and a small
// Kafka-protocol client over TCP or TLS (the shared wire client speaks TCP only).
import { execFileSync } from 'node:child_process'
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { connect as netConnect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect as tlsConnect } from 'node:tls'
import { decodeResponse, requestFrame } from '../wire-client.js'

// ---------------------------------------------------------------------------------------------
// SCRAM client (RFC 5802), independent of the server code.

export class ScramClient {
  readonly #hash: 'sha256' | 'sha512'
  readonly #user: string
  readonly #password: string
  readonly #nonce: string
  readonly #authzid: string
  #clientFirstBare = ''
  #serverSignature: Buffer | undefined

  constructor(
    mechanism: string,
    user: string,
    password: string,
    nonce = randomBytes(18).toString('base64'),
    authzid = '',
  ) {
    this.#hash = mechanism === 'SCRAM-SHA-512' ? 'sha512' : 'sha256'
    this.#user = user
    this.#password = password
    this.#nonce = nonce
    this.#authzid = authzid
  }

  first(extensions = ''): Buffer {
    const name = this.#user.replace(/=/g, '=3D').replace(/,/g, '=2C')
    this.#clientFirstBare = `n=${name},r=${this.#nonce}${extensions}`
    return Buffer.from(`n,${this.#authzid === '' ? '' : `a=${this.#authzid}`},${this.#clientFirstBare}`)
  }

  final(serverFirst: Uint8Array): Buffer {
    const text = Buffer.from(serverFirst).toString('utf8')
    const attrs = new Map(text.split(',').map((kv) => [kv[0], kv.slice(2)]))
    const nonce = attrs.get('r') as string
    const salt = Buffer.from(attrs.get('s') as string, 'base64')
    const iterations = Number(attrs.get('i'))
    const len = this.#hash === 'sha256' ? 32 : 64
    const salted = pbkdf2Sync(this.#password, salt, iterations, len, this.#hash)
    const clientKey = createHmac(this.#hash, salted).update('Client Key').digest()
    const storedKey = createHash(this.#hash).update(clientKey).digest()
    const gs2 = Buffer.from(`n,${this.#authzid === '' ? '' : `a=${this.#authzid}`},`).toString('base64')
    const withoutProof = `c=${gs2},r=${nonce}`
    const authMessage = `${this.#clientFirstBare},${text},${withoutProof}`
    const signature = createHmac(this.#hash, storedKey).update(authMessage).digest()
    const proof = Buffer.alloc(len)
    for (let i = 0; i < len; i++) proof[i] = clientKey[i] ^ signature[i]
    const serverKey = createHmac(this.#hash, salted).update('Server Key').digest()
    this.#serverSignature = createHmac(this.#hash, serverKey).update(authMessage).digest()
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`)
  }

  /** True when the server's final message proves it knows the credential. */
  verify(serverFinal: Uint8Array): boolean {
    return Buffer.from(serverFinal).toString('utf8') === `v=${this.#serverSignature?.toString('base64')}`
  }
}

// ---------------------------------------------------------------------------------------------
// Certificates

export interface TestCerts {
  readonly dir: string
  readonly caCert: string
  /** PEM file with the server key and certificate. */
  readonly serverPem: string
  readonly serverKey: string
  readonly serverCert: string
  readonly clientKey: string
  readonly clientCert: string
  remove(): void
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with openssl. */
export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-certs-'))
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', timeout: 30_000 })
  run([
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '2',
    '-subj',
    '/CN=Topograph Test CA',
  ])
  writeFileSync(join(dir, 'server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
  run([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'server.key',
    '-out',
    'server.csr',
    '-subj',
    '/CN=localhost',
  ])
  run([
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.crt',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  ])
  run([
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    'client.key',
    '-out',
    'client.csr',
    '-subj',
    '/C=FR/O=Example/CN=writer',
  ])
  run([
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.crt',
    '-days',
    '2',
  ])
  const serverPem = join(dir, 'server.pem')
  writeFileSync(
    serverPem,
    readFileSync(join(dir, 'server.key'), 'utf8') + readFileSync(join(dir, 'server.crt'), 'utf8'),
  )
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    serverPem,
    serverKey: join(dir, 'server.key'),
    serverCert: join(dir, 'server.crt'),
    clientKey: join(dir, 'client.key'),
    clientCert: join(dir, 'client.crt'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

// ---------------------------------------------------------------------------------------------
// Client over TCP or TLS

export interface TlsClientOptions {
  readonly ca: string
  readonly cert?: string
  readonly key?: string
}

export class SecureClient {
  readonly socket: Socket
  readonly closed: Promise<void>
  #buf = Buffer.alloc(0)
  #frames: Buffer[] = []
  #waiters: ((f: Buffer | null) => void)[] = []
  #isClosed = false
  #correlation = 1

  private constructor(socket: Socket) {
    this.socket = socket
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()))
    socket.on('data', (chunk: Buffer) => {
      this.#buf = Buffer.concat([this.#buf, chunk])
      while (this.#buf.length >= 4) {
        const size = this.#buf.readInt32BE(0)
        if (this.#buf.length < 4 + size) break
        const frame = this.#buf.subarray(4, 4 + size)
        this.#buf = this.#buf.subarray(4 + size)
        const w = this.#waiters.shift()
        if (w) w(frame)
        else this.#frames.push(frame)
      }
    })
    socket.on('error', () => undefined)
    socket.on('close', () => {
      this.#isClosed = true
      for (const w of this.#waiters.splice(0)) w(null)
    })
  }

  static connect(port: number, tls?: TlsClientOptions): Promise<SecureClient> {
    return new Promise((resolve, reject) => {
      if (tls === undefined) {
        const s = netConnect({ host: '127.0.0.1', port }, () => resolve(new SecureClient(s)))
        s.once('error', reject)
        return
      }
      const s = tlsConnect(
        {
          host: '127.0.0.1',
          port,
          ca: readFileSync(tls.ca),
          cert: tls.cert === undefined ? undefined : readFileSync(tls.cert),
          key: tls.key === undefined ? undefined : readFileSync(tls.key),
          servername: 'localhost',
        },
        () => resolve(new SecureClient(s)),
      )
      s.once('error', reject)
    })
  }

  get isClosed(): boolean {
    return this.#isClosed
  }

  write(bytes: Uint8Array): void {
    this.socket.write(bytes)
  }

  nextFrame(timeoutMs = 5000): Promise<Buffer | null> {
    const f = this.#frames.shift()
    if (f) return Promise.resolve(f)
    if (this.#isClosed) return Promise.resolve(null)
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('no response in time')), timeoutMs)
      this.#waiters.push((frame) => {
        clearTimeout(t)
        resolve(frame)
      })
    })
  }

  /** Sends a request; resolves with the decoded body, or null when the server closed instead. */
  async request<T = Record<string, unknown>>(
    apiKey: number,
    version: number,
    body: unknown = {},
  ): Promise<T | null> {
    const id = this.#correlation++
    this.write(requestFrame(apiKey, version, id, body))
    const frame = await this.nextFrame()
    if (frame === null) return null
    const res = decodeResponse<T>(apiKey, version, frame)
    if (res.correlationId !== id) throw new Error(`correlation id ${res.correlationId}, expected ${id}`)
    return res.body
  }

  async closedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined
    const r = await Promise.race([
      this.closed.then(() => true),
      new Promise<boolean>((res) => {
        timer = setTimeout(() => res(false), ms)
      }),
    ])
    clearTimeout(timer)
    return r
  }

  close(): void {
    this.socket.destroy()
  }
}

export interface SaslAuthenticateBody {
  errorCode: number
  errorMessage: string | null
  authBytes: Uint8Array
  sessionLifetimeMs: bigint
}

/** Handshake + SCRAM exchange; returns the last SaslAuthenticate answer. */
export async function scramLogin(
  c: SecureClient,
  mechanism: string,
  user: string,
  password: string,
  version = 2,
): Promise<SaslAuthenticateBody | null> {
  const hs = await c.request<{ errorCode: number }>(17, 1, { mechanism })
  if (hs === null || hs.errorCode !== 0) throw new Error(`handshake failed: ${JSON.stringify(hs)}`)
  const client = new ScramClient(mechanism, user, password)
  const first = await c.request<SaslAuthenticateBody>(36, version, { authBytes: client.first() })
  if (first === null || first.errorCode !== 0) return first
  const final = await c.request<SaslAuthenticateBody>(36, version, {
    authBytes: client.final(first.authBytes),
  })
  if (final !== null && final.errorCode === 0 && !client.verify(final.authBytes)) {
    throw new Error('server signature did not verify')
  }
  return final
}

export async function plainLogin(
  c: SecureClient,
  user: string,
  password: string,
  version = 2,
): Promise<SaslAuthenticateBody | null> {
  const hs = await c.request<{ errorCode: number }>(17, 1, { mechanism: 'PLAIN' })
  if (hs === null || hs.errorCode !== 0) throw new Error(`handshake failed: ${JSON.stringify(hs)}`)
  return c.request<SaslAuthenticateBody>(36, version, {
    authBytes: Buffer.from(`\u0000${user}\u0000${password}`),
  })
}
