/**
 * Headless system Chromium (playwright-core) for the control-panel suites, and screenshots under
 * test/e2e/screenshots/ (git-ignored) for reviewers.
 */
import { execSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page, type Request } from 'playwright-core';
import { Secret, TOTP } from 'otpauth';
import { expect } from 'vitest';

export const root = new URL('../..', import.meta.url).pathname;
export const screenshotDir = join(root, 'test/e2e/screenshots');

/** Builds the server and the panel when their sources are newer than the build output. */
export function buildIfStale(): void {
  execSync('node scripts/build-if-stale.mjs', { cwd: root, stdio: 'inherit' });
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

/**
 * A context whose panel is signed in with the admin token, as the panel's sign-in screen leaves
 * it (the token in sessionStorage, set before any page script runs): the set-up of the suites
 * whose subject is not that screen (panel-sign-in.test.ts is). 1280x900, light, unless given.
 */
export async function panelContext(browser: Browser, adminToken: string, options: BrowserContextOptions = {}): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: 'light', ...options });
  await context.addInitScript((token) => sessionStorage.setItem('gatehouse.adminToken', token), adminToken);
  return context;
}

const inFlight = new WeakMap<Page, Set<Request>>();

/** Counts the page's requests from now on, for `settled` (call it before the page's first navigation). */
export function watchRequests(page: Page): void {
  if (inFlight.has(page)) return;
  const pending = new Set<Request>();
  inFlight.set(page, pending);
  page.on('request', (request) => pending.add(request));
  page.on('requestfinished', (request) => pending.delete(request));
  page.on('requestfailed', (request) => pending.delete(request));
}

/**
 * Waits until the page has loaded, none of its requests is in flight, its fonts are ready and two
 * frames have been drawn since, twice running: what a screenshot and axe need. This is the
 * condition `waitForLoadState('networkidle')` stood for, without its 500 ms of network quiet on
 * every screen (issue 45: e2e runs one file at a time; in panel-screens 143 such waits took 65 s of
 * its 221 s, and 10.6 s as this). `watchRequests(page)` must have been called before it navigated.
 */
