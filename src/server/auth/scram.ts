import { SaslFailure } from './sasl-failure.js'
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka speaks it: gs2 header `n` only (no
 * channel binding), an optional authorization id that must equal the user name, extensions after
 * the nonce accepted and ignored except `tokenauth` (delegation tokens are not served here, so a
 * client asking for them fails), and at least 4096 iterations.
 *
 * The server never holds passwords: a credential is the salt, the iteration count, StoredKey =
 * H(HMAC(SaltedPassword, "Client Key")) and ServerKey = HMAC(SaltedPassword, "Server Key").
 */

export type ScramMechanism = 'SCRAM-SHA-256' | 'SCRAM-SHA-512'
export const SCRAM_MECHANISMS: readonly ScramMechanism[] = ['SCRAM-SHA-256', 'SCRAM-SHA-512']
export const SCRAM_MIN_ITERATIONS = 4096
/** Kafka's bound (ScramMechanism.maxIterations, ScramControlManager.MAX_ITERATIONS). */
export const SCRAM_MAX_ITERATIONS = 16384

const HASH: Readonly<Record<ScramMechanism, { readonly name: string; readonly bytes: number }>> = {
  'SCRAM-SHA-256': { name: 'sha256', bytes: 32 },
  'SCRAM-SHA-512': { name: 'sha512', bytes: 64 },
}

export interface ScramCredential {
  readonly mechanism: ScramMechanism
  readonly salt: Buffer
  readonly iterations: number
  readonly storedKey: Buffer
  readonly serverKey: Buffer
}

export function isScramMechanism(m: string): m is ScramMechanism {
  return m === 'SCRAM-SHA-256' || m === 'SCRAM-SHA-512'
}

function hmac(mech: ScramMechanism, key: Uint8Array, data: string | Uint8Array): Buffer {
  return createHmac(HASH[mech].name, key).update(data).digest()
}

function hash(mech: ScramMechanism, data: Uint8Array): Buffer {
  return createHash(HASH[mech].name).update(data).digest()
}

export interface ScramCredentialOptions {
  /** Default 4096, Kafka's default; between 4096 and 16384. */
  readonly iterations?: number
  /** Default: 32 random bytes. */
  readonly salt?: Uint8Array
}

/** Derives the stored credential from a password (the password itself is not kept). */
export function computeScramCredential(
  mechanism: ScramMechanism,
  password: string,
  options: ScramCredentialOptions = {},
): ScramCredential {
  const iterations = options.iterations ?? SCRAM_MIN_ITERATIONS
  if (
    !Number.isInteger(iterations) ||
    iterations < SCRAM_MIN_ITERATIONS ||
    iterations > SCRAM_MAX_ITERATIONS
  ) {
    throw new RangeError(
      `iterations must be an integer from ${SCRAM_MIN_ITERATIONS} to ${SCRAM_MAX_ITERATIONS}`,
    )
  }
  const salt = Buffer.from(options.salt ?? randomBytes(32))
  const salted = pbkdf2Sync(
    Buffer.from(password, 'utf8'),
    salt,
    iterations,
    HASH[mechanism].bytes,
    HASH[mechanism].name,
  )
  return credentialFromSaltedPassword(mechanism, salt, iterations, salted)
}

/**
 * The stored credential from SaltedPassword = Hi(password, salt, iterations) (RFC 5802), as a client
 * sends it in AlterUserScramCredentials: StoredKey = H(HMAC(SaltedPassword, "Client Key")),
 * ServerKey = HMAC(SaltedPassword, "Server Key"). SaltedPassword itself is not kept.
 */
export function credentialFromSaltedPassword(
  mechanism: ScramMechanism,
  salt: Uint8Array,
  iterations: number,
  saltedPassword: Uint8Array,
): ScramCredential {
  return {
    mechanism,
    salt: Buffer.from(salt),
    iterations,
    storedKey: hash(mechanism, hmac(mechanism, saltedPassword, 'Client Key')),
    serverKey: hmac(mechanism, saltedPassword, 'Server Key'),
  }
}

/**
 * One `sasl.scram.users` entry: `user:MECHANISM:iterations:salt:storedKey:serverKey`, the last
 * three in base64. This is what operators put in the configuration.
 */
export function formatScramUser(user: string, credential: ScramCredential): string {
  checkUserName(user)
  return [
    user,
    credential.mechanism,
    credential.iterations,
    credential.salt.toString('base64'),
    credential.storedKey.toString('base64'),
    credential.serverKey.toString('base64'),
  ].join(':')
}

