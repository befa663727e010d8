/**
 * Client security settings: Kafka's client keys (`security.protocol`, `sasl.mechanism`,
 * `sasl.jaas.config`, `ssl.truststore.*`, `ssl.keystore.*`, …) or structured `ssl`/`sasl` options,
 * resolved once into what a connection needs (TLS options for node:tls, SASL credentials).
 * TLS material is PEM only: Node's TLS does not read Java key stores.
 */
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls'
import { KafkaError } from './errors.js'

export type SecurityProtocol = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL'
export type SaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'

export const SECURITY_PROTOCOLS: readonly SecurityProtocol[] = [
  'PLAINTEXT',
  'SSL',
  'SASL_PLAINTEXT',
  'SASL_SSL',
]
export const SASL_MECHANISMS: readonly SaslMechanism[] = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']

/** SASL credentials in code. */
export interface SaslOptions {
  readonly mechanism: SaslMechanism
  readonly username: string
  readonly password: string
}

/** TLS settings in code; every PEM value is the text (or bytes) itself, not a file name. */
export interface SslOptions {
  /** CA certificates the broker's certificate is checked against; Node's default CAs when absent */
  readonly ca?: string | Buffer | ReadonlyArray<string | Buffer>
  /** client certificate chain (leaf first), for brokers with ssl.client.auth */
  readonly cert?: string | Buffer
  /** the client certificate's private key */
  readonly key?: string | Buffer
  /** passphrase of an encrypted private key */
  readonly passphrase?: string
  /** check that the broker's certificate names the host connected to (default true) */
  readonly checkHostname?: boolean
  readonly minVersion?: 'TLSv1.2' | 'TLSv1.3'
  readonly maxVersion?: 'TLSv1.2' | 'TLSv1.3'
}

/** Kafka's client security keys, as in a `--command-config` properties file. */
export interface KafkaSecurityConfig {
  readonly 'security.protocol'?: string
  readonly 'sasl.mechanism'?: string
  readonly 'sasl.jaas.config'?: string
  /** Topograph's plain alternative to `sasl.jaas.config` */
  readonly 'sasl.username'?: string
  readonly 'sasl.password'?: string
  readonly 'ssl.truststore.type'?: string
  readonly 'ssl.truststore.location'?: string
  readonly 'ssl.truststore.certificates'?: string
  readonly 'ssl.truststore.password'?: string
  readonly 'ssl.keystore.type'?: string
  readonly 'ssl.keystore.location'?: string
  readonly 'ssl.keystore.certificate.chain'?: string
  readonly 'ssl.keystore.key'?: string
  readonly 'ssl.keystore.password'?: string
  readonly 'ssl.key.password'?: string
  readonly 'ssl.endpoint.identification.algorithm'?: string
  readonly 'ssl.enabled.protocols'?: string
}

/** The security part of every client's options: Kafka's keys, or `securityProtocol`/`ssl`/`sasl`. */
export interface SecurityOptions extends KafkaSecurityConfig {
  /** the protocol; by default TLS when `ssl` is set, SASL when `sasl` is set */
  readonly securityProtocol?: SecurityProtocol
  /** TLS: `true` for Node's defaults (system CAs, hostname verification) */
  readonly ssl?: SslOptions | boolean
  readonly sasl?: SaslOptions
}

/** What a connection needs: TLS options (null = plain TCP) and SASL credentials (null = none). */
export interface ResolvedSecurity {
  readonly protocol: SecurityProtocol
  readonly tls: ResolvedTls | null
  readonly sasl: SaslOptions | null
}

export interface ResolvedTls {
  readonly ca?: Array<string | Buffer>
  readonly cert?: string | Buffer
  readonly key?: string | Buffer
  readonly passphrase?: string
  readonly checkHostname: boolean
  readonly minVersion?: 'TLSv1.2' | 'TLSv1.3'
  readonly maxVersion?: 'TLSv1.2' | 'TLSv1.3'
}

export const KAFKA_SECURITY_KEYS: readonly (keyof KafkaSecurityConfig)[] = [
  'security.protocol',
  'sasl.mechanism',
  'sasl.jaas.config',
  'sasl.username',
  'sasl.password',
  'ssl.truststore.type',
  'ssl.truststore.location',
  'ssl.truststore.certificates',
  'ssl.truststore.password',
  'ssl.keystore.type',
  'ssl.keystore.location',
  'ssl.keystore.certificate.chain',
  'ssl.keystore.key',
  'ssl.keystore.password',
  'ssl.key.password',
  'ssl.endpoint.identification.algorithm',
  'ssl.enabled.protocols',
]

