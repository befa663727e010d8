// A logger that keeps the message of every INFO line (the others are dropped), for tests of what
// the server says.
import type { RuntimeLogger } from '../../src/coordinator/runtime/index.js'

export function infoMessages(): { readonly logger: RuntimeLogger; readonly messages: string[] } {
  const messages: string[] = []
  const logger: RuntimeLogger = {
    debug() {},
    info: (_obj, msg) => messages.push(msg),
    warn() {},
    error() {},
  }
  return { logger, messages }
}
