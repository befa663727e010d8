// SaslAuthenticate (key 36): serves v0–v2. On SASL listeners the connection's authenticator answers
// it (auth/authenticator.ts). One that reaches this handler came on a listener without SASL or
// after authentication completed: ILLEGAL_SASL_STATE with Kafka's message.
import { ErrorCode } from '../../protocol/errors.js'
import { createSaslAuthenticateResponse } from '../../protocol/generated/messages/SaslAuthenticateResponse.js'
import { defineHandler } from '../router.js'

export const handler = defineHandler({
  apiKey: 36,
  minVersion: 0,
  maxVersion: 2,
  handle() {
    return createSaslAuthenticateResponse({
      errorCode: ErrorCode.ILLEGAL_SASL_STATE,
      errorMessage: 'SaslAuthenticate request received after successful authentication',
    })
  },
  errorResponse(_request, errorCode) {
    return createSaslAuthenticateResponse({ errorCode })
  },
})