export async function settled(page: Page, timeoutMs = 30_000): Promise<void> {
  const pending = inFlight.get(page);
  if (!pending) throw new Error('settled(page) needs watchRequests(page) before the page navigates');
  const deadline = Date.now() + timeoutMs;
  await page.waitForLoadState('load', { timeout: timeoutMs });
  for (let quiet = 0; quiet < 2; ) {
    while (pending.size) {
      if (Date.now() > deadline) throw new Error(`requests still in flight after ${timeoutMs} ms: ${[...pending].map((r) => r.url()).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await page.evaluate(() => document.fonts.ready.then(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))));
    quiet = pending.size ? 0 : quiet + 1;
  }
}

/**
 * Opens `path` (under /admin) in the panel loaded in `page` as a click on a link to it does: the
 * panel's router draws the screen in the same document, as it does for a person using the panel,
 * so a full load of the panel (and axe's injection) is not paid per screen (issue 45). Waits for
 * `ready`, a text of the new screen (the same text still on the old screen does not count), and
 * `settled`. Throws if the browser loaded a new document instead of the router taking the link.
 * The suites that check screens loaded directly by their address use `page.goto`.
 */
export async function followPanelLink(page: Page, path: string, ready: string): Promise<void> {
  await page.evaluate((href) => {
    document.querySelectorAll('*').forEach((element) => element.setAttribute('data-before-link', ''));
    const link = document.createElement('a');
    link.href = href;
    document.body.append(link);
    link.click();
    link.remove();
  }, `/admin${path}`);
  await page.getByText(ready, { exact: false }).and(page.locator(':not([data-before-link])')).first().waitFor({ timeout: 15_000 });
  const sameDocument = await page.evaluate(() => {
    const marked = document.documentElement.hasAttribute('data-before-link');
    document.querySelectorAll('[data-before-link]').forEach((element) => element.removeAttribute('data-before-link'));
    return marked;
  });
  if (!sameDocument) throw new Error(`the link to /admin${path} loaded a new document: the panel's router did not take it`);
  await settled(page);
}

/** A page in a fresh context that records Content-Security-Policy violations, which would mean a broken page. */
export async function cspWatchedPage(browser: Browser): Promise<{ page: Page; cspErrors: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const cspErrors: string[] = [];
  page.on('console', (msg) => {
    if (/Content Security Policy/i.test(msg.text())) cspErrors.push(msg.text());
  });
  return { page, cspErrors, close: () => context.close() };
}

/**
 * A named administrator's first sign-in to the panel at `url`/admin/: "Sign in with Gatehouse",
 * e-mail and password, then the authenticator the panel requires, enrolled on the hosted pages (a
 * code from otpauth); ends when the panel shows `name` as signed in. Returns the TOTP secret.
 */
export async function firstPanelSignIn(page: Page, url: string, who: { email: string; password: string; name: string }): Promise<string> {
  await page.goto(`${url}/admin/`);
  await page.getByRole('button', { name: 'Sign in with Gatehouse' }).click();
  await page.getByLabel('E-mail').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Set up a second factor' }).waitFor();
  const secret = (await page.locator('[data-totp-key]').textContent())!.trim();
  await page.getByLabel('Code from the app').fill(new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate());
  await page.getByRole('button', { name: 'Confirm', exact: true }).click();
  await page.getByRole('link', { name: 'Continue' }).click();
  await page.getByTestId('signed-in-as').getByText(who.name).waitFor();
  return secret;
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`), fullPage: true });
}

export const SCHEMES = ['light', 'dark'] as const;

/**
 * `page` shown in `scheme` (prefers-color-scheme emulated: the pages follow it through their CSS,
 * the panel's charts redraw on its change event), then settled.
 */
export async function inScheme(page: Page, scheme: 'light' | 'dark'): Promise<void> {
  await page.emulateMedia({ colorScheme: scheme });
  await settled(page);
}

/**
 * The screen on `page`, settled, in each scheme: a screenshot `<name>-<scheme>`, and axe's serious
 * violations given to `report`. The scheme it is shown in first, then the other one: a screen is
 * loaded once for both schemes instead of once per scheme (issue 45).
 */
export async function checkSchemes(page: Page, name: string, report: (scheme: string, violations: string[]) => void): Promise<void> {
  const now = await page.evaluate(() => (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light'));
  for (const scheme of now === 'light' ? SCHEMES : [...SCHEMES].reverse()) {
    if (scheme !== now) await inScheme(page, scheme);
    await shot(page, `${name}-${scheme}`);
    const violations = await seriousViolations(page);
    if (violations.length) report(scheme, violations);
  }
}

/**
 * The harness can fail: a grey-on-grey line added to the page's `main` is reported by axe in each
 * scheme, then taken away again. Styled through the CSSOM, which a page's CSP allows where it
 * refuses style attributes (the hosted pages).
 */
export async function expectAxeControlReported(page: Page): Promise<void> {
  await page.evaluate(() => {
    const p = document.createElement('p');
    p.id = 'axe-control';
    p.textContent = 'low contrast';
    p.style.color = '#777';
    p.style.background = '#888';
    document.querySelector('main')!.append(p);
  });
  for (const scheme of SCHEMES) {
    await inScheme(page, scheme);
    expect((await seriousViolations(page)).join('\n'), scheme).toMatch(/^color-contrast \(serious\) at \["#axe-control"\]/m);
  }
  await page.evaluate(() => document.getElementById('axe-control')!.remove());
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's serious and critical violations on the page, one line each (evaluated over the
 * debugging protocol, so the page's CSP stays as it is).
 */
export async function seriousViolations(page: Page): Promise<string[]> {
  type Violations = { id: string; impact: string | null; nodes: { target: unknown[]; failureSummary?: string }[] }[];
  const run = () => page.evaluate(async () => {
    const axe = (window as unknown as { axe?: { run(ctx: Document, opts: object): Promise<{ violations: Violations }> } }).axe;
    return axe ? (await axe.run(document, { resultTypes: ['violations'] })).violations : null;
  });
  // Injected once per document: a screen the panel's router drew in the same document has it
  // already (the source is 0.5 MB; evaluating it took ~0.1 s a screen, issue 45).
  let violations = await run();
  if (!violations) {
    await page.evaluate(axeSource);
    violations = (await run())!;
  }
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}) at ${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`));
}
