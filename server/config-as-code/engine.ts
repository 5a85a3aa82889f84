/**
 * Configuration as code's work — planning and applying a file (apply.ts), writing the
 * configuration out (document.ts), and the sections both read (sections.ts) — loaded with
 * `import()` on the first `GET /api/admin/config` or `POST /api/admin/config/apply`, not at start
 * (issue 45, docs/decisions/0369-lazy-feature-code.md; scripts/bundle/lazy-features.mjs `LAZY_FEATURES`).
 * The routes and their schemas stay registered at start (routes.ts).
 */
export { applyConfiguration } from './apply.js';
export { exportConfiguration, toYaml } from './document.js';
