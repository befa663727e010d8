// The config kit (see def.ts).
export * from './def.js'
export * from './redact.js'
