/**
 * Kafka's Uuid as the protocol carries it in text: 16 bytes in base64url, 22 characters.
 */
import { randomUUID } from 'node:crypto'

/** The zero Uuid (Kafka's Uuid.ZERO_UUID): "no id". */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA'
/** The id Kafka reserves for its metadata topic (Uuid.METADATA_TOPIC_ID). */
const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ'

/**
 * A random Uuid as Kafka's Uuid.randomUuid() draws it (a version 4 UUID's bits): never the zero or
 * the metadata topic's id, and never one whose text starts with '-', which command lines would
 * take for an option.
 */
export function randomUuid(): string {
  for (;;) {
    const id = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url')
    if (id !== ZERO_UUID && id !== METADATA_TOPIC_ID && !id.startsWith('-')) return id
  }
}
