// Test helpers for security: a SCRAM client, certificates from the openssl CLI, and the shared
// Kafka-protocol client over TCP or TLS with a `request` that answers null on a server close.
import { execFileSync } from 'node:child_process'
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FrameConnection, openSocket, type TlsClientOptions } from '../wire-client.js'

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

const openssl = (dir: string, args: string[]) =>
  execFileSync('openssl', args, { cwd: dir, stdio: 'pipe', timeout: 30_000 })

export interface SignedCert {
  readonly key: string
  readonly cert: string
  /** The key and the certificate in one PEM file. */
  readonly pem: string
}

/**
 * `<name>.key`, `<name>.crt` and `<name>.pem` in `dir` (which holds the CA made by makeCerts), for
 * `subject`, signed by that CA, with `subjectAltName` (e.g. `DNS:localhost`) when given.
 */
export function signedCert(dir: string, name: string, subject: string, subjectAltName?: string): SignedCert {
  openssl(dir, [
    'req',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    `${name}.key`,
    '-out',
    `${name}.csr`,
    '-subj',
    subject,
  ])
  const ext: string[] = []
  if (subjectAltName !== undefined) {
    writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${subjectAltName}\n`)
    ext.push('-extfile', `${name}.ext`)
  }
  openssl(dir, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    'ca.crt',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    '2',
    ...ext,
  ])
  const key = join(dir, `${name}.key`)
  const cert = join(dir, `${name}.crt`)
  const pem = join(dir, `${name}.pem`)
  writeFileSync(pem, readFileSync(key, 'utf8') + readFileSync(cert, 'utf8'))
  return { key, cert, pem }
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with openssl. */
export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-certs-'))
  openssl(dir, [
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
  const server = signedCert(dir, 'server', '/CN=localhost', 'IP:127.0.0.1,DNS:localhost')
  const client = signedCert(dir, 'client', '/C=FR/O=Example/CN=writer')
  return {
    dir,
    caCert: join(dir, 'ca.crt'),
    serverPem: server.pem,
    serverKey: server.key,
    serverCert: server.cert,
    clientKey: client.key,
    clientCert: client.cert,
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

// ---------------------------------------------------------------------------------------------
// Client over TCP or TLS

export type { TlsClientOptions }

/** The shared wire client over TCP or TLS, whose `request` answers null when the server closed instead. */
export class SecureClient extends FrameConnection {
  static async connect(port: number, tls?: TlsClientOptions): Promise<SecureClient> {
    return new SecureClient(await openSocket(port, tls))
  }

  /** Sends a request; resolves with the decoded body, or null when the server closed instead. */
  async request<T = Record<string, unknown>>(
    apiKey: number,
    version: number,
    body: unknown = {},
  ): Promise<T | null> {
    return (await this.exchange<T>(apiKey, version, body))?.body ?? null
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
