import { createHash, timingSafeEqual } from 'node:crypto'
import {
  isScramMechanism,
  parseScramUsers,
  type ScramCredentials,
  type ScramMechanism,
  ScramServer,
  type ScramUserLookup,
} from './scram.js'

/**
 * The SASL mechanisms served (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512), their credentials from the
 * configuration, and one interface over their server sides.
 */

export const SASL_MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const
export type SaslMechanismName = (typeof SASL_MECHANISMS)[number]

import { SaslFailure } from './sasl-failure.js'

export { SaslFailure }

/** The server side of one exchange. */
export interface SaslServerMechanism {
  readonly mechanism: SaslMechanismName
  /** Answers one client token; throws SaslFailure. */
  evaluate(token: Uint8Array): Uint8Array
  readonly complete: boolean
  /** The authenticated user name, once complete. */
  readonly user: string
}

/** Where a SCRAM exchange looks up the credential of the user it is told. */
export interface ScramCredentialSource {
  lookup(mechanism: ScramMechanism): ScramUserLookup
}

export interface SaslCredentialStore {
  /** `sasl.plain.users`: user → password. */
  readonly plain: ReadonlyMap<string, string>
  /** The SCRAM credentials: `sasl.scram.users` and those stored through the Admin API. */
  readonly scram: ScramCredentialSource
}

/** A source of fixed credentials (`sasl.scram.users` alone). */
export function fixedScramCredentials(credentials: ScramCredentials): ScramCredentialSource {
  return { lookup: (mechanism) => credentials.get(mechanism) ?? new Map() }
}

/** Parses `sasl.plain.users`: comma-separated `user:password` (the password after the first colon). */
export function parsePlainUsers(value: string): Map<string, string> {
  const out = new Map<string, string>()
  const entries = value.trim() === '' ? [] : value.split(',').map((s) => s.trim())
  entries.forEach((entry, i) => {
    const colon = entry.indexOf(':')
    if (colon <= 0) throw new Error(`entry ${i + 1} is not user:password`)
    const user = entry.slice(0, colon)
    if (/\s|;/.test(user)) throw new Error(`entry ${i + 1} has an invalid user name`)
    if (colon === entry.length - 1) throw new Error(`entry ${i + 1} (${user}) has an empty password`)
    if (out.has(user)) throw new Error(`entry ${i + 1}: user ${user} is listed twice`)
    out.set(user, entry.slice(colon + 1))
  })
  return out
}

/** The credentials of the configuration; `scram` replaces the `sasl.scram.users` ones when given. */
export function credentialStoreFromConfig(
  raw: Readonly<Record<string, string>>,
  scram?: ScramCredentialSource,
): SaslCredentialStore {
  return {
    plain: parsePlainUsers(raw['sasl.plain.users'] ?? ''),
    scram: scram ?? fixedScramCredentials(parseScramUsers(raw['sasl.scram.users'] ?? '')),
  }
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s, 'utf8').digest()
}

/** SASL/PLAIN (RFC 4616) with Kafka's checks and texts. */
export class PlainServer implements SaslServerMechanism {
  readonly mechanism = 'PLAIN'
  readonly #users: ReadonlyMap<string, string>
  #complete = false
  #user = ''

  constructor(users: ReadonlyMap<string, string>) {
    this.#users = users
  }

  get complete(): boolean {
    return this.#complete
  }

  get user(): string {
    return this.#user
  }

  evaluate(token: Uint8Array): Uint8Array {
    const parts = Buffer.from(token).toString('utf8').split('\u0000')
    if (parts.length !== 3) {
      const msg = `Invalid SASL/PLAIN response: expected 3 tokens, got ${parts.length}`
      throw new SaslFailure(msg, msg)
    }
    const [authzid, user, password] = parts
    if (user === '') {
      const msg = 'Authentication failed: username not specified'
      throw new SaslFailure(msg, msg)
    }
    if (password === '') {
      const msg = 'Authentication failed: password not specified'
      throw new SaslFailure(msg, msg)
    }
    const expected = this.#users.get(user)
    // Digests of equal length, so the comparison time says nothing about the password.
    const ok = expected !== undefined && timingSafeEqual(digest(expected), digest(password))
    if (!ok) {
      const msg = 'Authentication failed: Invalid username or password'
      throw new SaslFailure(expected === undefined ? 'unknown user' : 'wrong password', msg)
    }
    if (authzid !== '' && authzid !== user) {
      const msg =
        'Authentication failed: Client requested an authorization id that is different from username'
      throw new SaslFailure(msg, msg)
    }
    this.#user = user
    this.#complete = true
    return new Uint8Array(0)
  }
}

class ScramMechanismServer implements SaslServerMechanism {
  readonly mechanism: SaslMechanismName
  readonly #server: ScramServer

  constructor(server: ScramServer, mechanism: SaslMechanismName) {
    this.#server = server
    this.mechanism = mechanism
  }

  get complete(): boolean {
    return this.#server.complete
  }

  get user(): string {
    return this.#server.user
  }

  evaluate(token: Uint8Array): Uint8Array {
    return this.#server.evaluate(token)
  }
}

export function createMechanismServer(
  mechanism: SaslMechanismName,
  credentials: SaslCredentialStore,
): SaslServerMechanism {
  if (mechanism === 'PLAIN') return new PlainServer(credentials.plain)
  if (isScramMechanism(mechanism)) {
    return new ScramMechanismServer(
      // The lookup reads the credentials when the client-first message arrives: one stored or
      // deleted a moment before counts.
      new ScramServer(mechanism, credentials.scram.lookup(mechanism)),
      mechanism,
    )
  }
  throw new Error(`unsupported SASL mechanism ${mechanism as string}`)
}
