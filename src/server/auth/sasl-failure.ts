/**
 * A refused SASL exchange, whatever the mechanism. `clientMessage` is what Kafka sends the client as
 * is (its SaslAuthenticationException); null means Kafka's generic "invalid credentials" text.
 * `message` is the detail for the server log and never holds a secret. Its own type because the
 * authenticator acts on it: it answers SaslAuthenticate with SASL_AUTHENTICATION_FAILED and closes
 * the connection, where any other failure is a bug.
 */
export class SaslFailure extends Error {
  override name = 'SaslFailure'
  readonly clientMessage: string | null
  constructor(detail: string, clientMessage: string | null = null) {
    super(detail)
    this.clientMessage = clientMessage
  }
}
