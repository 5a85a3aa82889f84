/** The control panel's build, found from the project root. */
import { installPath } from '../util/install-paths.js';

/** The built control panel; GATEHOUSE_RENDERER_DIR overrides it (packaging, development). */
export function rendererDir(env: Record<string, string | undefined> = process.env): string {
  return env.GATEHOUSE_RENDERER_DIR ?? installPath('renderer', 'dist');
}
