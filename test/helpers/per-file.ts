/**
 * Clean-up hooks a helper module needs in every test file that uses it (closing the apps, servers
 * and listeners it made). Registered at once for the file whose collection loads the helper, and
 * kept here so that test/helpers/per-file-setup.ts registers them again for each later file: in a
 * project whose files share their modules (`isolate: false`: unit and unit-postgres) a helper
 * module is evaluated once per worker, so its top-level hooks would serve the worker's first file
 * only (decisions 0441 and 0483).
 */
import { afterAll, afterEach } from 'vitest';

export interface PerFileHooks {
  afterEach?: () => unknown;
  afterAll?: () => unknown;
}

export const perFileHooks: PerFileHooks[] = [];

export function perFile(hooks: PerFileHooks): void {
  perFileHooks.push(hooks);
  registerPerFile(hooks);
}

export function registerPerFile(hooks: PerFileHooks): void {
  if (hooks.afterEach) afterEach(hooks.afterEach);
  if (hooks.afterAll) afterAll(hooks.afterAll);
}
