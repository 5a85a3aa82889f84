/**
 * How the dependency patches' tests (scripts/bundle/dependency-patches.mjs) see a patch: a small
 * CommonJS entry that loads the patched package is bundled as the server's bundle loads it, with
 * and without the patch's plugin, and each bundle runs in a child Node that prints one JSON line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

export interface PatchedBundles {
  /** Bundles the entry with `plugins` into `file` (in the temporary folder). */
  bundle(plugins: Plugin[], file: string): Promise<void>;
  /** Runs `file` with `nodeArgs` and parses the one JSON line it prints. */
  run(file: string, nodeArgs?: string[]): any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Removes the temporary folder (afterAll). */
  remove(): void;
}

export function patchedBundles(name: string, entry: string): PatchedBundles {
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`));
  writeFileSync(join(dir, 'entry.cjs'), entry);
  return {
    bundle: async (plugins, file) => {
      await build({
        entryPoints: [join(dir, 'entry.cjs')], outfile: join(dir, file), absWorkingDir: process.cwd(), nodePaths: [join(process.cwd(), 'node_modules')],
        bundle: true, format: 'cjs', platform: 'node', target: 'node20', plugins, logLevel: 'silent',
      });
    },
    run: (file, nodeArgs = []) => JSON.parse(execFileSync(process.execPath, [...nodeArgs, join(dir, file)], { encoding: 'utf8' })),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
