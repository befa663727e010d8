// Headless Debian Chromium driven by playwright-core, with a fresh profile; closed by `close()`.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

/** Where screenshots go (gitignored). */
export const ARTIFACTS = join('.tmp', 'console')

export interface Browser {
  readonly context: BrowserContext
  close(): Promise<void>
}

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'topograph-chromium-'))
  mkdirSync(ARTIFACTS, { recursive: true })
  let context: BrowserContext
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      acceptDownloads: true,
      viewport: { width: 1400, height: 900 },
      timeout: 30_000,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
  } catch (e) {
    rmSync(profile, { recursive: true, force: true })
    throw e
  }
  return {
    context,
    close: async () => {
      try {
        await context.close()
      } finally {
        rmSync(profile, { recursive: true, force: true })
      }
    },
  }
}
