/**
 * `--command-config FILE`: a Java properties file of client settings, as Kafka's tools read it.
 * The security keys (`security.protocol`, `sasl.*`, `ssl.*`) are passed to the admin client; keys
 * for Java-only machinery (callback handler classes, Kerberos, OAuth) are refused.
 */
import { readFileSync } from 'node:fs'
import { KafkaError } from '../../clients/network/errors.js'
import { type KafkaSecurityConfig, securityConfigFromProperties } from '../../clients/network/security.js'
import { parseProperties } from './options.js'

export interface CommandConfig {
  readonly properties: ReadonlyMap<string, string>
  readonly security: KafkaSecurityConfig
}

/** Reads and parses the file; a missing file is Kafka's NoSuchFileException. */
export function loadCommandConfig(file: string): CommandConfig {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (e) {
    throw new KafkaError(
      `${file} (${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'No such file or directory' : (e as Error).message})`,
      { javaClassName: 'java.nio.file.NoSuchFileException' },
    )
  }
  const properties = parseProperties(text)
  return { properties, security: securityConfigFromProperties(properties) }
}
