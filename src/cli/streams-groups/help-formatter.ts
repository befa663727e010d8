/**
 * The option help of Kafka's command-line tools: jopt-simple 5.0.4's BuiltinHelpFormatter (the
 * parser's default, overall width 80, column separator 2), with the line breaking of Java's
 * `BreakIterator.getLineInstance()` that it wraps descriptions with.
 *
 * Layout: options sorted by name (Java's `String.compareTo`), a header row `Option`/`Description`
 * (`Option (* = required)` when one is required), each row `--name <Type: description>` (`[…]` for an
 * optional argument, `String` as the type of a String option) and its description, with
 * `(default: v)` appended. Each cell is split at line separators, then wrapped at the column's width
 * at the line-break opportunities; continuation pieces are indented by two spaces. The column widths
 * are those of the widest cells (options at most (80 − 2) / 2), computed again after wrapping, and
 * every line is padded to both widths.
 */

/** One option as the help shows it. */
export interface HelpOption {
  readonly name: string
  readonly description: string
  /** 'none', or whether the option's argument is required (`<…>`) or optional (`[…]`) */
  readonly argument: 'none' | 'required' | 'optional'
  /** the argument's type (`String`, `Long`); `String` when absent */
  readonly argumentType?: string
  /** `describedAs` */
  readonly argumentDescription?: string
  readonly defaultValues?: readonly string[]
  readonly required?: boolean
}

// ---------------------------------------------------------------------------------------------
// Java's line BreakIterator: the JDK's LineBreakRules (words of prefix punctuation, a core of
// letters, one ideograph or a number, and a suffix of dashes or closing punctuation; words joined
// by non-breaking spaces, `$` or `'`; then spaces and one line break), matched as far as they go
// from each boundary. Format characters are passed over; the soft hyphen is a dash and control
// characters are spaces, as the JDK's compiled tables have them. Those tables also run a few words
// together that the rules would split, after `$` or `'` followed by dashes and punctuation
// (`'--)`, `$--.`); this follows the rules there.

type Pred = (cp: number) => boolean
type Rx =
  | { readonly k: 'c'; readonly p: Pred }
  | { readonly k: 'seq'; readonly a: readonly Rx[] }
  | { readonly k: 'alt'; readonly a: readonly Rx[] }
  | { readonly k: 'star'; readonly a: Rx }

const c = (p: Pred): Rx => ({ k: 'c', p })
const seq = (...a: Rx[]): Rx => ({ k: 'seq', a })
const alt = (...a: Rx[]): Rx => ({ k: 'alt', a })
const star = (a: Rx): Rx => ({ k: 'star', a })
const plus = (a: Rx): Rx => seq(a, star(a))
const opt = (a: Rx): Rx => alt(seq(), a)

/** A Unicode general-category test, remembered per code point. */
const gc = (re: RegExp): Pred => {
  const seen = new Map<number, boolean>()
  return (cp) => {
    let v = seen.get(cp)
    if (v === undefined) seen.set(cp, (v = re.test(String.fromCodePoint(cp))))
    return v
  }
}
const inRanges =
  (...ranges: Array<[number, number]>): Pred =>
  (cp) =>
    ranges.some(([lo, hi]) => cp >= lo && cp <= hi)
const oneOf = (chars: string): Pred => {
  const set = new Set([...chars].map((ch) => ch.codePointAt(0)!))
  return (cp) => set.has(cp)
}
const or =
  (...ps: Pred[]): Pred =>
  (cp) =>
    ps.some((p) => p(cp))
const not =
  (p: Pred): Pred =>
  (cp) =>
    !p(cp)
const and =
  (...ps: Pred[]): Pred =>
  (cp) =>
    ps.every((p) => p(cp))

const isBreak = oneOf('\u0003\t\n\f\u2028\u2029')
const isCr = oneOf('\r')
const isIgnore = and(gc(/^\p{Cf}$/u), not(oneOf('\u00ad')))
const isEnclosing = gc(/^[\p{Mn}\p{Me}]$/u)
const isDanda = oneOf('\u0964\u0965')
const isGlue = oneOf('\u00a0\u0f0c\u2007\u2011\u202f\ufeff')
const isSpace = and(gc(/^[\p{Zs}\p{Cc}]$/u), not(or(isGlue, isBreak, isCr)))
const isDash = and(or(gc(/^\p{Pd}$/u), oneOf('\u00ad')), not(isGlue))
const isPreWord = or(and(gc(/^[\p{Sc}\p{Ps}\p{Pi}]$/u), not(oneOf('\u00a2'))), oneOf('"\''))
const isPostWord = or(
  oneOf('"!%.,:;?\u00a2\u00b0\u066a\u2103\u2105\u2109\u3001\u3002\u3005'),
  gc(/^[\p{Pe}\p{Pf}]$/u),
  inRanges([0x2030, 0x2034], [0x3099, 0x309e], [0x30fc, 0x30fe]),
  oneOf(
    '\u3041\u3043\u3045\u3047\u3049\u3063\u3083\u3085\u3087\u308e\u30a1\u30a3\u30a5\u30a7\u30a9' +
      '\u30c3\u30e3\u30e5\u30e7\u30ee\u30f5\u30f6\uff01\uff05\uff0c\uff0e\uff1a\uff1b\uff1f',
  ),
)
const isKanji = and(
  inRanges(
    [0x4e00, 0x9fa5],
    [0xac00, 0xd7a3],
    [0xf900, 0xfa2d],
    [0xfa30, 0xfa6a],
    [0x3041, 0x3094],
    [0x30a1, 0x30fa],
  ),
  not(or(isPostWord, isIgnore)),
)
const isDigit = gc(/^[\p{Nd}\p{No}]$/u)
const isMidNum = oneOf('.,')
const isChar = not(
  or(isBreak, isSpace, isDash, isKanji, isGlue, isIgnore, isPreWord, isPostWord, isMidNum, isCr, isDanda),
)

