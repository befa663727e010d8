// Types of node-versions.mjs, for the TypeScript that imports it (bench/run.ts).
export declare const CACHE: string
/** The node binary of a major version: the running one, or one from the cache (fetched when missing). */
export declare function ensureNode(major: number): string
/** The environment a run on `bin` needs (PATH, and the better-sqlite3 addon redirect for its ABI). */
export declare function envFor(bin: string): NodeJS.ProcessEnv
