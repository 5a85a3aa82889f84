/**
 * Which way imports run (CONVENTIONS.md, "Which way imports run"): composition (server/main.ts,
 * app.ts, features.ts, cli) on top, feature folders below it, shared layers at the bottom; no
 * import cycles anywhere, type-only imports included. Checked on every `npm test` by
 * test/unit/import-graph.test.ts, and by hand with `npx depcruise server electron`.
 */
const FEATURES = '^server/(oauth|accounts|applications|members|invitations|api-keys|webhooks|self-service|pages|admin-panel|ops|people|groups|activity|administrators|forward-auth|config-as-code)/';
const SHARED = '^server/((http|db|mail|util|data-lifecycle|i18n|metrics)/|audit/record\\.ts$|(config|context|data-dir)\\.ts$)';
const COMPOSITION = '^server/((app|main|features|cli)\\.ts$|cli/)';

/**
 * The four layers as scripts/layer-report.ts counts them (a file is in the first that matches, in
 * the order composition, plugins, shared; everything else under server/ is a core feature).
 */
const LAYERS = {
  composition: COMPOSITION,
  plugins: '^server/(forward-auth|ldap|app-passwords|presets|config-as-code|metrics|administrators|saml|radius|directory-sources|trust)/',
  shared: '^server/((http|db|mail|util|data-lifecycle|i18n|plugin-api)/|audit/record\\.ts$|(config|context|data-dir)\\.ts$)',
};

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'A loop of imports is a sign that a rule lives in two places: move what both sides need into a lower module.',
      severity: 'error',
      from: { path: '^(server|electron)/' },
      to: { circular: true },
    },
    {
      name: 'features-below-composition',
      comment: 'A feature never imports the composition above it, not even a type: shared types live in server/context.ts.',
      severity: 'error',
      from: { path: FEATURES },
      to: { path: COMPOSITION },
    },
    {
      name: 'shared-below-features',
      comment:
        'Shared layers stand under the features. Two known exceptions, older than this rule: the admin guard ' +
        'authenticates API keys (http/admin-auth.ts), and the context names the code store type (context.ts).',
      severity: 'error',
      from: { path: SHARED, pathNot: '^server/(http/admin-auth|context)\\.ts$' },
      to: { path: FEATURES },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
// Not a dependency-cruiser setting (its schema would refuse an unknown key): read by scripts/layer-report.ts.
Object.defineProperty(module.exports, 'layers', { value: LAYERS, enumerable: false });
