/**
 * Which way imports run (CONVENTIONS.md, "Which way imports run"; docs/architecture.md, "Layers"):
 * composition (server/main.ts, app.ts, features.ts, cli) on top, the protocol plugins below it,
 * the core features below them, the shared layers at the bottom; no import cycles anywhere,
 * type-only imports included. Checked on every `npm test` by test/unit/import-graph.test.ts (which
 * prints each broken rule's comment: what to do instead), and by hand with
 * `npx depcruise server electron`; scripts/layer-report.ts counts how well the tree keeps to it.
 */
const PLUGINS = '^server/(forward-auth|ldap|app-passwords|presets|config-as-code|metrics|administrators|saml|radius|directory-sources|trust)/';
const SHARED = '^server/((http|db|mail|util|data-lifecycle|i18n|plugin-api)/|audit/record\\.ts$|(config|context|data-dir)\\.ts$)';
const COMPOSITION = '^server/((app|main|features|cli)\\.ts$|cli/)';
/** Core features: every other file under server/ (oauth, accounts, applications, people, groups, members, pages, …), new folders included. */
const NOT_CORE = `${PLUGINS}|${SHARED}|${COMPOSITION}`;

/**
 * The four layers as scripts/layer-report.ts counts them (a file is in the first that matches, in
 * the order composition, plugins, shared; everything else under server/ is a core feature).
 */
const LAYERS = { composition: COMPOSITION, plugins: PLUGINS, shared: SHARED };

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
      name: 'core-below-plugins',
      comment:
        'The core never imports a protocol plugin, not even a type: announce what happened through ctx.hooks, or read a registry ' +
        'the plugin fills in its setup (ctx.registries: application fields, account-page sections, admin routes, …), both in ' +
        'server/plugin-api/; the plugin imports the core, never the other way (docs/architecture.md, "How to add a protocol plugin").',
      severity: 'error',
      from: { path: '^server/', pathNot: NOT_CORE },
      to: { path: PLUGINS },
    },
    {
      name: 'features-below-composition',
      comment:
        'A feature or plugin never imports the composition above it (app.ts, main.ts, features.ts, cli/), not even a type: shared ' +
        'types live in server/context.ts or server/plugin-api/, and the composition passes down what a feature needs.',
      severity: 'error',
      from: { path: '^server/', pathNot: `${SHARED}|${COMPOSITION}` },
      to: { path: COMPOSITION },
    },
    {
      name: 'shared-below-composition',
      comment:
        'A shared layer (util, db, http, i18n, mail, audit/record.ts, config.ts, context.ts, plugin-api) never imports the ' +
        'composition (app.ts, main.ts, features.ts, cli/): move what both need down into the shared layer (util/ holds parseSwitch).',
      severity: 'error',
      from: { path: SHARED },
      to: { path: COMPOSITION },
    },
    {
      name: 'shared-below-features',
      comment:
        'A shared layer never imports a core feature or a plugin, not even a type: move the type or function it needs down into the ' +
        'shared layer, or let the feature hand it over through the app context (ctx.registries, ctx.hooks).',
      severity: 'error',
      from: { path: SHARED },
      to: { path: '^server/', pathNot: `${SHARED}|${COMPOSITION}` },
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
