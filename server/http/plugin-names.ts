/**
 * Fastify names every plugin it registers (for its start-up errors and timeouts). A plugin without
 * a `fastify.display-name` is first looked for among require.cache's modules, twice per
 * registration, before its function name is taken. Our plugins are named functions defined in ES
 * modules (or closures), never found there, so the scan only costs: under the test runner (~530
 * CommonJS modules loaded) it was 0.65 s of applications.test.ts's ~9 s, 9,100 scans for 35 apps
 * built (issue 45). Naming them here gives Fastify the name it would have ended with: the
 * function's name, or for a closure the first two lines of its source, as Fastify's own fallback.
 */
import type { FastifyInstance } from 'fastify';

const DISPLAY_NAME = Symbol.for('fastify.display-name');

/** Gives each plugin function registered on `app` or its children a display name. */
export function namePluginsOnRegister(app: FastifyInstance): void {
  const register = app.register;
  // Child instances are made with Object.create from their parent: they inherit this property.
  app.register = function (this: FastifyInstance, plugin: unknown, options?: unknown) {
    if (typeof plugin === 'function' && !Object.hasOwn(plugin, DISPLAY_NAME)) {
      const name = plugin.name || String(plugin).split('\n', 2).map((line) => line.trim()).join(' -- ');
      Object.defineProperty(plugin, DISPLAY_NAME, { value: name });
    }
    return (register as (this: FastifyInstance, plugin: unknown, options?: unknown) => unknown).call(this, plugin, options);
  } as FastifyInstance['register'];
}