const digits = plus(c(isDigit))
const NUMBER = seq(star(c(or(isPreWord, isDash))), digits, star(seq(c(isMidNum), digits)))
const WORD = seq(
  star(c(isPreWord)),
  alt(star(c(isChar)), c(isKanji), NUMBER),
  alt(plus(c(isDash)), star(c(isPostWord))),
)
const JOINER = alt(seq(star(c(isSpace)), plus(c(isGlue)), opt(c(isSpace))), c(oneOf("$'")))
const LINE_RULES = alt(
  seq(
    WORD,
    star(seq(JOINER, WORD)),
    star(c(isSpace)),
    opt(star(c(isEnclosing))),
    opt(seq(c(oneOf('(')), c(oneOf(')')), star(c(isPostWord)))),
    opt(star(c(isEnclosing))),
    opt(c(isCr)),
    opt(c(isBreak)),
  ),
  seq(c(isCr), c(isBreak)),
)

/** The positions (indexes into `cps`) at which `rx` can end, starting from any of `from`. */
function ends(rx: Rx, cps: readonly number[], from: ReadonlySet<number>): Set<number> {
  switch (rx.k) {
    case 'c': {
      const out = new Set<number>()
      for (const i of from) if (i < cps.length && rx.p(cps[i]!)) out.add(i + 1)
      return out
    }
    case 'seq': {
      let cur = new Set(from)
      for (const a of rx.a) {
        if (cur.size === 0) break
        cur = ends(a, cps, cur)
      }
      return cur
    }
    case 'alt': {
      const out = new Set<number>()
      for (const a of rx.a) for (const i of ends(a, cps, from)) out.add(i)
      return out
    }
    case 'star': {
      const out = new Set(from)
      let frontier: Set<number> = new Set(from)
      while (frontier.size > 0) {
        const next = new Set<number>()
        for (const i of ends(rx.a, cps, frontier)) if (!out.has(i)) next.add(i)
        for (const i of next) out.add(i)
        frontier = next
      }
      return out
    }
  }
}

/**
 * The line-break boundaries of `text` as Java's `BreakIterator.getLineInstance()` gives them
 * (UTF-16 offsets, from 0 to the length). From each boundary the rules are matched as far as they
 * go, ignorable characters (format and non-breaking control characters) being passed over; at
 * least one character is taken.
 */
