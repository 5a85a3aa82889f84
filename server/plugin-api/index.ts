/**
 * The plugin API (docs/architecture.md, "How to add a protocol plugin"). A protocol plugin (forward
 * auth, the LDAP directory, app passwords, presets, configuration as code, metrics, named
 * administrators; next SAML, RADIUS, directory sources, trust) is a `GatehousePlugin`: in `setup`
 * it listens to the core's hooks (`ctx.hooks`, hooks.ts) and fills the registries
 * (`ctx.registries`: registries.ts, application-fields.ts); its `routes` are registered with the
 * other features. The composition (server/features.ts) lists the plugins; `buildApp` sets each up
 * before any route is registered, then closes the registries. The core features never import a
 * plugin: .dependency-cruiser.cjs refuses it in `npm test`.
 */
import { Hooks } from './hooks.js';
import { Registries } from './registries.js';

export { Hooks, Registries };
export type * from './hooks.js';
export type * from './registries.js';
export type * from './application-fields.js';
export type * from './metrics.js';