// Kafka client keys that select machinery this client does not have: refused rather than ignored.
const UNSUPPORTED_KEYS: Readonly<Record<string, string>> = {
  'sasl.client.callback.handler.class': 'Java callback handlers cannot be loaded',
  'sasl.login.callback.handler.class': 'Java callback handlers cannot be loaded',
  'sasl.login.class': 'Java login classes cannot be loaded',
  'sasl.kerberos.service.name': 'GSSAPI (Kerberos) is not supported',
  'sasl.oauthbearer.token.endpoint.url': 'OAUTHBEARER is not supported',
  'ssl.engine.factory.class': 'Java SSL engine factories cannot be loaded',
  'ssl.provider': 'Java security providers cannot be loaded',
}

/** Kafka's ConfigException. */
export function configError(message: string): KafkaError {
  return new KafkaError(message, {
    errorName: 'CONFIG',
    javaClassName: 'org.apache.kafka.common.config.ConfigException',
  })
}

/**
 * Picks the security keys out of client properties (a `--command-config` file). Keys this client
 * cannot honour (Java callback handlers, Kerberos, OAuth) are refused with a ConfigException.
 */
export function securityConfigFromProperties(
  props: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
): KafkaSecurityConfig {
  const entries: Array<[string, string]> =
    props instanceof Map ? [...props.entries()] : Object.entries(props as Record<string, string>)
  const out: Record<string, string> = {}
  for (const [k, v] of entries) {
    const why = UNSUPPORTED_KEYS[k]
    if (why !== undefined) throw configError(`${k} is not supported by this client: ${why}.`)
    if ((KAFKA_SECURITY_KEYS as readonly string[]).includes(k)) out[k] = v
  }
  return out as KafkaSecurityConfig
}

export interface JaasCredentials {
  readonly loginModule: string
  readonly options: ReadonlyMap<string, string>
}

const PLAIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule'
const SCRAM_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule'

/**
 * Parses one JAAS login-module entry, the form of `sasl.jaas.config`:
 * `<LoginModule class> <flag> [name=value …];` where a value is a bare word or a double-quoted
 * string (backslash escapes the next character). Error messages never repeat option values.
 */
export function parseJaasConfig(text: string): JaasCredentials {
  let i = 0
  const n = text.length
  const fail = (what: string): never => {
    throw configError(`Invalid sasl.jaas.config: ${what}`)
  }
  const skipSpace = (): void => {
    while (i < n && /\s/.test(text[i]!)) i++
  }
  const word = (): string => {
    const start = i
    while (i < n && /[A-Za-z0-9_.$\-/:+@*]/.test(text[i]!)) i++
    return text.slice(start, i)
  }
  skipSpace()
  const loginModule = word()
  if (loginModule === '') fail('expected a login module class name')
  skipSpace()
  const flag = word()
  if (!['required', 'requisite', 'sufficient', 'optional'].includes(flag)) {
    fail(`expected a control flag (required, requisite, sufficient, optional) after ${loginModule}`)
  }
  const options = new Map<string, string>()
  for (;;) {
    skipSpace()
    if (i >= n) fail('the login module entry must end with ";"')
    if (text[i] === ';') {
      i++
      break
    }
    const name = word()
    if (name === '') fail(`unexpected character at position ${i}`)
    skipSpace()
    if (text[i] !== '=') fail(`expected "=" after option ${name}`)
    i++
    skipSpace()
    let value: string
    if (text[i] === '"') {
      i++
      let v = ''
      for (;;) {
        if (i >= n) fail(`unterminated quoted value of option ${name}`)
        const c = text[i++]!
        if (c === '"') break
        if (c === '\\' && i < n) v += text[i++]!
        else v += c
      }
      value = v
    } else {
      value = word()
      if (value === '') fail(`option ${name} has no value`)
    }
    options.set(name, value)
  }
  skipSpace()
  if (i < n) fail('only one login module is allowed')
  return { loginModule, options }
}

function isMechanism(s: string): s is SaslMechanism {
  return (SASL_MECHANISMS as readonly string[]).includes(s)
}

