// The test tiers and the rule that puts every test file in one of them. The rule looks only at the
// file's folder and name, so a new file lands in its tier without being listed anywhere:
//
//   interop  test/interop/**, test/third-party/**, or a name ending in .interop.test.ts:
//            third-party clients (kcat, KafkaJS, kafka-python) and Kafka's own Java clients and tools.
//   e2e      test/e2e/**, or a name ending in .e2e.test.ts anywhere under test/: anything that opens
//            a socket (a real server, a fake broker on loopback, an HTTP server), spawns a process
//            (the CLIs, a server process, esbuild, a browser) or needs PostgreSQL.
//   unit     every other *.test.ts: in-process code only. No sockets, no processes, no database;
//            the runner enforces it (scripts/lib/unit-guard.mjs), so a unit file that opens a
//            socket or spawns a process fails and says how to rename it.

export const TIERS = ['unit', 'e2e', 'interop']

/** The tier of a test file, given its path relative to the repository root (either slash). */
export function tierOf(path) {
  const p = path.replaceAll('\\', '/')
  if (/(^|\/)test\/(interop|third-party)\//.test(p) || p.endsWith('.interop.test.ts')) return 'interop'
  if (/(^|\/)test\/e2e\//.test(p) || p.endsWith('.e2e.test.ts')) return 'e2e'
  return 'unit'
}
