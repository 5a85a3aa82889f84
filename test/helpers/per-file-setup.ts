/**
 * Setup file (vitest.config.ts), run before each test file: the clean-up hooks of the helper
 * modules earlier files of this worker loaded (test/helpers/per-file.ts). With isolated files the
 * list is empty here, as every file loads its helpers afresh.
 */
import { perFileHooks, registerPerFile } from './per-file.js';

for (const hooks of perFileHooks) registerPerFile(hooks);
