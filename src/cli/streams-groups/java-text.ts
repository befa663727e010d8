/**
 * The text rules of the JVM that Kafka's offset reset depends on, so that the tool accepts and
 * refuses the same input: `String.split`, `Long.parseLong`/`Integer.parseInt`, Kafka's
 * `Utils.getDateTime` (a strict SimpleDateFormat), `java.time.Duration.parse`, and the Jackson CSV
 * format of the reset plan.
 */
import { JavaThrowable } from './io.js'

/** Java's `String.split` with a literal separator: trailing empty strings are dropped. */
export function javaSplit(s: string, sep: string): string[] {
  if (!s.includes(sep)) return [s]
  const parts = s.split(sep)
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop()
  return parts
}

const INTEGER = /^[+-]?[0-9]+$/

/** `Long.parseLong`: an optional sign and decimal digits within 64 bits; null otherwise. */
export function parseJavaLong(s: string): bigint | null {
  if (!INTEGER.test(s)) return null
  const v = BigInt(s)
  return v === BigInt.asIntN(64, v) ? v : null
}

/** `Integer.parseInt`: an optional sign and decimal digits within 32 bits; null otherwise. */
export function parseJavaInt(s: string): number | null {
  if (!INTEGER.test(s)) return null
  const v = BigInt(s)
  return v === BigInt.asIntN(32, v) ? Number(v) : null
}

// ---------------------------------------------------------------------------------------------
// Utils.getDateTime

/** java.text.ParseException, as the tool prints it inside a RuntimeException. */
function parseException(message: string): JavaThrowable {
  return new JavaThrowable(`java.text.ParseException: ${message}`)
}

const GREGORIAN_CUTOVER = { y: 1582, m: 10, d: 15 }

function before(a: { y: number; m: number; d: number }, b: { y: number; m: number; d: number }): boolean {
  return a.y !== b.y ? a.y < b.y : a.m !== b.m ? a.m < b.m : a.d < b.d
}

/**
 * Days since 1970-01-01 of a date in Java's default GregorianCalendar (Julian before 15 October
 * 1582, where 5–14 October 1582 do not exist); null for a date that calendar rejects.
 */
function epochDay(y: number, m: number, d: number): number | null {
  if (y < 1 || m < 1 || m > 12 || d < 1) return null
  const julian = before({ y, m, d }, GREGORIAN_CUTOVER)
  const leap = julian ? y % 4 === 0 : (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]!
  if (d > days) return null
  if (julian && !before({ y, m, d }, { y: 1582, m: 10, d: 5 })) return null
  const a = Math.floor((14 - m) / 12)
  const yy = y + 4800 - a
  const mm = m + 12 * a - 3
  const base = d + Math.floor((153 * mm + 2) / 5) + 365 * yy + Math.floor(yy / 4)
  const jdn = julian ? base - 32083 : base - Math.floor(yy / 100) + Math.floor(yy / 400) - 32045
  return jdn - 2440588
}

/**
 * The zone at the start of `text` as the ISO 8601 pattern letters parse it: `Z`, or a sign and two
 * hour digits, then (`XXX`) a colon and two minute digits. Returns the offset in minutes, or null.
 */
function zoneOffset(text: string, withMinutes: boolean): number | null {
  if (text.startsWith('Z')) return 0
  const m = (withMinutes ? /^([+-])([0-9]{2}):([0-9]{2})/ : /^([+-])([0-9]{2})/).exec(text)
  if (m === null) return null
  const hours = Number(m[2])
  const minutes = withMinutes ? Number(m[3]) : 0
  if (hours > 23 || minutes > 59) return null
  return (m[1] === '-' ? -1 : 1) * (hours * 60 + minutes)
}

/**
 * Kafka's `Utils.getDateTime`: `yyyy-MM-dd'T'HH:mm:ss.SSS` with a zone (`XXX`, then `X`; `Z` is
 * appended when the time part has no `+`, `-` or `Z`), parsed strictly as SimpleDateFormat does
 * (numbers of any length, fields in range, text after the zone ignored). Milliseconds since the
 * epoch, or the ParseException Kafka's tool reports.
 */
export function parseDateTime(input: string): bigint {
  const parts = javaSplit(input, 'T')
  if (parts.length < 2) {
    throw parseException("Error parsing timestamp. It does not contain a 'T' according to ISO8601 format")
  }
  const second = parts[1]!
  const timestamp = second.includes('+') || second.includes('-') || second.includes('Z') ? input : `${input}Z`
  // SimpleDateFormat skips spaces and tabs before each field.
  const fields =
    /^[ \t]*([0-9]+)-[ \t]*([0-9]+)-[ \t]*([0-9]+)T[ \t]*([0-9]+):[ \t]*([0-9]+):[ \t]*([0-9]+)\.[ \t]*([0-9]+)[ \t]*/.exec(
      timestamp,
    )
  const unparseable = parseException(`Unparseable date: "${timestamp}"`)
  if (fields === null) throw unparseable
  const [y, mo, d, h, mi, s, ms] = fields.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  if (h > 23 || mi > 59 || s > 59 || ms > 999) throw unparseable
  const day = epochDay(y, mo, d)
  if (day === null) throw unparseable
  const rest = timestamp.slice(fields[0].length)
  const offset = zoneOffset(rest, true) ?? zoneOffset(rest, false)
  if (offset === null) throw unparseable
  const local = BigInt(day) * 86_400_000n + BigInt(((h * 60 + mi) * 60 + s) * 1000 + ms)
  return local - BigInt(offset) * 60_000n
}

