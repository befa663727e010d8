import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { describe, it } from 'node:test'
import { componentLogger, createLogger, errorMessages } from '../../src/server/logger.js'

function capture(): { lines: () => Record<string, unknown>[]; stream: Writable } {
  const chunks: string[] = []
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk))
      cb()
    },
  })
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  }
}

describe('createLogger', () => {
  it('writes one JSON object per line with a level name and an ISO time', () => {
    const out = capture()
    const log = createLogger({ destination: out.stream })
    log.info({ groupId: 'g1' }, 'hello')
    const [line] = out.lines()
    assert.equal(line.level, 'info')
    assert.equal(line.msg, 'hello')
    assert.equal(line.groupId, 'g1')
    assert.equal(line.pid, process.pid)
    assert.match(String(line.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  })

  it("writes an error's causes into its message once, and its stack with theirs", () => {
    const out = capture()
    const log = createLogger({ destination: out.stream })
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:1')
    const wrapped = new Error(`cannot open the storage: ${refused.message}`, { cause: refused })
    const outer = new Error('start-up failed', { cause: wrapped })
    log.error({ err: outer }, 'fatal')
    const err = out.lines()[0].err as { message: string; stack: string; type: string }
    assert.equal(err.type, 'Error')
    assert.equal(err.message, 'start-up failed: cannot open the storage: connect ECONNREFUSED 127.0.0.1:1')
    assert.match(err.stack, /caused by: Error: connect ECONNREFUSED/)
    // A cause its error does not quote is still named.
    log.error({ err: new Error('write failed', { cause: new Error('disk full') }) }, 'x')
    assert.equal((out.lines()[1].err as { message: string }).message, 'write failed: disk full')
  })

  it('drops messages below the level, and writes nothing when silent', () => {
    const out = capture()
    const log = createLogger({ level: 'warn', destination: out.stream })
    log.info('not written')
    log.warn('written')
    assert.deepEqual(
      out.lines().map((l) => l.msg),
      ['written'],
    )
    const quiet = capture()
    createLogger({ level: 'silent', destination: quiet.stream }).fatal('nothing')
    assert.deepEqual(quiet.lines(), [])
  })

  it('defaults to info', () => {
    assert.equal(createLogger({ destination: capture().stream }).level, 'info')
  })
})

describe('componentLogger', () => {
  it('prefixes messages Kafka-style and binds the same values as fields', () => {
    const out = capture()
    const log = componentLogger(createLogger({ destination: out.stream }), 'GroupMetadataManager', {
      partitionId: 3,
      epoch: 7n,
    })
    log.info({ groupId: 'app' }, 'Loaded 2 groups.')
    const [line] = out.lines()
    assert.equal(line.msg, '[GroupMetadataManager partitionId=3 epoch=7] Loaded 2 groups.')
    assert.equal(line.component, 'GroupMetadataManager')
    assert.equal(line.partitionId, 3)
    assert.equal(line.epoch, '7')
    assert.equal(line.groupId, 'app')
  })

  it('works without context fields', () => {
    const out = capture()
    componentLogger(createLogger({ destination: out.stream }), 'TopographServer').warn('x')
    assert.equal(out.lines()[0].msg, '[TopographServer] x')
  })
})

describe('errorMessages', () => {
  it('lists the cause chain outermost first, leaving out a cause the error before it quotes', () => {
    const root = new Error('ECONNRESET')
    const mid = new Error('query failed: ECONNRESET', { cause: root })
    assert.deepEqual(errorMessages(new Error('append failed', { cause: mid })), [
      'append failed',
      'query failed: ECONNRESET',
    ])
    assert.deepEqual(errorMessages('plain'), ['plain'])
    const loop = new Error('a')
    ;(loop as { cause?: unknown }).cause = loop
    assert.deepEqual(errorMessages(loop), ['a'])
  })
})