/** Computes a credential from a password and formats it as a `sasl.scram.users` entry. */
export function scramUserEntry(
  user: string,
  mechanism: ScramMechanism,
  password: string,
  options: ScramCredentialOptions = {},
): string {
  return formatScramUser(user, computeScramCredential(mechanism, password, options))
}

function checkUserName(user: string): void {
  if (user === '' || /[:,;\s]/.test(user)) {
    throw new RangeError('a user name must be non-empty and hold no colon, comma, semicolon or white space')
  }
}

/** The credential of a user name for one mechanism, looked up at each exchange. */
export interface ScramUserLookup {
  get(user: string): ScramCredential | undefined
}

/** Credentials by mechanism, then user name. */
export type ScramCredentials = ReadonlyMap<ScramMechanism, ReadonlyMap<string, ScramCredential>>

const B64 = /^[A-Za-z0-9+/]+={0,2}$/

/**
 * Parses `sasl.scram.users` (comma-separated entries, see formatScramUser). Errors name the entry
 * by position and user, never by value: the value is secret.
 */
export function parseScramUsers(value: string): ScramCredentials {
  const out = new Map<ScramMechanism, Map<string, ScramCredential>>()
  const entries = value.trim() === '' ? [] : value.split(',').map((s) => s.trim())
  entries.forEach((entry, i) => {
    const parts = entry.split(':')
    const where = `entry ${i + 1}`
    if (parts.length !== 6)
      throw new Error(`${where} is not user:mechanism:iterations:salt:storedKey:serverKey`)
    const [user, mech, iter, salt, stored, server] = parts
    if (user === '' || /\s|;/.test(user)) throw new Error(`${where} has an invalid user name`)
    if (!isScramMechanism(mech))
      throw new Error(`${where} (${user}) names mechanism ${mech}, not SCRAM-SHA-256 or SCRAM-SHA-512`)
    const iterations = Number(iter)
    if (!/^\d+$/.test(iter) || iterations < SCRAM_MIN_ITERATIONS) {
      throw new Error(
        `${where} (${user}) has ${iter} iterations; at least ${SCRAM_MIN_ITERATIONS} are required`,
      )
    }
    for (const [name, text] of [
      ['salt', salt],
      ['storedKey', stored],
      ['serverKey', server],
    ] as const) {
      if (!B64.test(text)) throw new Error(`${where} (${user}) has a ${name} that is not base64`)
    }
    const storedKey = Buffer.from(stored, 'base64')
    const serverKey = Buffer.from(server, 'base64')
    if (storedKey.length !== HASH[mech].bytes || serverKey.length !== HASH[mech].bytes) {
      throw new Error(`${where} (${user}) has keys of the wrong length for ${mech}`)
    }
    let users = out.get(mech)
    if (users === undefined) out.set(mech, (users = new Map()))
    if (users.has(user)) throw new Error(`${where}: user ${user} has two ${mech} credentials`)
    users.set(user, { mechanism: mech, salt: Buffer.from(salt, 'base64'), iterations, storedKey, serverKey })
  })
  return out
}

// ---------------------------------------------------------------------------------------------
// Server exchange

const SASLNAME = '(?:[^,=]|=2C|=3D)+'
const PRINTABLE = '[\\x21-\\x2B\\x2D-\\x7E]+'
const EXTENSIONS = '(?:,[A-Za-z]+=[^,]*)*'
const CLIENT_FIRST = new RegExp(
  `^n,(?:a=(${SASLNAME}))?,(?:m=${PRINTABLE},)?(n=(${SASLNAME}),r=(${PRINTABLE})(${EXTENSIONS}))$`,
)
const CLIENT_FINAL = new RegExp(
  `^(c=([A-Za-z0-9+/=]*),r=(${PRINTABLE})${EXTENSIONS}),p=([A-Za-z0-9+/]+={0,2})$`,
)

function saslNameToUser(name: string): string {
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=')
}

export type ScramServerState = 'client-first' | 'client-final' | 'complete' | 'failed'

/** One server side of a SCRAM exchange. */
export class ScramServer {
  readonly #mechanism: ScramMechanism
  readonly #credentials: ScramUserLookup
  readonly #nonce: () => string
  #state: ScramServerState = 'client-first'
  #user = ''
  #credential: ScramCredential | undefined
  #gs2Header = ''
  #clientFirstBare = ''
  #serverFirst = ''
  #fullNonce = ''

  constructor(
    mechanism: ScramMechanism,
    credentials: ScramUserLookup,
    nonce: () => string = () => randomBytes(24).toString('base64url'),
  ) {
    this.#mechanism = mechanism
    this.#credentials = credentials
    this.#nonce = nonce
  }

