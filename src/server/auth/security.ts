import { X509Certificate } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { SecureContextOptions, TlsOptions } from 'node:tls'
import { ConfigError } from '../../config/def.js'
import type { SecurityProtocol, TopographConfig } from '../config.js'
import type { SaslListenerSettings } from './authenticator.js'
import {
  credentialStoreFromConfig,
  SASL_MECHANISMS,
  type SaslCredentialStore,
  type SaslMechanismName,
  type ScramCredentialSource,
} from './sasl.js'

/**
 * Per-listener security: the protocol (`listener.security.protocol.map`), TLS options for SSL and
 * SASL_SSL, SASL settings for SASL_PLAINTEXT and SASL_SSL. Every `ssl.*` key and
 * `sasl.enabled.mechanisms` may be given for one listener as `listener.name.<name>.<key>` (the
 * listener name in lower case), which wins over the plain key, as in Kafka.
 */

/** A listener security setting that cannot be honoured (a failed start, like any config error). */
const securityConfigError = (message: string): ConfigError => new ConfigError(message, null)

export interface ListenerSecurity {
  readonly protocol: SecurityProtocol
  /** Set for SSL and SASL_SSL. */
  readonly tls: TlsOptions | null
  /** `ssl.client.auth` (none for non-TLS listeners). */
  readonly clientAuth: 'none' | 'requested' | 'required'
  /** Set for SASL_PLAINTEXT and SASL_SSL. */
  readonly sasl: SaslListenerSettings | null
}

/** The value of `key` for a listener: `listener.name.<name>.<key>`, else `key`, else undefined. */
export function listenerSetting(
  config: TopographConfig,
  listenerName: string,
  key: string,
): string | undefined {
  const prefixed = `listener.name.${listenerName.toLowerCase()}.${key}`
  const v = Object.hasOwn(config.raw, prefixed) ? config.raw[prefixed] : config.raw[key]
  return v === undefined ? undefined : v.trim()
}

function pemBlocks(text: string, label: RegExp): string[] {
  const out: string[] = []
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g
  for (let m = re.exec(text); m !== null; m = re.exec(text)) if (label.test(m[1])) out.push(m[0])
  return out
}

const KEY_LABEL = /^(?:ENCRYPTED |RSA |EC )?PRIVATE KEY$/
const CERT_LABEL = /^CERTIFICATE$/

function readPem(path: string, key: string): string {
  try {
    return readFileSync(path, 'utf8')
  } catch (err) {
    throw securityConfigError(`Cannot read ${key} ${path}: ${(err as Error).message}`)
  }
}

/** Builds Node's TLS server options from the Kafka `ssl.*` keys (PEM only). */
export function tlsOptionsFor(
  config: TopographConfig,
  listenerName: string,
): {
  tls: TlsOptions
  clientAuth: 'none' | 'requested' | 'required'
} {
  const get = (k: string) => listenerSetting(config, listenerName, k)
  const where = `listener ${listenerName}`
  for (const k of ['ssl.keystore.type', 'ssl.truststore.type']) {
    const type = get(k) ?? 'PEM'
    if (type.toUpperCase() !== 'PEM') {
      throw securityConfigError(
        `Invalid value ${type} for configuration ${k}: only PEM is supported (${where})`,
      )
    }
  }
  const location = get('ssl.keystore.location')
  const chain = get('ssl.keystore.certificate.chain')
  const inlineKey = get('ssl.keystore.key')
  let keyPem: string[]
  let certPem: string[]
  if (chain !== undefined || inlineKey !== undefined) {
    if (location !== undefined) {
      throw securityConfigError(
        `ssl.keystore.location and ssl.keystore.certificate.chain/ssl.keystore.key are both set (${where})`,
      )
    }
    keyPem = pemBlocks(inlineKey ?? '', KEY_LABEL)
    certPem = pemBlocks(chain ?? '', CERT_LABEL)
  } else if (location !== undefined) {
    const text = readPem(location, 'ssl.keystore.location')
    keyPem = pemBlocks(text, KEY_LABEL)
    certPem = pemBlocks(text, CERT_LABEL)
  } else {
    throw securityConfigError(
      `${where} uses TLS but neither ssl.keystore.location nor ssl.keystore.certificate.chain + ssl.keystore.key is set`,
    )
  }
  if (keyPem.length !== 1) {
    throw securityConfigError(
      `the key store of ${where} must hold exactly one PEM private key, found ${keyPem.length}`,
    )
  }
  if (certPem.length === 0) throw securityConfigError(`the key store of ${where} holds no PEM certificate`)

  const trustLocation = get('ssl.truststore.location')
  const trustInline = get('ssl.truststore.certificates')
  let ca: string[] | undefined
  if (trustLocation !== undefined && trustInline !== undefined) {
    throw securityConfigError(
      `ssl.truststore.location and ssl.truststore.certificates are both set (${where})`,
    )
  }
  if (trustLocation !== undefined)
    ca = pemBlocks(readPem(trustLocation, 'ssl.truststore.location'), CERT_LABEL)
  else if (trustInline !== undefined) ca = pemBlocks(trustInline, CERT_LABEL)
  if (ca !== undefined && ca.length === 0)
    throw securityConfigError(`the trust store of ${where} holds no PEM certificate`)

  const clientAuth = (get('ssl.client.auth') ?? 'none').toLowerCase()
  if (clientAuth !== 'none' && clientAuth !== 'requested' && clientAuth !== 'required') {
    throw securityConfigError(
      `Invalid value ${clientAuth} for configuration ssl.client.auth: String must be one of: required, requested, none (${where})`,
    )
  }
  if (clientAuth !== 'none' && ca === undefined) {
    throw securityConfigError(`ssl.client.auth=${clientAuth} needs a trust store (${where})`)
  }
  const protocols = (get('ssl.enabled.protocols') ?? 'TLSv1.2,TLSv1.3').split(',').map((s) => s.trim())
  for (const p of protocols) {
    if (p !== 'TLSv1.2' && p !== 'TLSv1.3') {
      throw securityConfigError(
        `Invalid value ${p} in ssl.enabled.protocols: only TLSv1.2 and TLSv1.3 are supported (${where})`,
      )
    }
  }
  const options: SecureContextOptions & TlsOptions = {
    key: keyPem[0],
    cert: certPem.join('\n'),
    passphrase: get('ssl.key.password'),
    ca,
    minVersion: protocols.includes('TLSv1.2') ? 'TLSv1.2' : 'TLSv1.3',
    maxVersion: protocols.includes('TLSv1.3') ? 'TLSv1.3' : 'TLSv1.2',
    requestCert: clientAuth !== 'none',
    rejectUnauthorized: clientAuth === 'required',
  }
  return { tls: options, clientAuth }
}

