/**
 * The Electron main process, electron/main.ts (with window.ts, security.ts and tray.ts), run for
 * real on every `npm test` with the `electron` module swapped for a small fake
 * (test/helpers/fake-electron.ts; no Electron binary exists here) against the REAL server child
 * it supervises: the bundled server, started by main.ts itself.
 *
 * - the child starts and the window loads {server}/admin/ (a real HTTP answer);
 * - the admin token goes over IPC only to the panel window's main frame under /admin/;
 * - quitting stops the child; a second instance exits at once and hands over to the first;
 * - navigation, pop-ups, webviews, permissions and certificate errors are locked down;
 * - a server that refuses to start is shown in words; a packaged app runs it through utilityProcess.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { CLI, ensureBuilt, ROOT } from '../helpers/server-process.js';
import { fakeConfig, fakeElectrons, type FakeConfig, type FakeElectron, type FakeBrowserWindow } from '../helpers/fake-electron.js';

const root = ROOT.replace(/\/$/, '');
let userData: string;
const savedEnv = { ...process.env };

beforeAll(() => ensureBuilt(), 300_000);

beforeEach(() => {
  userData = mkdtempSync(join(tmpdir(), 'gatehouse-electron-'));
  // What main.ts reads from its environment; the server child inherits the rest.
  for (const key of Object.keys(process.env)) if (/^(GATEHOUSE_|ADMIN_TOKEN$|HOST$|SMTP_)/.test(key)) delete process.env[key];
  process.env.PORT = '0';
  process.env.LOG_LEVEL = 'warn';
});

afterEach(async () => {
  // Quit every instance still running (stopping its server), then forget them.
  for (const electron of fakeElectrons.splice(0)) {
    if (!electron.app.exited) {
      electron.app.quit();
      await electron.app.quitted;
    }
  }
  process.env = { ...savedEnv };
  rmSync(userData, { recursive: true, force: true });
}, 30_000);

afterAll(() => {
  delete (process as { resourcesPath?: string }).resourcesPath;
});

/** Starts the app: a fresh import of electron/main.ts is a fresh process of the app. */
async function launch(config: Partial<FakeConfig> = {}): Promise<FakeElectron> {
  fakeConfig.current = { appPath: root, userData, ...config };
  // A new module graph with a new fake: what a new process of the app would see.
  vi.resetModules();
  vi.doMock('electron', async () => (await import('../helpers/fake-electron.js')).createFakeElectron());
  const before = fakeElectrons.length;
  await import('../../electron/main.js');
  const electron = fakeElectrons[before];
  if (!electron) throw new Error('main.ts did not import electron');
  return electron;
}

const dataDir = () => join(userData, 'data');
const serverPid = () => Number(readFileSync(join(dataDir(), 'gatehouse.pid'), 'utf8'));
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Waits until the window has loaded the panel from the running server; returns the server's URL. */
async function panelLoaded(window: FakeBrowserWindow): Promise<string> {
  await vi.waitFor(
    () => {
      const load = window.webContents.loads.at(-1);
      expect(load?.url).toMatch(/^https?:\/\/127\.0\.0\.1:\d+\/admin\/$/);
      expect(load?.status ?? load?.error).toBeDefined();
    },
    { timeout: 30_000, interval: 50 },
  );
  return window.webContents.loads.at(-1)!.url.replace(/\/admin\/$/, '');
}

async function running(config: Partial<FakeConfig> = {}) {
  const electron = await launch(config);
  const window = electron.windows[0]!;
  const url = await panelLoaded(window);
  return { electron, window, url };
}

/** The web preferences every window and pop-up must have (spelled out, not imported from security.ts). */
const lockedDown = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  spellcheck: false,
};

const overview = (url: string, token: string) =>
  fetch(`${url}/api/admin/overview`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);

