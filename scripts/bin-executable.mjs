// Makes the package's commands (package.json "bin") executable after the build: tsc writes new
// files without the execute bits, and `./dist/src/cli/topograph.js` is run directly by its
// `#!` line (npm sets the bits itself only when it installs the package).
import { chmodSync, readFileSync } from 'node:fs'

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'))
for (const file of Object.values(pkg.bin)) chmodSync(new URL(`../${file}`, import.meta.url), 0o755)
