/** The TypeScript files under a folder, recursively (for tests that check source text). */
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'

export function sourceFiles(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const p = join(dir, name)
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p))
    else if (p.endsWith('.ts')) out.push(p)
  }
  return out
}