function saslFromKeys(c: KafkaSecurityConfig): SaslOptions {
  const jaas = c['sasl.jaas.config']
  const plainUser = c['sasl.username']
  const plainPassword = c['sasl.password']
  let username: string | undefined
  let password: string | undefined
  let module: string | undefined
  if (jaas !== undefined && jaas.trim() !== '') {
    if (plainUser !== undefined || plainPassword !== undefined) {
      throw configError('sasl.jaas.config and sasl.username/sasl.password are both set; use one form')
    }
    const parsed = parseJaasConfig(jaas)
    module = parsed.loginModule
    if (module !== PLAIN_MODULE && module !== SCRAM_MODULE) {
      throw configError(
        `sasl.jaas.config: login module ${module} is not supported; use ${PLAIN_MODULE} or ${SCRAM_MODULE}`,
      )
    }
    username = parsed.options.get('username')
    password = parsed.options.get('password')
    if (username === undefined || password === undefined) {
      throw configError('sasl.jaas.config must set both username and password')
    }
  } else {
    username = plainUser
    password = plainPassword
    if (username === undefined || password === undefined) {
      throw configError(
        'SASL needs credentials: set sasl.jaas.config (PlainLoginModule or ScramLoginModule with username and password) or sasl.username and sasl.password',
      )
    }
  }
  let mechanism = c['sasl.mechanism']?.trim()
  if (mechanism === undefined || mechanism === '') {
    if (module !== PLAIN_MODULE) {
      throw configError(
        'sasl.mechanism is not set (Kafka’s default GSSAPI is not supported); use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512',
      )
    }
    mechanism = 'PLAIN'
  }
  if (!isMechanism(mechanism)) {
    throw configError(
      `sasl.mechanism ${mechanism} is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`,
    )
  }
  return { mechanism, username, password }
}

/** The PEM blocks of `text` with the given labels, in order. */
function pemBlocks(text: string, label: RegExp): string[] {
  const out: string[] = []
  for (const m of text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)) {
    if (label.test(m[1]!)) out.push(`${m[0]}\n`)
  }
  return out
}
const KEY_LABEL = /^(?:ENCRYPTED |RSA |EC )?PRIVATE KEY$/
const CERT_LABEL = /^CERTIFICATE$/

function readPemFile(path: string, key: string): string {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (e) {
    throw configError(`Failed to load ${key} ${path}: ${(e as Error).message}`)
  }
  if (!text.includes('-----BEGIN ')) {
    throw configError(
      `${key} ${path} is not a PEM file (JKS and PKCS12 stores are not supported; convert them to PEM, e.g. with openssl pkcs12 -nodes)`,
    )
  }
  return text
}

/** Kafka stores inline PEM in properties files with the line breaks sometimes replaced by spaces. */
function inlinePem(value: string): string {
  if (value.includes('\n')) return value
  return value.replace(
    /(-----BEGIN [A-Z0-9 ]+-----)([\s\S]*?)(-----END [A-Z0-9 ]+-----)/g,
    (_m, begin: string, body: string, end: string) =>
      `${begin}\n${body.trim().split(/\s+/).join('\n')}\n${end}\n`,
  )
}

const TLS_VERSIONS = ['TLSv1.2', 'TLSv1.3'] as const

