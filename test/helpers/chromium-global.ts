/**
 * Global set-up of the `e2e` project (issue 45): one headless Chromium for the run, which each
 * file's `launchChromium()` (test/helpers/panel-browser.ts) connects to instead of starting a
 * browser of its own: a start and a close cost 0.4–1.4 s, a connection ~20 ms (decision 0438). A
 * file's contexts are its own, and its `browser.close()` closes them and disconnects.
 */
import type { TestProject } from 'vitest/node';
import { chromium } from 'playwright-core';

/** How the suites start Chromium: headless, no sandbox (a container), nothing talking outwards. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

export const chromiumPath = (): string => process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await chromium.launchServer({ executablePath: chromiumPath(), headless: true, args: CHROMIUM_ARGS });
  project.provide('gatehouseChromium', server.wsEndpoint());
  return () => server.close();
}

declare module 'vitest' {
  export interface ProvidedContext {
    gatehouseChromium: string | undefined;
  }
}