/** `sasl.enabled.mechanisms` for a listener, checked against what is served. */
export function saslMechanismsFor(config: TopographConfig, listenerName: string): SaslMechanismName[] {
  const text =
    listenerSetting(config, listenerName, 'sasl.enabled.mechanisms') ?? config.saslEnabledMechanisms.join(',')
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  if (list.length === 0)
    throw securityConfigError(`No SASL mechanisms are enabled (listener ${listenerName})`)
  for (const m of list) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(m)) {
      throw securityConfigError(
        `SASL mechanism ${m} is not supported (listener ${listenerName}); supported: ${SASL_MECHANISMS.join(', ')}`,
      )
    }
  }
  return list as SaslMechanismName[]
}

/**
 * Resolves the security of every listener; throws ConfigError on anything unusable. `scram`: where
 * SCRAM exchanges look credentials up (the server's credential store); default `sasl.scram.users`.
 */
export function resolveListenerSecurity(
  config: TopographConfig,
  scram?: ScramCredentialSource,
): Map<string, ListenerSecurity> {
  const out = new Map<string, ListenerSecurity>()
  let credentials: SaslCredentialStore | undefined
  for (const l of config.listeners) {
    const protocol =
      config.listenerSecurityProtocolMap.get(l.listenerName) ?? (l.listenerName as SecurityProtocol)
    if (!['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'].includes(protocol)) {
      throw securityConfigError(
        `No security protocol defined for listener ${l.listenerName}; add it to listener.security.protocol.map`,
      )
    }
    const usesTls = protocol === 'SSL' || protocol === 'SASL_SSL'
    const usesSasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL'
    const t = usesTls ? tlsOptionsFor(config, l.listenerName) : null
    let sasl: SaslListenerSettings | null = null
    if (usesSasl) {
      credentials ??= credentialStoreFromConfig(config.raw, scram)
      sasl = {
        mechanisms: saslMechanismsFor(config, l.listenerName),
        credentials,
        reauthMs: config.connectionsMaxReauthMs,
        failedAuthDelayMs: config.connectionFailedAuthenticationDelayMs,
        maxReceiveSize: config.saslServerMaxReceiveSize,
      }
    }
    out.set(l.listenerName, { protocol, tls: t?.tls ?? null, clientAuth: t?.clientAuth ?? 'none', sasl })
  }
  return out
}

/**
 * The principal of a TLS client certificate: `User:` + the subject distinguished name, most
 * specific attribute first and comma-separated (`User:CN=alice,O=Example,C=FR`), as Kafka's default
 * `ssl.principal.mapping.rules` gives it. Without a certificate: `User:ANONYMOUS`.
 */
export function principalFromCertificate(raw: Buffer | undefined): string {
  if (raw === undefined || raw.length === 0) return 'User:ANONYMOUS'
  const subject = new X509Certificate(raw).subject
  return `User:${subject.split('\n').reverse().join(',')}`
}
