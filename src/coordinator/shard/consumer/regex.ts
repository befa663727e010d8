/**
 * Subscription patterns (KIP-848 SubscribedTopicRegex). Kafka compiles them with RE2/J and a topic
 * matches when the whole name matches. Topograph runs them on JavaScript's RegExp after translating
 * the RE2 forms JavaScript spells differently and refusing what RE2 refuses, so a pattern a Kafka
 * broker rejects is rejected here too:
 *
 * - refused as RE2 refuses them: look-ahead and look-behind (`(?=`, `(?!`, `(?<=`, `(?<!`) and
 *   back-references (`\1`…`\9`, `\k<name>`);
 * - translated: named groups `(?P<name>…)`, leading flags `(?i)` `(?s)` `(?m)`, `\A` and `\z`,
 *   quoted text `\Q…\E`, and the POSIX classes `[[:alpha:]]` and the like inside brackets;
 * - refused although RE2 accepts them (docs/consumer-groups.md): Unicode classes `\p…`/`\P…`, flag
 *   groups other than at the start, and the `U` (ungreedy) flag.
 *
 * No native RE2 binding is used: topic names are short ASCII strings, every pattern is matched
 * against the catalog's names only, and a pattern runs in the shard, which must stay synchronous
 * and free of native calls that could block for long.
 */
import { ErrorCode } from '../../../protocol/errors.js'
import { ApiError } from '../api-error.js'

const POSIX: Readonly<Record<string, string>> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7F',
  blank: '\\t ',
  cntrl: '\\x00-\\x1F\\x7F',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
}

const invalid = (regex: string, why: string): ApiError =>
  new ApiError(
    ErrorCode.INVALID_REGULAR_EXPRESSION,
    `SubscribedTopicRegex \`${regex}\` is not a valid regular expression: ${why}.`,
  )

function escapeLiteral(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, (c) => `\\${c}`)
}

/** Translates an RE2 pattern into a JavaScript source and flags; throws INVALID_REGULAR_EXPRESSION. */
function translate(regex: string): { source: string; flags: string } {
  let flags = ''
  let i = 0
  const lead = /^\(\?([a-zA-Z]+)\)/.exec(regex)
  if (lead !== null) {
    for (const f of lead[1]!) {
      if (f === 'i' || f === 's' || f === 'm') {
        if (!flags.includes(f)) flags += f
      } else throw invalid(regex, `invalid or unsupported Perl syntax: \`(?${lead[1]}\``)
    }
    i = lead[0].length
  }
  let out = ''
  let inClass = false
  while (i < regex.length) {
    const c = regex[i]!
    if (c === '\\') {
      const n = regex[i + 1]
      if (n === undefined) throw invalid(regex, 'trailing backslash at end of expression')
      if (n === 'Q') {
        const end = regex.indexOf('\\E', i + 2)
        const literal = end === -1 ? regex.slice(i + 2) : regex.slice(i + 2, end)
        out += escapeLiteral(literal)
        i = end === -1 ? regex.length : end + 2
        continue
      }
      if (/[1-9]/.test(n) || n === 'k') throw invalid(regex, `invalid escape sequence: \`\\${n}\``)
      if (n === 'p' || n === 'P') throw invalid(regex, `unsupported Unicode class: \`\\${n}\``)
      if (!inClass && n === 'A') out += '^'
      else if (!inClass && n === 'z') out += '$'
      else out += `\\${n}`
      i += 2
      continue
    }
    if (inClass) {
      if (c === '[' && regex[i + 1] === ':') {
        const end = regex.indexOf(':]', i + 2)
        const name = end === -1 ? '' : regex.slice(i + 2, end)
        const negated = name.startsWith('^')
        const cls = POSIX[negated ? name.slice(1) : name]
        if (cls === undefined || negated)
          throw invalid(regex, `invalid character class range: \`[:${name}:]\``)
        out += cls
        i = end + 2
        continue
      }
      if (c === ']') inClass = false
      out += c
      i++
      continue
    }
    if (c === '[') {
      inClass = true
      out += c
      i++
      // A leading ']' (after an optional '^') is a literal in RE2.
      if (regex[i] === '^') {
        out += '^'
        i++
      }
      if (regex[i] === ']') {
        out += '\\]'
        i++
      }
      continue
    }
    if (c === '(' && regex[i + 1] === '?') {
      const rest = regex.slice(i + 2)
      if (rest.startsWith('P<')) {
        out += '(?<'
        i += 4
        continue
      }
      if (rest.startsWith(':')) {
        out += '(?:'
        i += 3
        continue
      }
      const what =
        rest.startsWith('=') || rest.startsWith('!') || rest.startsWith('<') ? 'lookaround' : 'flag group'
      throw invalid(regex, `invalid or unsupported Perl syntax (${what}): \`(?${rest.slice(0, 2)}\``)
    }
    out += c
    i++
  }
  return { source: out, flags }
}

/** Compiles a subscription pattern to a whole-name matcher; throws INVALID_REGULAR_EXPRESSION. */
export function compileTopicRegex(regex: string): RegExp {
  const { source, flags } = translate(regex)
  try {
    return new RegExp(`^(?:${source})$`, flags)
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^Invalid regular expression: /, '') : String(e)
    throw invalid(regex, why)
  }
}

/** Throws INVALID_REGULAR_EXPRESSION when the pattern is not valid (Kafka's check on a new pattern). */
export function throwIfRegularExpressionIsInvalid(regex: string): void {
  compileTopicRegex(regex)
}

/** The sorted names of `topicNames` the pattern matches as a whole; none for an invalid pattern. */
export function resolveTopicRegex(regex: string, topicNames: Iterable<string>): string[] {
  let re: RegExp
  try {
    re = compileTopicRegex(regex)
  } catch {
    return []
  }
  const out: string[] = []
  for (const name of topicNames) if (re.test(name)) out.push(name)
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
}
