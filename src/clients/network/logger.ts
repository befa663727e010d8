/**
 * The logger the clients accept: pino's method shape (`logger.info(obj, msg)` or `logger.info(msg)`);
 * a console-like object works too. Missing levels are skipped.
 */
export interface LogFn {
  (obj: object, msg?: string): void
  (msg: string): void
}

export interface Logger {
  readonly debug?: LogFn
  readonly info?: LogFn
  readonly warn?: LogFn
  readonly error?: LogFn
}

/** Logs nothing. */
export const silentLogger: Logger = {}
