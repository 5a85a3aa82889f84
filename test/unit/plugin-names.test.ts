import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { namePluginsOnRegister } from '../../server/http/plugin-names.js';

/** Fastify names a plugin in its refusals; this one mixes async and callback styles. */
async function mixesStyles(app: unknown, options: unknown, done: () => void): Promise<void> {
  done();
}

async function refusal(plugin: (app: unknown, options: unknown, done: () => void) => Promise<void>): Promise<string> {
  const app = Fastify();
  namePluginsOnRegister(app);
  // Registered on a child: children inherit the root's register.
  app.register(async function parent(child) {
    child.register(plugin as never);
  });
  const error = await app.ready().then(() => null, (e: Error) => e);
  await app.close();
  return `${(error as { code?: string } | null)?.code}: ${error?.message}`;
}

describe('plugin display names (server/http/plugin-names.ts)', () => {
  it('names a named plugin by its function name, as Fastify would', async () => {
    expect(await refusal(mixesStyles)).toBe(
      'FST_ERR_PLUGIN_INVALID_ASYNC_HANDLER: The mixesStyles plugin being registered mixes async and callback styles. Async plugin should not mix async and callback style.',
    );
    expect(Object.getOwnPropertyDescriptor(mixesStyles, Symbol.for('fastify.display-name'))?.value).toBe('mixesStyles');
  });

  it('names a closure by the first two lines of its source, as Fastify would', async () => {
    const closure = [async (app: unknown, options: unknown, done: () => void) => {
      done();
    }][0]!;
    expect(closure.name).toBe('');
    expect(await refusal(closure)).toBe(
      'FST_ERR_PLUGIN_INVALID_ASYNC_HANDLER: The async (app, options, done) => { -- done(); plugin being registered mixes async and callback styles. Async plugin should not mix async and callback style.',
    );
    expect(Object.getOwnPropertyDescriptor(closure, Symbol.for('fastify.display-name'))?.value).toBe('async (app, options, done) => { -- done();');
  });
});
