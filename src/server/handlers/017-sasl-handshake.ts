// SaslHandshake (key 17): serves v0–v1. On SASL_PLAINTEXT and SASL_SSL listeners the connection's
// authenticator answers it (auth/authenticator.ts) before the router sees it. A handshake that
// reaches this handler arrived on a listener without SASL, or after authentication from a client
// that cannot re-authenticate: ILLEGAL_SASL_STATE, as Kafka's request handler answers it.
import { ErrorCode } from '../../protocol/errors.js'
import { createSaslHandshakeResponse } from '../../protocol/generated/messages/SaslHandshakeResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 17,
  minVersion: 0,
  maxVersion: 1,
  handle() {
    return createSaslHandshakeResponse({ errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] })
  },
  errorResponse(_request, errorCode) {
    return createSaslHandshakeResponse({ errorCode, mechanisms: [] })
  },
})
