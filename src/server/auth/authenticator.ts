import type { Logger } from 'pino'
import { ErrorCode } from '../../protocol/errors.js'
import { DecodeError } from '../../protocol/errors-codec.js'
import { apiDefinition } from '../../protocol/generated/registry.js'
import { Reader } from '../../protocol/reader.js'
import type { AnswerOutput, DispatchResult } from '../connection.js'
import { encodeResponseFrame } from '../router.js'
import {
  createMechanismServer,
  type SaslCredentialStore,
  SaslFailure,
  type SaslMechanismName,
  type SaslServerMechanism,
} from './sasl.js'

/**
 * The SASL side of one connection on a SASL_PLAINTEXT or SASL_SSL listener (Kafka's
 * SaslServerAuthenticator), in front of the API router:
 *
 * 1. Before authentication only ApiVersions (once, before the handshake), SaslHandshake and then
 *    SaslAuthenticate are accepted. Any other request closes the connection without an answer, as
 *    does a frame above `sasl.server.max.receive.size`.
 * 2. SaslHandshake names an enabled mechanism: NONE and the enabled list; otherwise
 *    UNSUPPORTED_SASL_MECHANISM with the list, then close. Handshake v0 switches to raw SASL tokens
 *    (size-prefixed, no Kafka header), v1 to SaslAuthenticate requests.
 * 3. A refused exchange is answered with SASL_AUTHENTICATION_FAILED and Kafka's message after
 *    `connection.failed.authentication.delay.ms`, then the connection closes. The log line names
 *    the client address, the mechanism and the reason, never a password, proof or token.
 * 4. With `connections.max.reauth.ms` > 0 the session lasts that long (SessionLifetimeMs in
 *    SaslAuthenticate v1+). A client that authenticated with v1+ may re-authenticate with
 *    SaslHandshake + SaslAuthenticate; the mechanism and the principal must stay the same. The
 *    first request after the session expired closes the connection, as Kafka does.
 */

const API_VERSIONS = 18
const SASL_HANDSHAKE = 17
const SASL_AUTHENTICATE = 36

export interface SaslListenerSettings {
  /** `sasl.enabled.mechanisms` for the listener. */
  readonly mechanisms: readonly SaslMechanismName[]
  readonly credentials: SaslCredentialStore
  /** `connections.max.reauth.ms` (0 = sessions do not expire). */
  readonly reauthMs: number
  /** `connection.failed.authentication.delay.ms` */
  readonly failedAuthDelayMs: number
  /** `sasl.server.max.receive.size`: the frame bound before authentication. */
  readonly maxReceiveSize: number
}

export interface AuthenticatorHooks {
  readonly logger: Logger
  /** `host:port` of the client, for the log. */
  readonly remote: string
  readonly listenerName: string
  readonly now: () => number
  /** Called with `User:name` when an exchange completes. */
  setPrincipal(principal: string): void
  /** Changes the frame bound (sasl.server.max.receive.size before authentication). */
  setMaxFrameSize(bytes: number): void
  /** The bound after authentication (socket.request.max.bytes). */
  readonly maxFrameSize: number
}

type State =
  | 'handshake-or-versions'
  | 'handshake'
  | 'authenticate'
  | 'authenticate-raw'
  | 'complete'
  | 'failed'

interface Header {
  readonly apiKey: number
  readonly apiVersion: number
  readonly correlationId: number
  readonly reader: Reader
}

export class SaslAuthenticator {
  readonly #settings: SaslListenerSettings
  readonly #hooks: AuthenticatorHooks
  #state: State = 'handshake-or-versions'
  #server: SaslServerMechanism | undefined
  #mechanism: SaslMechanismName | undefined
  /** Set while re-authenticating: the principal and mechanism of the session being renewed. */
  #previous: { readonly principal: string; readonly mechanism: SaslMechanismName } | undefined
  #badReauthMechanism: string | null = null
  #principal: string | null = null
  #clientSupportsReauth = false
  #expiresAt: number | null = null

  constructor(settings: SaslListenerSettings, hooks: AuthenticatorHooks) {
    this.#settings = settings
    this.#hooks = hooks
    hooks.setMaxFrameSize(settings.maxReceiveSize)
  }

  get authenticated(): boolean {
    return this.#principal !== null
  }

