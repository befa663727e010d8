import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { FileLogStorage } from '../../src/log/file.js'
import { runLogContract } from './contract.js'

runLogContract('file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'topograph-log-'))
  return {
    storage: () => new FileLogStorage([join(dir, 'logs')]),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  }
})
