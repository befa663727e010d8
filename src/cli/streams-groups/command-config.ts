/**
 * `--command-config FILE`: a Java properties file of client settings, as Kafka's tools read it.
 * The security keys (`security.protocol`, `sasl.*`, `ssl.*`) are passed to the admin client; keys
 * for Java-only machinery (callback handler classes, Kerberos, OAuth) are refused.
 */
import { readFileSync } from 'node:fs'
import { type KafkaSecurityConfig, securityConfigFromProperties } from '../../clients/network/security.js'
import { parseProperties } from './options.js'

export interface CommandConfig {
  readonly properties: ReadonlyMap<string, string>
  readonly security: KafkaSecurityConfig
}

/**
 * A command config file that cannot be read. The message says why in Node's words;
 * `javaException` is Kafka's exception for it (`Files.newInputStream` and `Properties.load`),
 * `class: message` as Java's `toString()` gives it.
 */
export class CommandConfigReadError extends Error {
  override name = 'CommandConfigReadError'
  readonly javaException: string
  constructor(message: string, javaException: string, cause: unknown) {
    super(message, { cause })
    this.javaException = javaException
  }
}

function javaExceptionOf(file: string, code: string | undefined, message: string): string {
  switch (code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return `java.nio.file.NoSuchFileException: ${file}`
    case 'EACCES':
    case 'EPERM':
      return `java.nio.file.AccessDeniedException: ${file}`
    case 'EISDIR':
      return 'java.io.IOException: Is a directory'
    default:
      return `java.io.IOException: ${message}`
  }
}

/** Reads and parses the file; one that cannot be read is a CommandConfigReadError. */
export function loadCommandConfig(file: string): CommandConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    const message = (e as Error).message
    throw new CommandConfigReadError(
      `${file} (${code === 'ENOENT' ? 'No such file or directory' : message})`,
      javaExceptionOf(file, code, message),
      e,
    )
  }
  const properties = parseProperties(text)
  return { properties, security: securityConfigFromProperties(properties) }
}