  get state(): ScramServerState {
    return this.#state
  }

  get complete(): boolean {
    return this.#state === 'complete'
  }

  /** The authenticated user name (after completion). */
  get user(): string {
    return this.#user
  }

  /** Answers one client message; throws SaslFailure. */
  evaluate(token: Uint8Array): Uint8Array {
    try {
      if (this.#state === 'client-first') return this.#clientFirst(token)
      if (this.#state === 'client-final') return this.#clientFinal(token)
      throw new SaslFailure(`Unexpected challenge in SCRAM server state ${this.#state}`)
    } catch (err) {
      this.#state = 'failed'
      this.#credential = undefined
      throw err
    }
  }

  #clientFirst(token: Uint8Array): Uint8Array {
    const text = Buffer.from(token).toString('utf8')
    const m = CLIENT_FIRST.exec(text)
    if (m === null) throw new SaslFailure('Invalid SCRAM client first message format')
    const [, authzid, bare, saslName, clientNonce, extensions] = m
    if (/(^|,)tokenauth=true(,|$)/i.test(extensions)) {
      throw new SaslFailure('delegation token authentication is not served')
    }
    const user = saslNameToUser(saslName)
    const credential = this.#credentials.get(user)
    if (credential === undefined) throw new SaslFailure('Authentication failed: Invalid user credentials')
    const authz = authzid === undefined ? '' : saslNameToUser(authzid)
    if (authz !== '' && authz !== user) {
      const msg =
        'Authentication failed: Client requested an authorization id that is different from username'
      throw new SaslFailure(msg, msg)
    }
    if (credential.iterations < SCRAM_MIN_ITERATIONS) {
      throw new SaslFailure(
        `Iterations ${credential.iterations} is less than the minimum ${SCRAM_MIN_ITERATIONS} for ${this.#mechanism}`,
      )
    }
    this.#user = user
    this.#credential = credential
    this.#gs2Header = `n,${authzid ?? ''},`
    this.#clientFirstBare = bare
    this.#fullNonce = clientNonce + this.#nonce()
    this.#serverFirst = `r=${this.#fullNonce},s=${credential.salt.toString('base64')},i=${credential.iterations}`
    this.#state = 'client-final'
    return Buffer.from(this.#serverFirst, 'utf8')
  }

  #clientFinal(token: Uint8Array): Uint8Array {
    const credential = this.#credential as ScramCredential
    const text = Buffer.from(token).toString('utf8')
    const m = CLIENT_FINAL.exec(text)
    if (m === null) throw new SaslFailure('Invalid SCRAM client final message format')
    const [, withoutProof, channel, nonce, proofText] = m
    // RFC 5802 5.1: the nonce must be the one of the server-first message, exactly (Kafka 4.0 and
    // later check the same). librdkafka before 2.6.1 (kcat in Debian: 2.0.2) prepends its client
    // nonce once more and is refused here; with c-nonce `-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.c` it sent
    //   n,,n=kc,r=-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.c
    //   (server) r=-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.ckdQT4M-U6hNhIDRIOn907rZWfevH1REa,s=…,i=4096
    //   c=biws,r=-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.c-@nlf=A8ui_wy5b<y>I4OxP>|[c9W2.ckdQT4M-…,p=…
    // (Kafka 3.8.1 to 3.9 accepted any nonce ending with the server's; before 3.8.1 Kafka did not
    // compare it.) See docs/security.md and the librdkafka case in test/server/auth/scram.test.ts.
    if (nonce !== this.#fullNonce) throw new SaslFailure('Invalid client nonce in the final client message.')
    if (Buffer.from(channel, 'base64').toString('utf8') !== this.#gs2Header) {
      throw new SaslFailure('Invalid channel binding in the final client message.')
    }
    const proof = Buffer.from(proofText, 'base64')
    const mech = this.#mechanism
    if (proof.length !== HASH[mech].bytes) throw new SaslFailure('Invalid client credentials')
    const authMessage = `${this.#clientFirstBare},${this.#serverFirst},${withoutProof}`
    const clientSignature = hmac(mech, credential.storedKey, authMessage)
    const clientKey = Buffer.alloc(proof.length)
    for (let i = 0; i < proof.length; i++) clientKey[i] = proof[i] ^ clientSignature[i]
    if (!timingSafeEqual(hash(mech, clientKey), credential.storedKey)) {
      throw new SaslFailure('Invalid client credentials')
    }
    const serverSignature = hmac(mech, credential.serverKey, authMessage)
    this.#credential = undefined
    this.#state = 'complete'
    return Buffer.from(`v=${serverSignature.toString('base64')}`, 'utf8')
  }
}