// ---------------------------------------------------------------------------------------------
// java.time.Duration.parse and Instant arithmetic

const NANOS = 1_000_000_000n
const LONG_MAX = (1n << 63n) - 1n
const LONG_MIN = -(1n << 63n)

function durationException(detail = ''): JavaThrowable {
  return new JavaThrowable(`Text cannot be parsed to a Duration${detail}`)
}

/**
 * `Duration.parse` (`PnDTnHnMn.nS`, case-insensitive, signs allowed on the whole and on each part,
 * no years, months or weeks). Returns nanoseconds, or throws the DateTimeParseException whose
 * message Kafka's tool prints.
 */
export function parseDuration(text: string): bigint {
  const m =
    /^([-+]?)P(?:([-+]?[0-9]+)D)?(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?$/i.exec(
      text,
    )
  if (m === null || m[3]?.toUpperCase() === 'T') throw durationException()
  const [, sign, days, , hours, minutes, seconds, fraction] = m
  if (days === undefined && hours === undefined && minutes === undefined && seconds === undefined) {
    throw durationException()
  }
  const part = (v: string | undefined, unit: bigint, name: string): bigint => {
    if (v === undefined) return 0n
    const n = BigInt(v)
    if (n > LONG_MAX || n < LONG_MIN || n * unit > LONG_MAX || n * unit < LONG_MIN)
      throw durationException(`: ${name}`)
    return n * unit
  }
  const secs =
    part(days, 86_400n, 'days') +
    part(hours, 3600n, 'hours') +
    part(minutes, 60n, 'minutes') +
    part(seconds, 1n, 'seconds')
  let nanos = fraction === undefined || fraction === '' ? 0n : BigInt(fraction.padEnd(9, '0'))
  if (seconds?.startsWith('-')) nanos = -nanos
  if (secs > LONG_MAX || secs < LONG_MIN) throw durationException(': overflow')
  const total = secs * NANOS + nanos
  return sign === '-' ? -total : total
}

// Instant's range, in seconds.
const INSTANT_MIN_SECONDS = -31557014167219200n
const INSTANT_MAX_SECONDS = 31556889864403199n

/** `Instant.ofEpochMilli(nowMs).minus(duration).toEpochMilli()`, with Java's failures. */
export function epochMillisMinus(nowMs: number, durationNanos: bigint): bigint {
  const nanos = BigInt(nowMs) * 1_000_000n - durationNanos
  const seconds = nanos >= 0n ? nanos / NANOS : -((-nanos + NANOS - 1n) / NANOS)
  if (seconds < INSTANT_MIN_SECONDS || seconds > INSTANT_MAX_SECONDS) {
    throw new JavaThrowable('Instant exceeds minimum or maximum instant')
  }
  const millis = nanos >= 0n ? nanos / 1_000_000n : -((-nanos + 999_999n) / 1_000_000n)
  if (millis > LONG_MAX || millis < LONG_MIN) throw new JavaThrowable('long overflow')
  return millis
}

// ---------------------------------------------------------------------------------------------
// The reset plan CSV (Kafka's CsvUtils, Jackson's CSV format without a header).

/** Jackson quotes a value longer than 24 characters or holding a character below `-`. */
function csvValue(s: string): string {
  let quote = s.length > 24
  for (let i = 0; !quote && i < s.length; i++) if (s.charCodeAt(i) < 0x2d) quote = true
  return quote ? `"${s.replace(/"/g, '""')}"` : s
}

/** One CSV record of strings and numbers, ending with a newline. */
export function csvLine(values: ReadonlyArray<string | number | bigint>): string {
  return `${values.map((v) => (typeof v === 'string' ? csvValue(v) : String(v))).join(',')}\n`
}

/** The fields of one CSV line (double quotes, `""` inside quotes); null when malformed. */
export function csvFields(line: string): string[] | null {
  const text = line.endsWith('\r') ? line.slice(0, -1) : line
  const out: string[] = []
  let i = 0
  for (;;) {
    let value = ''
    if (text[i] === '"') {
      i++
      for (;;) {
        if (i >= text.length) return null
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            value += '"'
            i += 2
            continue
          }
          i++
          break
        }
        value += text[i++]
      }
      if (i < text.length && text[i] !== ',') return null
    } else {
      const end = text.indexOf(',', i)
      value = end < 0 ? text.slice(i) : text.slice(i, end)
      i = end < 0 ? text.length : end
    }
    out.push(value)
    if (i >= text.length) return out
    i++ // the comma
  }
}