export function lineBreaks(text: string): number[] {
  const units: number[] = [] // UTF-16 offset of each code point, then the length
  const all: number[] = []
  for (let i = 0; i < text.length; ) {
    const cp = text.codePointAt(i)!
    units.push(i)
    all.push(cp)
    i += cp > 0xffff ? 2 : 1
  }
  units.push(text.length)
  const out = [0]
  let pos = 0
  while (pos < all.length) {
    // The rules see the characters from `pos` on without the ignorable ones.
    const kept: number[] = []
    const index: number[] = [] // index into `all` of each kept character
    for (let i = pos; i < all.length; i++) {
      if (isIgnore(all[i]!)) continue
      kept.push(all[i]!)
      index.push(i)
    }
    const matched = Math.max(0, ...ends(LINE_RULES, kept, new Set([0])))
    // after the last matched character (at least one), and the ignorable characters that follow
    let end = matched === 0 ? pos + 1 : index[matched - 1]! + 1
    while (end < all.length && isIgnore(all[end]!)) end++
    pos = Math.max(end, pos + 1)
    out.push(units[pos]!)
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// jopt-simple's Rows and Columns

const INDENT = '  '

/** Java's `String.trim()`: code units up to U+0020 at both ends. */
function javaTrim(s: string): string {
  let a = 0
  let b = s.length
  while (a < b && s.charCodeAt(a) <= 0x20) a++
  while (b > a && s.charCodeAt(b - 1) <= 0x20) b--
  return s.slice(a, b)
}

/** Columns.piecesOf: split at line separators, then wrap each line at `width`. */
function piecesOf(raw: string, width: number): string[] {
  const pieces: string[] = []
  // Java's split drops trailing empty strings (and keeps a lone empty one).
  const lines = javaTrim(raw).split('\n')
  while (lines.length > 1 && lines[lines.length - 1] === '') lines.pop()
  for (const line of lines) {
    const bounds = lineBreaks(line)
    let next = ''
    for (let i = 1; i < bounds.length; i++) {
      const word = line.slice(bounds[i - 1], bounds[i])
      if (next.length + word.length > width) {
        pieces.push(next.replace(/[ \t\n\v\f\r]+$/, ''))
        next = INDENT + word
      } else next += word
    }
    if (next.length > 0) pieces.push(next)
  }
  return pieces
}

type Row = readonly [option: string, description: string]

class Rows {
  #rows: Row[] = []
  #widestOption = 0
  #widestDescription = 0

  constructor(
    private readonly overallWidth: number,
    private readonly separatorWidth: number,
  ) {}

  add(option: string, description: string): void {
    this.#rows.push([option, description])
    this.#widestOption = Math.max(this.#widestOption, option.length)
    this.#widestDescription = Math.max(this.#widestDescription, description.length)
  }

  #optionWidth(): number {
    return Math.min(Math.trunc((this.overallWidth - this.separatorWidth) / 2), this.#widestOption)
  }

  #descriptionWidth(): number {
    return Math.min(this.overallWidth - this.#optionWidth() - this.separatorWidth, this.#widestDescription)
  }

  fitToWidth(): void {
    const ow = this.#optionWidth()
    const dw = this.#descriptionWidth()
    const fitted: Row[] = []
    for (const [option, description] of this.#rows) {
      const options = piecesOf(option, ow)
      const descriptions = piecesOf(description, dw)
      for (let i = 0; i < Math.max(options.length, descriptions.length); i++)
        fitted.push([options[i] ?? '', descriptions[i] ?? ''])
    }
    this.#rows = []
    this.#widestOption = 0
    this.#widestDescription = 0
    for (const [o, d] of fitted) this.add(o, d)
  }

  render(): string {
    const ow = this.#optionWidth()
    const dw = this.#descriptionWidth()
    let out = ''
    for (const [o, d] of this.#rows) {
      out += o + ' '.repeat(Math.max(0, ow - o.length)) + ' '.repeat(this.separatorWidth)
      out += d + ' '.repeat(Math.max(0, dw - d.length)) + '\n'
    }
    return out
  }
}

/** Java's `String.compareTo`: UTF-16 code units. */
function compareJava(a: string, b: string): number {
  const n = Math.min(a.length, b.length)
  for (let i = 0; i < n; i++) {
    const d = a.charCodeAt(i) - b.charCodeAt(i)
    if (d !== 0) return d
  }
  return a.length - b.length
}

function optionDisplay(o: HelpOption): string {
  let s = (o.required === true ? '* ' : '') + (o.name.length > 1 ? '--' : '-') + o.name
  if (o.argument !== 'none' || (o.argumentDescription ?? '') !== '') {
    const [open, close] = o.argument === 'required' ? ['<', '>'] : ['[', ']']
    const desc = o.argumentDescription ?? ''
    s += ` ${open}${o.argumentType ?? 'String'}${desc === '' ? '' : `: ${desc}`}${close}`
  }
  return s
}

function descriptionDisplay(o: HelpOption): string {
  const defaults = o.defaultValues ?? []
  if (defaults.length === 0) return o.description
  const shown = defaults.length === 1 ? defaults[0]! : `[${defaults.join(', ')}]`
  return `${o.description} (default: ${shown})`.trim()
}

/** `OptionParser.printHelpOn`'s text for these options (jopt-simple's BuiltinHelpFormatter). */
export function formatHelp(options: readonly HelpOption[]): string {
  const rows = new Rows(80, 2)
  // A TreeSet ordered by name: the first of two options with one name is kept.
  const sorted: HelpOption[] = []
  for (const o of [...options].sort((a, b) => compareJava(a.name, b.name))) {
    if (sorted.length === 0 || sorted[sorted.length - 1]!.name !== o.name) sorted.push(o)
  }
  if (sorted.length === 0) rows.add('No options specified', '')
  else {
    if (sorted.some((o) => o.required === true)) {
      rows.add('Option (* = required)', 'Description')
      rows.add('---------------------', '-----------')
    } else {
      rows.add('Option', 'Description')
      rows.add('------', '-----------')
    }
    for (const o of sorted) rows.add(optionDisplay(o), descriptionDisplay(o))
  }
  rows.fitToWidth()
  return rows.render()
}
