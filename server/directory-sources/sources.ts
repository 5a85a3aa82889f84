/**
 * What both the sources' service (service.ts, loaded at start) and the sync engine (engine.ts,
 * loaded on first use: issue 45, docs/decisions/0369-lazy-feature-code.md) need of a source: its
 * row or the 404, its service account's password, and the 503 of a source that cannot be reached.
 * A module of its own so that the engine imports nothing that imports it back.
 */
import type { AppContext } from '../context.js';
import type { DirectorySource } from '../db/schema.js';
import { notFound, Problem } from '../http/problem.js';
import { secretBox } from '../accounts/second-factor/secret-box.js';
import { findSource } from './queries.js';

/** What `Retry-After` suggests when a source is down. */
export const RETRY_AFTER_SECONDS = 30;

export const directoryUnavailable = (name: string) =>
  new Problem(503, 'directory_unavailable', `${name} cannot be reached, so passwords it keeps cannot be checked now. Try again in a moment.`, undefined, { 'retry-after': String(RETRY_AFTER_SECONDS) });

export const sourceNotFound = (id: string) => notFound('directory_source_not_found', `There is no directory source with id "${id}".`);

export async function sourceOrNotFound(ctx: AppContext, id: string): Promise<DirectorySource> {
  const source = await findSource(ctx.db, id);
  if (!source) throw sourceNotFound(id);
  return source;
}

/** The bind password in the clear, for a connection; null when the source binds anonymously. */
export function bindPasswordOf(ctx: AppContext, source: DirectorySource): string | null {
  return source.bindPasswordSealed === null ? null : secretBox(ctx).decrypt(source.bindPasswordSealed);
}