function tlsFromKeys(c: KafkaSecurityConfig): ResolvedTls {
  for (const k of ['ssl.truststore.type', 'ssl.keystore.type'] as const) {
    const t = c[k]
    if (t !== undefined && t.trim().toUpperCase() !== 'PEM') {
      throw configError(
        `${k}=${t} is not supported: only PEM (Node's TLS does not read JKS or PKCS12 stores; convert them to PEM)`,
      )
    }
  }
  if (c['ssl.truststore.password'] !== undefined) {
    throw configError('ssl.truststore.password cannot be used with PEM trust stores')
  }
  if (c['ssl.keystore.password'] !== undefined) {
    throw configError(
      'ssl.keystore.password cannot be used with PEM key stores; ssl.key.password is the passphrase of an encrypted key',
    )
  }
  let ca: string[] | undefined
  const trustLocation = c['ssl.truststore.location']
  const trustInline = c['ssl.truststore.certificates']
  if (trustLocation !== undefined && trustInline !== undefined) {
    throw configError('ssl.truststore.location and ssl.truststore.certificates are both set; use one')
  }
  if (trustLocation !== undefined || trustInline !== undefined) {
    const text =
      trustLocation !== undefined
        ? readPemFile(trustLocation, 'ssl.truststore.location')
        : inlinePem(trustInline!)
    ca = pemBlocks(text, CERT_LABEL)
    if (ca.length === 0) {
      throw configError(
        `${trustLocation !== undefined ? 'ssl.truststore.location' : 'ssl.truststore.certificates'} holds no certificate`,
      )
    }
  }
  let cert: string | undefined
  let key: string | undefined
  const keyLocation = c['ssl.keystore.location']
  const chain = c['ssl.keystore.certificate.chain']
  const inlineKey = c['ssl.keystore.key']
  if (keyLocation !== undefined && (chain !== undefined || inlineKey !== undefined)) {
    throw configError(
      'ssl.keystore.location and ssl.keystore.certificate.chain/ssl.keystore.key are both set; use one form',
    )
  }
  if (keyLocation !== undefined || chain !== undefined || inlineKey !== undefined) {
    if (keyLocation === undefined && (chain === undefined || inlineKey === undefined)) {
      throw configError('ssl.keystore.certificate.chain and ssl.keystore.key must be set together')
    }
    const keyText =
      keyLocation !== undefined ? readPemFile(keyLocation, 'ssl.keystore.location') : inlinePem(inlineKey!)
    const certText = keyLocation !== undefined ? keyText : inlinePem(chain!)
    const keys = pemBlocks(keyText, KEY_LABEL)
    const certs = pemBlocks(certText, CERT_LABEL)
    const where = keyLocation !== undefined ? `ssl.keystore.location ${keyLocation}` : 'ssl.keystore.key'
    if (keys.length !== 1)
      throw configError(`${where} must hold exactly one private key, found ${keys.length}`)
    if (certs.length === 0) {
      throw configError(
        `${keyLocation !== undefined ? where : 'ssl.keystore.certificate.chain'} holds no certificate`,
      )
    }
    key = keys[0]
    cert = certs.join('')
  }
  const algorithm = c['ssl.endpoint.identification.algorithm']
  let checkHostname = true
  if (algorithm !== undefined) {
    const a = algorithm.trim().toLowerCase()
    if (a === '') checkHostname = false
    else if (a !== 'https') {
      throw configError(
        `ssl.endpoint.identification.algorithm=${algorithm} is not supported; use https or an empty value`,
      )
    }
  }
  let minVersion: ResolvedTls['minVersion']
  let maxVersion: ResolvedTls['maxVersion']
  const enabled = c['ssl.enabled.protocols']
  if (enabled !== undefined && enabled.trim() !== '') {
    const list = enabled.split(',').map((s) => s.trim())
    for (const p of list) {
      if (!(TLS_VERSIONS as readonly string[]).includes(p)) {
        throw configError(`ssl.enabled.protocols: ${p} is not supported; use TLSv1.2 and/or TLSv1.3`)
      }
    }
    const sorted = TLS_VERSIONS.filter((v) => list.includes(v))
    minVersion = sorted[0]
    maxVersion = sorted[sorted.length - 1]
  }
  const passphrase = c['ssl.key.password']
  return {
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined ? { cert, key } : {}),
    ...(passphrase !== undefined ? { passphrase } : {}),
    checkHostname,
    ...(minVersion !== undefined ? { minVersion, maxVersion } : {}),
  }
}

function tlsFromOptions(o: SslOptions | true): ResolvedTls {
  if (o === true) return { checkHostname: true }
  if ((o.cert === undefined) !== (o.key === undefined)) {
    throw configError('ssl.cert and ssl.key must be given together')
  }
  const ca = o.ca === undefined ? undefined : Array.isArray(o.ca) ? [...o.ca] : [o.ca as string | Buffer]
  return {
    ...(ca !== undefined ? { ca } : {}),
    ...(o.cert !== undefined ? { cert: o.cert, key: o.key } : {}),
    ...(o.passphrase !== undefined ? { passphrase: o.passphrase } : {}),
    checkHostname: o.checkHostname ?? true,
    ...(o.minVersion !== undefined ? { minVersion: o.minVersion } : {}),
    ...(o.maxVersion !== undefined ? { maxVersion: o.maxVersion } : {}),
  }
}

