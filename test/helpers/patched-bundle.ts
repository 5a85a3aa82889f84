/**
 * How the dependency patches' tests (scripts/bundle/dependency-patches.mjs) see a patch: a small
 * entry that loads the patched package is bundled as the server's bundle loads it, with and
 * without the patch's plugin, and each bundle runs in a child Node that prints one JSON line.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, type Plugin } from 'esbuild';

export interface PatchedBundles {
  /**
   * Bundles `source` (the entry given to `patchedBundles` unless another is given) with `plugins`
   * into `file` in the temporary folder; returns the paths of the modules the bundle holds.
   */
  bundle(plugins: Plugin[], file: string, source?: string): Promise<string[]>;
  /** Runs `file` with `nodeArgs` and parses the one JSON line it prints. */
  run(file: string, nodeArgs?: string[]): any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** Removes the temporary folder (afterAll). */
  remove(): void;
}

/** `entry` is CommonJS unless `format` is 'esm'; `external` packages stay out of the bundle. */
export function patchedBundles(name: string, entry: string, options: { format?: 'cjs' | 'esm'; external?: string[] } = {}): PatchedBundles {
  const { format = 'cjs', external = [] } = options;
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`));
  return {
    bundle: async (plugins, file, source = entry) => {
      const entryFile = join(dir, `${file}.entry.${format === 'esm' ? 'mjs' : 'cjs'}`);
      writeFileSync(entryFile, source);
      const { metafile } = await build({
        entryPoints: [entryFile], outfile: join(dir, file), absWorkingDir: process.cwd(), nodePaths: [join(process.cwd(), 'node_modules')],
        bundle: true, format, platform: 'node', target: 'node20', external, plugins, metafile: true, logLevel: 'silent',
      });
      return Object.keys(metafile.inputs);
    },
    run: (file, nodeArgs = []) => JSON.parse(execFileSync(process.execPath, [...nodeArgs, join(dir, file)], { encoding: 'utf8' })),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