  /** Handles one frame; `next` is the API router, used once the request is allowed through. */
  dispatch(
    frame: Uint8Array,
    next: (frame: Uint8Array, out?: AnswerOutput) => DispatchResult,
    out?: AnswerOutput,
  ): DispatchResult {
    switch (this.#state) {
      case 'failed':
        return { kind: 'close', reason: 'authentication failed' }
      case 'authenticate-raw':
        return this.#rawToken(frame)
      case 'complete': {
        if (this.#expiresAt !== null && this.#hooks.now() >= this.#expiresAt) {
          return { kind: 'close', reason: 'SASL session expired (connections.max.reauth.ms)' }
        }
        if (frame.byteLength >= 2 && readApiKey(frame) === SASL_HANDSHAKE && this.#clientSupportsReauth) {
          const header = parseHeader(frame)
          if (header === null) return { kind: 'close', reason: 'request header malformed' }
          this.#previous = {
            principal: this.#principal as string,
            mechanism: this.#mechanism as SaslMechanismName,
          }
          this.#state = 'handshake'
          return this.#handshake(header)
        }
        return next(frame, out)
      }
      default:
        break
    }
    const header = parseHeader(frame)
    if (header === null)
      return { kind: 'close', reason: 'request header malformed during SASL authentication' }
    const name = apiDefinition(header.apiKey)?.name ?? String(header.apiKey)
    if (this.#state === 'authenticate') {
      if (header.apiKey !== SASL_AUTHENTICATE) {
        return {
          kind: 'close',
          reason: `Unexpected Kafka request of type ${name} during SASL authentication.`,
        }
      }
      return this.#authenticate(header)
    }
    // handshake-or-versions, handshake
    if (header.apiKey === API_VERSIONS && this.#state === 'handshake-or-versions') {
      this.#state = 'handshake'
      return next(frame, out)
    }
    if (header.apiKey !== SASL_HANDSHAKE) {
      return { kind: 'close', reason: `Unexpected Kafka request of type ${name} during SASL handshake.` }
    }
    return this.#handshake(header)
  }

  #handshake(h: Header): DispatchResult {
    const def = apiDefinition(SASL_HANDSHAKE)!
    if (h.apiVersion < def.minVersion || h.apiVersion > def.maxVersion) {
      return { kind: 'close', reason: `Version ${h.apiVersion} is not supported for apiKey SaslHandshake` }
    }
    let mechanism: string
    try {
      mechanism = (def.readRequest(h.reader, h.apiVersion) as { mechanism: string }).mechanism
    } catch (err) {
      if (err instanceof DecodeError)
        return { kind: 'close', reason: `SaslHandshake malformed: ${err.message}` }
      throw err
    }
    const enabled = this.#settings.mechanisms
    const respond = (errorCode: number) =>
      encodeResponseFrame(def, h.apiVersion, h.correlationId, { errorCode, mechanisms: [...enabled] })
    if (!(enabled as readonly string[]).includes(mechanism)) {
      this.#state = 'failed'
      this.#logFailure(mechanism, `Unsupported SASL mechanism ${mechanism}`)
      return {
        kind: 'response',
        bytes: respond(ErrorCode.UNSUPPORTED_SASL_MECHANISM),
        closeAfter: `Unsupported SASL mechanism ${mechanism}`,
      }
    }
    const mech = mechanism as SaslMechanismName
    if (this.#previous !== undefined && this.#previous.mechanism !== mech) {
      // Kafka answers the handshake and refuses the SaslAuthenticate that follows.
      this.#badReauthMechanism = `SASL mechanism '${mech}' requested by client is not supported for re-authentication of mechanism '${this.#previous.mechanism}'`
    } else {
      this.#badReauthMechanism = null
    }
    this.#mechanism = this.#previous?.mechanism ?? mech
    this.#server = createMechanismServer(mech, this.#settings.credentials)
    this.#state = h.apiVersion === 0 ? 'authenticate-raw' : 'authenticate'
    return { kind: 'response', bytes: respond(ErrorCode.NONE) }
  }

  #authenticate(h: Header): DispatchResult {
    const def = apiDefinition(SASL_AUTHENTICATE)!
    if (h.apiVersion < def.minVersion || h.apiVersion > def.maxVersion) {
      return { kind: 'close', reason: `Version ${h.apiVersion} is not supported for apiKey SaslAuthenticate` }
    }
    let authBytes: Uint8Array
    try {
      authBytes = (def.readRequest(h.reader, h.apiVersion) as { authBytes: Uint8Array }).authBytes
    } catch (err) {
      if (err instanceof DecodeError)
        return { kind: 'close', reason: `SaslAuthenticate malformed: ${err.message}` }
      throw err
    }
    if (h.apiVersion > 0) this.#clientSupportsReauth = true
    const frame = (body: Record<string, unknown>) =>
      encodeResponseFrame(def, h.apiVersion, h.correlationId, {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        authBytes: new Uint8Array(0),
        sessionLifetimeMs: 0n,
        ...body,
      })
    try {
      if (this.#badReauthMechanism !== null) {
        throw new SaslFailure(this.#badReauthMechanism, this.#badReauthMechanism)
      }
      const server = this.#server as SaslServerMechanism
      const response = server.evaluate(authBytes)
      let lifetime = 0
      if (server.complete) lifetime = this.#complete(server)
      return { kind: 'response', bytes: frame({ authBytes: response, sessionLifetimeMs: BigInt(lifetime) }) }
    } catch (err) {
      if (!(err instanceof SaslFailure)) throw err
      const message =
        err.clientMessage ??
        `Authentication failed during ${this.#previous === undefined ? 'authentication' : 're-authentication'} due to invalid credentials with SASL mechanism ${this.#server?.mechanism}`
      return this.#fail(
        err.message,
        frame({ errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message }),
        message,
      )
    }
  }

  /** SaslHandshake v0: the frame is a bare SASL token, and so is the answer. */
  #rawToken(token: Uint8Array): DispatchResult {
    const server = this.#server as SaslServerMechanism
    try {
      const response = server.evaluate(token)
      if (server.complete) this.#complete(server)
      const out = Buffer.allocUnsafe(4 + response.byteLength)
      out.writeInt32BE(response.byteLength, 0)
      out.set(response, 4)
      return { kind: 'response', bytes: out }
    } catch (err) {
      if (!(err instanceof SaslFailure)) throw err
      this.#state = 'failed'
      this.#logFailure(server.mechanism, err.clientMessage ?? err.message, err.message)
      return { kind: 'close', reason: 'SASL authentication failed' }
    }
  }

  /** The exchange succeeded: set the principal and the session expiry. Returns the lifetime. */
  #complete(server: SaslServerMechanism): number {
    const principal = `User:${server.user}`
    if (this.#previous !== undefined && this.#previous.principal !== principal) {
      const [pt, pn] = splitPrincipal(this.#previous.principal)
      const [nt, nn] = splitPrincipal(principal)
      const msg = `Cannot change principals during re-authentication from ${pt}.${pn}: ${nt}.${nn}`
      throw new SaslFailure(msg, msg)
    }
    this.#principal = principal
    this.#hooks.setPrincipal(principal)
    this.#hooks.setMaxFrameSize(this.#hooks.maxFrameSize)
    this.#state = 'complete'
    const reauth = this.#settings.reauthMs
    this.#expiresAt = reauth > 0 ? this.#hooks.now() + reauth : null
    this.#hooks.logger.debug(
      {
        remote: this.#hooks.remote,
        listener: this.#hooks.listenerName,
        mechanism: server.mechanism,
        principal,
        reauthentication: this.#previous !== undefined,
      },
      `Successful ${this.#previous === undefined ? 'authentication' : 're-authentication'} of ${principal} with ${server.mechanism}`,
    )
    this.#previous = undefined
    return Math.max(reauth, 0)
  }

  #fail(detail: string, bytes: Uint8Array, message: string): DispatchResult {
    this.#state = 'failed'
    this.#logFailure(this.#server?.mechanism ?? 'unknown', message, detail)
    const result: DispatchResult = { kind: 'response', bytes, closeAfter: 'SASL authentication failed' }
    const delay = this.#settings.failedAuthDelayMs
    if (delay <= 0) return result
    return {
      kind: 'pending',
      promise: new Promise((resolve) => setTimeout(() => resolve(result), delay)),
    }
  }

  #logFailure(mechanism: string, message: string, detail?: string): void {
    this.#hooks.logger.info(
      { remote: this.#hooks.remote, listener: this.#hooks.listenerName, mechanism, detail },
      `Failed authentication with ${this.#hooks.remote} (${message})`,
    )
  }
}

function splitPrincipal(p: string): [string, string] {
  const i = p.indexOf(':')
  return [p.slice(0, i), p.slice(i + 1)]
}

function readApiKey(frame: Uint8Array): number {
  return (((frame[0] << 8) | frame[1]) << 16) >> 16
}

/** Request header v1/v2, leaving the reader at the body; null when it cannot be parsed. */
function parseHeader(frame: Uint8Array): Header | null {
  if (frame.byteLength < 8) return null
  const reader = new Reader(frame)
  try {
    const apiKey = reader.readInt16()
    const apiVersion = reader.readInt16()
    const correlationId = reader.readInt32()
    reader.readNullableString()
    const def = apiDefinition(apiKey)
    const first = def?.firstFlexibleVersion ?? null
    if (first !== null && apiVersion >= first) {
      const n = reader.readUVarint()
      for (let i = 0; i < n; i++) {
        reader.readUVarint()
        reader.readRaw(reader.readTaggedSize())
      }
    }
    return { apiKey, apiVersion, correlationId, reader }
  } catch (err) {
    if (err instanceof DecodeError) return null
    throw err
  }
}
