/**
 * Directory sources' engine, loaded with `import()` on first use, not at start (issue 45,
 * docs/decisions/0369-lazy-feature-code.md; scripts/bundle/lazy-features.mjs `LAZY_FEATURES`): sync runs
 * (sync.ts) and their writes (writes.ts), a source's test, its release when deleted, an
 * administrator's link of a person, and what a sign-in needs to find someone new in a source.
 * Loaded when a run starts (an administrator's, or the scheduler's for a source that is due), or
 * one of the others is asked for: a server without sources never loads it.
 */
export { findEntry, serviceConnection, startRun } from './sync.js';
export { createPeople } from './writes.js';
export { releaseSource } from './release.js';
export { testSource } from './test-source.js';
export { linkPerson } from './link.js';
