// The console's announced URL (consoleUrl, src/console/index.ts): what `topograph console` prints
// and `topograph start` logs, and what a user pastes into a browser.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { consoleUrl } from '../../src/console/index.js'

test('consoleUrl: the listener host as given, with the bound port', () => {
  assert.equal(consoleUrl('localhost', { host: '127.0.0.1', port: 8080 }), 'http://localhost:8080')
  assert.equal(consoleUrl('localhost', { host: '::1', port: 41234 }), 'http://localhost:41234')
  assert.equal(
    consoleUrl('console.example.com', { host: '10.0.0.5', port: 80 }),
    'http://console.example.com:80',
  )
  assert.equal(consoleUrl('127.0.0.1', { host: '127.0.0.1', port: 8081 }), 'http://127.0.0.1:8081')
})

test('consoleUrl: an IPv6 host in brackets', () => {
  assert.equal(consoleUrl('::1', { host: '::1', port: 8080 }), 'http://[::1]:8080')
})

test('consoleUrl: every interface (no host, 0.0.0.0 or ::) is announced as localhost', () => {
  // A browser on the same machine reaches every interface's listener at localhost; it refuses
  // http://0.0.0.0 and http://[::] (not addresses a page can be loaded from).
  assert.equal(consoleUrl('', { host: '::', port: 8080 }), 'http://localhost:8080')
  assert.equal(consoleUrl('', { host: '0.0.0.0', port: 8080 }), 'http://localhost:8080')
  assert.equal(consoleUrl('0.0.0.0', { host: '0.0.0.0', port: 8081 }), 'http://localhost:8081')
  assert.equal(consoleUrl('::', { host: '::', port: 8082 }), 'http://localhost:8082')
})
