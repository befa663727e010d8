/**
 * Client side of the SASL mechanisms: PLAIN (RFC 4616) and SCRAM-SHA-256/512 (RFC 5802, RFC 7677)
 * without channel binding. A mechanism yields the first token, answers each server token and, for
 * SCRAM, checks the server's signature at the end.
 */
import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'
import { SaslAuthenticationError } from './errors.js'
import type { SaslMechanism, SaslOptions } from './security.js'

const pbkdf2Async = promisify(pbkdf2)

export interface SaslClientMechanism {
  readonly name: SaslMechanism
  /** the first token the client sends */
  initial(): Buffer
  /**
   * The answer to a server token, or null when the exchange is complete on the client's side
   * (a token that fails verification throws a SaslAuthenticationError).
   */
  next(serverToken: Buffer): Promise<Buffer | null>
  /** true once the exchange completed and, for SCRAM, the server proved its knowledge */
  readonly complete: boolean
}

export function createSaslMechanism(opts: SaslOptions, nonce?: string): SaslClientMechanism {
  return opts.mechanism === 'PLAIN'
    ? new PlainMechanism(opts.username, opts.password)
    : new ScramMechanism(opts.mechanism, opts.username, opts.password, nonce)
}

class PlainMechanism implements SaslClientMechanism {
  readonly name = 'PLAIN' as const
  readonly #username: string
  readonly #password: string
  #sent = false

  constructor(username: string, password: string) {
    this.#username = username
    this.#password = password
  }

  get complete(): boolean {
    return this.#sent
  }

  initial(): Buffer {
    this.#sent = true
    // authzid (empty) NUL authcid NUL passwd
    return Buffer.from(`\u0000${this.#username}\u0000${this.#password}`, 'utf8')
  }

  async next(_serverToken: Buffer): Promise<Buffer | null> {
    return null
  }
}

/** RFC 5802 `saslname`: `=` and `,` escaped. */
function saslName(user: string): string {
  return user.replace(/=/g, '=3D').replace(/,/g, '=2C')
}

/** Kafka's ScramMechanism minimum iteration count. */
const MIN_ITERATIONS = 4096

class ScramMechanism implements SaslClientMechanism {
  readonly name: 'SCRAM-SHA-256' | 'SCRAM-SHA-512'
  readonly #hash: 'sha256' | 'sha512'
  readonly #keyLength: number
  readonly #username: string
  readonly #password: string
  readonly #nonce: string
  #clientFirstBare = ''
  #expectedServerSignature: Buffer | null = null
  #state: 'new' | 'first-sent' | 'final-sent' | 'done' = 'new'

  constructor(
    mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512',
    username: string,
    password: string,
    nonce?: string,
  ) {
    this.name = mechanism
    this.#hash = mechanism === 'SCRAM-SHA-256' ? 'sha256' : 'sha512'
    this.#keyLength = mechanism === 'SCRAM-SHA-256' ? 32 : 64
    this.#username = username
    this.#password = password
    this.#nonce = nonce ?? randomBytes(24).toString('base64url')
  }

  get complete(): boolean {
    return this.#state === 'done'
  }

  initial(): Buffer {
    this.#clientFirstBare = `n=${saslName(this.#username)},r=${this.#nonce}`
    this.#state = 'first-sent'
    return Buffer.from(`n,,${this.#clientFirstBare}`, 'utf8')
  }

  async next(serverToken: Buffer): Promise<Buffer | null> {
    if (this.#state === 'first-sent') return this.#clientFinal(serverToken)
    if (this.#state === 'final-sent') {
      this.#verifyServerFinal(serverToken)
      return null
    }
    throw this.#invalid('unexpected server message')
  }

  #invalid(what: string): SaslAuthenticationError {
    return new SaslAuthenticationError(`Invalid ${this.name} server message: ${what}`)
  }

  async #clientFinal(token: Buffer): Promise<Buffer> {
    const serverFirst = token.toString('utf8')
    const attrs = parseAttributes(serverFirst)
    const error = attrs.get('e')
    if (error !== undefined) throw new SaslAuthenticationError(`${this.name} authentication failed: ${error}`)
    const nonce = attrs.get('r')
    const salt = attrs.get('s')
    const iterationsText = attrs.get('i')
    if (nonce === undefined || salt === undefined || iterationsText === undefined) {
      throw this.#invalid('server-first-message lacks r, s or i')
    }
    if (!nonce.startsWith(this.#nonce) || nonce.length === this.#nonce.length) {
      throw this.#invalid('the server nonce does not extend the client nonce')
    }
    const iterations = Number(iterationsText)
    if (!/^\d+$/.test(iterationsText) || iterations < MIN_ITERATIONS) {
      throw this.#invalid(`iteration count ${iterationsText} is below ${MIN_ITERATIONS}`)
    }
    const saltBytes = Buffer.from(salt, 'base64')
    const salted = await pbkdf2Async(this.#password, saltBytes, iterations, this.#keyLength, this.#hash)
    const clientKey = this.#hmac(salted, 'Client Key')
    const storedKey = createHash(this.#hash).update(clientKey).digest()
    const withoutProof = `c=biws,r=${nonce}`
    const authMessage = `${this.#clientFirstBare},${serverFirst},${withoutProof}`
    const clientSignature = this.#hmac(storedKey, authMessage)
    const proof = Buffer.alloc(clientKey.length)
    for (let i = 0; i < proof.length; i++) proof[i] = clientKey[i]! ^ clientSignature[i]!
    this.#expectedServerSignature = this.#hmac(this.#hmac(salted, 'Server Key'), authMessage)
    this.#state = 'final-sent'
    return Buffer.from(`${withoutProof},p=${proof.toString('base64')}`, 'utf8')
  }

  #verifyServerFinal(token: Buffer): void {
    const attrs = parseAttributes(token.toString('utf8'))
    const error = attrs.get('e')
    if (error !== undefined) throw new SaslAuthenticationError(`${this.name} authentication failed: ${error}`)
    const v = attrs.get('v')
    if (v === undefined) throw this.#invalid('server-final-message lacks v')
    const got = Buffer.from(v, 'base64')
    const want = this.#expectedServerSignature!
    if (got.length !== want.length || !timingSafeEqual(got, want)) {
      throw new SaslAuthenticationError(
        `${this.name} authentication failed: the server signature is invalid (the broker does not know this credential)`,
      )
    }
    this.#state = 'done'
  }

  #hmac(key: Buffer, text: string): Buffer {
    return createHmac(this.#hash, key).update(text, 'utf8').digest()
  }
}

/** `a=value,b=value` with values that may contain `=`. */
function parseAttributes(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of text.split(',')) {
    if (part.length >= 2 && part[1] === '=') out.set(part[0]!, part.slice(2))
  }
  return out
}