describe('electron/main.ts against the real server child', () => {
  it('starts the server child, shows a starting page, then loads the panel at /admin/ in a locked-down window', async () => {
    const { electron, window, url } = await running();
    const [starting, panel] = window.webContents.loads;
    expect(starting!.url).toMatch(/^data:text\/html;charset=utf-8,.*Starting%20the%20Gatehouse%20server/);
    expect(panel).toMatchObject({ url: `${url}/admin/`, status: 200 });
    expect(panel!.contentType).toMatch(/^text\/html/);
    expect(panel!.csp).toBe(
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    expect(panel!.body).toContain('<div id="root"></div>');
    expect(window.visible).toBe(true);
    expect(window.options.webPreferences).toEqual({ ...lockedDown, preload: join(root, 'electron', 'preload.cjs') });

    // The child is ours, serves the data folder under userData, and reports healthy.
    const pid = serverPid();
    expect(readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ')[3]).toBe(String(process.pid));
    expect(existsSync(join(dataDir(), 'gatehouse.db'))).toBe(true);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);

    const [tray] = electron.trays;
    expect(tray!.template.slice(0, 2).map((i) => i.label)).toEqual(['Server: running', url]);
    expect(tray!.tooltip).toBe('Gatehouse — Server: running');
    tray!.click('Open data folder');
    expect(electron.opened.paths).toEqual([dataDir()]);
  });

  it('gives the admin token over IPC only to the panel window\'s main frame under /admin/', async () => {
    const { window, url } = await running();
    const contents = window.webContents;
    const token = readFileSync(join(dataDir(), 'admin-token'), 'utf8').trim();

    const config = (await contents.invoke('gatehouse:get-config')) as { serverUrl: string; adminToken: string };
    expect(config).toEqual({ serverUrl: url, adminToken: token });
    expect(await overview(url, config.adminToken)).toBe(200);

    // Deeper panel routes (the SPA moves with pushState) still get it.
    contents.mainFrame.url = `${url}/admin/applications/notes/members`;
    await expect(contents.invoke('gatehouse:get-config')).resolves.toEqual(config);

    const refused = "Error invoking remote method 'gatehouse:get-config': Error: Not allowed.";
    // Other pages of the same origin (hosted sign-in and account pages), and look-alike paths.
    for (const path of ['/account', '/sign-in', '/api/admin/overview', '/admin', '/administrator/', '/ca.pem']) {
      contents.mainFrame.url = `${url}${path}`;
      await expect(contents.invoke('gatehouse:get-config'), path).rejects.toThrow(refused);
    }
    // Another origin, even at /admin/.
    contents.mainFrame.url = 'http://127.0.0.1:1/admin/';
    await expect(contents.invoke('gatehouse:get-config')).rejects.toThrow(refused);
    contents.mainFrame.url = `${url}/admin/`;
    // A frame inside the panel, even one showing the panel.
    const frame = contents.mainFrame.addSubframe(`${url}/admin/`);
    await expect(contents.invoke('gatehouse:get-config', frame)).rejects.toThrow(refused);
    // A frame that is gone (Electron passes null).
    await expect(contents.invoke('gatehouse:get-config', null)).rejects.toThrow(refused);
    // The panel's own pop-up (the test sign-in), even at /admin/callback.
    const popup = contents.openWindow(`${url}/api/auth/oauth2/authorize?client_id=notes`, 'gatehouse-test-sign-in')!;
    popup.webContents.mainFrame.url = `${url}/admin/callback?code=x`;
    await expect(popup.webContents.invoke('gatehouse:get-config')).rejects.toThrow(refused);
    // The panel itself still gets it afterwards.
    await expect(contents.invoke('gatehouse:get-config')).resolves.toEqual(config);
  });

  it('locks down navigation, redirects, webviews and pop-ups', async () => {
    const { electron, window, url } = await running();
    const contents = window.webContents;

    expect(contents.navigate(`${url}/admin/applications`)).toBe(true);
    expect(contents.navigate(`${url}/account`)).toBe(true);
    // Web links leave the app for the system browser; anything else goes nowhere.
    expect(contents.navigate('https://docs.example.com/guide')).toBe(false);
    expect(contents.navigate('file:///etc/passwd')).toBe(false);
    expect(contents.navigate('javascript:alert(1)')).toBe(false);
    expect(contents.navigate('gatehouse-evil://run')).toBe(false);
    expect(contents.navigate(`${url.replace('127.0.0.1', 'localhost')}/admin/`)).toBe(false);
    expect(electron.opened.external).toEqual(['https://docs.example.com/guide', `${url.replace('127.0.0.1', 'localhost')}/admin/`]);
    expect(contents.mainFrame.url).toBe(`${url}/account`);

    expect(contents.redirect(`${url}/sign-in`)).toBe(true);
    expect(contents.redirect('https://evil.example/')).toBe(false);
    expect(contents.attachWebview()).toBe(false);

    // Pop-ups: outside the server they open in the system browser; the panel's own stay in the
    // app, with the same locked-down preferences and no preload (so no bridge).
    expect(contents.openWindow('https://docs.example.com/popup')).toBeUndefined();
    expect(electron.opened.external.at(-1)).toBe('https://docs.example.com/popup');
    expect(contents.openWindow('file:///etc/passwd')).toBeUndefined();
    expect(electron.opened.external.at(-1)).toBe('https://docs.example.com/popup');
    const popup = contents.openWindow(`${url}/api/auth/oauth2/authorize?client_id=notes`)!;
    expect(popup.options).toEqual({
      width: 520,
      height: 720,
      webPreferences: lockedDown,
    });
    // The pop-up is hardened too.
    expect(popup.webContents.navigate('https://evil.example/')).toBe(false);
    expect(popup.webContents.openWindow('https://evil.example/again')).toBeUndefined();
    expect(popup.webContents.attachWebview()).toBe(false);
  });

  it('refuses every permission and every certificate error outside its own CA', async () => {
    const { electron, window, url } = await running();
    const session = electron.session.defaultSession;
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'openExternal']) {
      expect(await session.requestPermission(window.webContents, permission), permission).toBe(false);
      expect(session.checkPermission(window.webContents, permission, url), permission).toBe(false);
    }

    const certificateError = (target: string, certificate: unknown) => {
      let prevented = false;
      let trusted: boolean | undefined;
      electron.app.emit('certificate-error', { preventDefault: () => (prevented = true) }, window.webContents, target, 'net::ERR_CERT_AUTHORITY_INVALID', certificate, (ok: boolean) => (trusted = ok));
      return { prevented, trusted };
    };
    const selfSigned = { data: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----', issuerCert: undefined };
    // Without LAN TLS there is no local CA: nothing is trusted, for the server or anyone else.
    expect(certificateError(`${url.replace('http:', 'https:')}/admin/`, selfSigned)).toEqual({ prevented: false, trusted: false });
    expect(certificateError('https://evil.example/', selfSigned)).toEqual({ prevented: false, trusted: false });
  });

  it('with LAN TLS trusts exactly the installation\'s own CA, and only for the server', async () => {
    process.env.GATEHOUSE_TLS = 'auto';
    const { electron, window, url } = await running();
    expect(url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const ca = readFileSync(join(dataDir(), 'tls', 'ca.pem'), 'utf8');
    const certificateError = (target: string, certificate: unknown) => {
      let prevented = false;
      let trusted: boolean | undefined;
      electron.app.emit('certificate-error', { preventDefault: () => (prevented = true) }, window.webContents, target, 'net::ERR_CERT_AUTHORITY_INVALID', certificate, (ok: boolean) => (trusted = ok));
      return { prevented, trusted };
    };
    // Electron hands PEM with other line ends than the file's; the comparison ignores them.
    const leaf = (issuer: string) => ({ data: 'leaf', issuerCert: { data: issuer.replace(/\r/g, ''), issuerCert: undefined } });
    expect(certificateError(`${url}/admin/`, leaf(ca))).toEqual({ prevented: true, trusted: true });
    expect(certificateError('https://evil.example/', leaf(ca))).toEqual({ prevented: false, trusted: false });
    const otherCa = ca.replace('MII', 'MIJ');
    expect(otherCa).not.toBe(ca);
    expect(certificateError(`${url}/admin/`, leaf(otherCa))).toEqual({ prevented: false, trusted: false });
    expect(certificateError(`${url}/admin/`, { data: 'leaf', issuerCert: undefined })).toEqual({ prevented: false, trusted: false });
  });

  it('keeps the server when the window closes, reopens the panel on activate, and quitting (tray) stops the child', async () => {
    const { electron, window, url } = await running();
    const pid = serverPid();
    window.close();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    expect(electron.app.exited).toBe(false);

    electron.app.emit('activate');
    const reopened = electron.windows[1]!;
    // The server is running, so the new window goes straight to the panel.
    expect(reopened.webContents.loads[0]!.url).toBe(`${url}/admin/`);
    await panelLoaded(reopened);

    electron.trays[0]!.click('Quit Gatehouse');
    await electron.app.quitted;
    expect(electron.app.quitRequests).toBe(2); // the first was held back until the server stopped
    expect(alive(pid)).toBe(false);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
    expect(existsSync(join(dataDir(), 'gatehouse.pid'))).toBe(false);
    expect(electron.trays[0]!.destroyed).toBe(true);
  });

  it('a second instance quits at once, starts nothing, and brings the first one\'s panel forward', async () => {
    const first = await running();
    const pid = serverPid();
    const focusedBefore = first.window.focused;

    const second = await launch();
    // Synchronously, during its import: quit asked for and done, nothing set up.
    expect(second.app.quitRequests).toBe(1);
    expect(second.app.exited).toBe(true);
    expect(second.ipcMain.handlers.size).toBe(0);
    expect(second.windows).toEqual([]);
    expect(second.trays).toEqual([]);
    expect(second.forks).toEqual([]);
    expect(serverPid()).toBe(pid);

    await vi.waitFor(() => expect(first.window.focused).toBe(focusedBefore + 1));
    expect(first.electron.windows).toHaveLength(1);
    expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
  });

  it('a server that refuses to start is shown in words, with the data folder', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    process.env.PORT = String(port);
    try {
      const electron = await launch();
      await vi.waitFor(() => expect(electron.errorBoxes).toHaveLength(1), { timeout: 30_000, interval: 100 });
      expect(electron.errorBoxes[0]).toEqual({
        title: 'Gatehouse server failed',
        content: `The server could not start: Port ${port} on 127.0.0.1 is already in use.\n\nData folder: ${dataDir()}`,
      });
      expect(electron.windows[0]!.destroyed).toBe(true);
      expect(electron.trays[0]!.template[0]!.label).toBe('Server: failed — see the log');
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  });

  it('packaged: runs the server through utilityProcess.fork with the launch settings, and stops it on quit', async () => {
    (process as { resourcesPath?: string }).resourcesPath = join(root, 'resources');
    const { electron, url } = await running({ isPackaged: true });
    expect(electron.forks).toHaveLength(1);
    const [forked] = electron.forks;
    expect(forked!.modulePath).toBe(join(root, 'dist', 'gatehouse.mjs'));
    expect(forked!.args).toEqual(['serve']);
    expect(forked!.options.execArgv).toEqual(['--max-semi-space-size=1']);
    const env = forked!.options.env as Record<string, string>;
    expect({ data: env.GATEHOUSE_DATA_DIR, malloc: env.MALLOC_MMAP_THRESHOLD_, renderer: env.GATEHOUSE_RENDERER_DIR, port: env.PORT }).toEqual({
      data: dataDir(),
      malloc: '131072',
      renderer: join(root, 'renderer', 'dist'),
      port: '0',
    });
    expect(serverPid()).toBe(forked!.pid);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    electron.app.quit();
    await electron.app.quitted;
    expect(alive(forked!.pid!)).toBe(false);
  });

  it('after `gatehouse admin-token --rotate`, the panel is given the new token', async () => {
    const { window, url } = await running();
    const before = ((await window.webContents.invoke('gatehouse:get-config')) as { adminToken: string }).adminToken;
    const env = { ...process.env, GATEHOUSE_DATA_DIR: dataDir() };
    const rotated = execFileSync(process.execPath, [CLI, 'admin-token', '--rotate'], { env, stdio: ['ignore', 'pipe', 'ignore'] }).toString().trim();
    const after = ((await window.webContents.invoke('gatehouse:get-config')) as { adminToken: string }).adminToken;
    expect(after).toBe(rotated);
    expect(after).not.toBe(before);
    await expect.poll(() => overview(url, after), { timeout: 5000, interval: 200 }).toBe(200);
  });
});
