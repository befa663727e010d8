/**
 * What the kafka-streams-groups actions share: the output streams, the parsed options with the
 * admin client and timeout, Kafka's `printError`, its log lines, and the Java exceptions whose
 * `getMessage()` Kafka's tool prints ("Executing streams group command failed due to …").
 */
import type { Admin } from '../../clients/admin/index.js'
import { KafkaError } from '../../clients/network/errors.js'
import type { ParsedOptions } from './options.js'

export interface Io {
  out(s: string): void
  err(s: string): void
}

export interface CommandContext {
  readonly o: ParsedOptions
  readonly admin: Admin
  readonly io: Io
  /** `--timeout`, as the int Kafka's tool passes to each admin call */
  readonly timeoutMs: number
}

/** Kafka's `printError(msg, Optional.empty())`: an empty line, then `Error: msg`, on stdout. */
export function printError(io: Io, msg: string): void {
  io.out(`\nError: ${msg}\n`)
}

/** `printError(msg, Optional.of(e))`: the same, then the stack trace on stderr. */
export function printErrorWithTrace(io: Io, msg: string, e: unknown): void {
  printError(io, msg)
  io.err(`${stackOf(e)}\n`)
}

export function stackOf(e: unknown): string {
  return e instanceof Error ? (e.stack ?? String(e)) : String(e)
}

/**
 * A Throwable of the tool whose `getMessage()` is `message` (for example a RuntimeException that
 * wraps an ExecutionException, or a KafkaException rethrown from an ExecutionException).
 */
export class JavaThrowable extends Error {
  override name = 'JavaThrowable'
  /** the Java class of Kafka's exception, when known (the first line of its stack trace) */
  readonly javaClassName: string | undefined
  constructor(message: string, cause?: unknown, javaClassName?: string) {
    super(message, cause === undefined ? undefined : { cause })
    this.javaClassName = javaClassName
  }
}

/**
 * The stack trace as Java's `printStackTrace` starts it, `class: message` of the exception Kafka's
 * tool throws, followed by this process's frames. An admin failure that reaches the tool as it is
 * was thrown by `future.get()`, so Kafka's is an ExecutionException whose message is the cause's
 * `toString()`; a configuration error is thrown as it is.
 */
export function javaStackOf(e: unknown): string {
  let first: string | undefined
  if (e instanceof JavaThrowable) {
    if (e.javaClassName !== undefined) first = `${e.javaClassName}: ${e.message}`
  } else if (e instanceof KafkaError) {
    first =
      e.javaClassName === 'org.apache.kafka.common.config.ConfigException'
        ? e.toString()
        : `java.util.concurrent.ExecutionException: ${e.toString()}`
  }
  const stack = stackOf(e)
  if (first === undefined) return stack
  const frames = stack.split('\n').filter((l) => /^\s+at /.test(l))
  // the Kafka exceptions behind it, as Java's `Caused by:` lines (without their frames)
  const causes: string[] = []
  for (let c = (e as Error).cause; c instanceof KafkaError; c = c.cause)
    causes.push(`Caused by: ${c.toString()}`)
  return [first, ...frames, ...causes].join('\n')
}

/** Java's `Throwable.toString()` of an admin failure: `class: message`. */
export function javaToString(e: unknown): string {
  if (e instanceof KafkaError) return e.toString()
  if (e instanceof Error) return `${e.name}: ${e.message}`
  return String(e)
}

/**
 * `new RuntimeException(executionException)` for an admin future that failed with `cause`: its
 * message is the ExecutionException's `toString()`, which holds the cause's.
 */
export function runtimeOfExecution(cause: unknown): JavaThrowable {
  return new JavaThrowable(
    `java.util.concurrent.ExecutionException: ${javaToString(cause)}`,
    cause,
    'java.lang.RuntimeException',
  )
}

/**
 * Kafka's `catch (ExecutionException ee) { throw cause if a KafkaException, else new
 * RuntimeException(cause) }`: the cause's own message, or its `toString()`.
 */
export function rethrownCause(cause: unknown): JavaThrowable {
  if (cause instanceof KafkaError) return new JavaThrowable(cause.message, cause, cause.javaClassName)
  return new JavaThrowable(javaToString(cause), cause, 'java.lang.RuntimeException')
}

/** Awaits an admin future as `future.get()` inside `catch (…) { throw new RuntimeException(e) }`. */
export async function getOrRuntime<T>(p: Promise<T>): Promise<T> {
  try {
    return await p
  } catch (e) {
    throw runtimeOfExecution(e)
  }
}

const two = (n: number): string => String(n).padStart(2, '0')

/**
 * A log line as Kafka's tools write it to stderr (config/tools-log4j2.yaml: `[%d] %p %m (%c)%n`,
 * local time `yyyy-MM-dd HH:mm:ss,SSS`).
 */
export function logLine(
  io: Io,
  level: 'WARN' | 'ERROR',
  message: string,
  logger: string,
  now = new Date(),
): void {
  const d = `${now.getFullYear()}-${two(now.getMonth() + 1)}-${two(now.getDate())} ${two(now.getHours())}:${two(
    now.getMinutes(),
  )}:${two(now.getSeconds())},${String(now.getMilliseconds()).padStart(3, '0')}`
  io.err(`[${d}] ${level} ${message} (${logger})\n`)
}