function hasKeys(c: KafkaSecurityConfig, prefix: string): boolean {
  return KAFKA_SECURITY_KEYS.some((k) => k.startsWith(prefix) && c[k] !== undefined)
}

/**
 * Resolves security options into what connections use. Kafka's keys follow Kafka: without
 * `security.protocol` the protocol is PLAINTEXT and the `ssl.*`/`sasl.*` keys are unused. The
 * structured options select their protocol themselves (`ssl` → TLS, `sasl` → SASL). Files named by
 * the keys are read here, so a missing file fails when the client is created.
 */
export function resolveSecurity(o: SecurityOptions): ResolvedSecurity {
  const keyed = o['security.protocol']?.trim().toUpperCase()
  if (keyed !== undefined && o.securityProtocol !== undefined && keyed !== o.securityProtocol) {
    throw configError(
      `securityProtocol ${o.securityProtocol} and security.protocol ${keyed} disagree; set one of them`,
    )
  }
  const sslObject = o.ssl !== undefined && o.ssl !== false ? o.ssl : undefined
  const explicit = o.securityProtocol ?? keyed
  let protocol: SecurityProtocol
  if (explicit !== undefined) {
    if (!(SECURITY_PROTOCOLS as readonly string[]).includes(explicit)) {
      throw configError(
        `Invalid value ${explicit} for configuration security.protocol: use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL`,
      )
    }
    protocol = explicit as SecurityProtocol
  } else {
    const tls = sslObject !== undefined
    const sasl = o.sasl !== undefined
    protocol = tls ? (sasl ? 'SASL_SSL' : 'SSL') : sasl ? 'SASL_PLAINTEXT' : 'PLAINTEXT'
  }
  const useTls = protocol === 'SSL' || protocol === 'SASL_SSL'
  const useSasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
  if (sslObject !== undefined && !useTls) {
    throw configError(`ssl options are set but security.protocol is ${protocol}`)
  }
  if (o.sasl !== undefined && !useSasl) {
    throw configError(`sasl options are set but security.protocol is ${protocol}`)
  }
  let tls: ResolvedTls | null = null
  if (useTls) {
    if (sslObject !== undefined && hasKeys(o, 'ssl.')) {
      throw configError('Both the ssl option and ssl.* keys are set; use one form')
    }
    tls = sslObject !== undefined ? tlsFromOptions(sslObject) : tlsFromKeys(o)
  }
  let sasl: SaslOptions | null = null
  if (useSasl) {
    if (o.sasl !== undefined && hasKeys(o, 'sasl.')) {
      throw configError('Both the sasl option and sasl.* keys are set; use one form')
    }
    if (o.sasl !== undefined) {
      if (!isMechanism(o.sasl.mechanism)) {
        throw configError(
          `sasl.mechanism ${String(o.sasl.mechanism)} is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`,
        )
      }
      sasl = { mechanism: o.sasl.mechanism, username: o.sasl.username, password: o.sasl.password }
    } else {
      sasl = saslFromKeys(o)
    }
  }
  return { protocol, tls, sasl }
}

/** node:tls options for a connection to `host:port`. */
export function tlsConnectOptions(tls: ResolvedTls, host: string, port: number): TlsConnectionOptions {
  return {
    host,
    port,
    // SNI carries host names only (RFC 6066).
    ...(isIP(host) === 0 ? { servername: host } : {}),
    ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
    ...(tls.cert !== undefined ? { cert: tls.cert, key: tls.key } : {}),
    ...(tls.passphrase !== undefined ? { passphrase: tls.passphrase } : {}),
    ...(tls.minVersion !== undefined ? { minVersion: tls.minVersion } : {}),
    ...(tls.maxVersion !== undefined ? { maxVersion: tls.maxVersion } : {}),
    rejectUnauthorized: true,
    ...(tls.checkHostname ? {} : { checkServerIdentity: () => undefined }),
  }
}

/** Only the security options of a larger options object. */
export function pickSecurityOptions(o: SecurityOptions): SecurityOptions {
  const out: Record<string, unknown> = {}
  for (const k of [...KAFKA_SECURITY_KEYS, 'securityProtocol', 'ssl', 'sasl'] as const) {
    if (o[k] !== undefined) out[k] = o[k]
  }
  return out as SecurityOptions
}
