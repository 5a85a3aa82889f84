/**
 * A small stand-in for the `electron` module, so the real electron/main.ts (with window.ts,
 * security.ts and tray.ts) runs under vitest against the real server child: no Electron binary
 * exists here. It keeps Electron's observable behaviour where main.ts depends on it:
 *
 * - every BrowserWindow has a WebContents, announced with app `web-contents-created`;
 *   `loadURL` really fetches http(s) pages (so "the window loads /admin/" is a real answer);
 * - renderer-side acts are methods the test calls: `navigate` (emits `will-navigate`),
 *   `redirect`, `openWindow` (asks the window-open handler; an allowed pop-up becomes a window),
 *   `invoke` (an `ipcRenderer.invoke` from a given frame: rejects when the handler throws);
 * - `app.quit()` emits a preventable `before-quit`, then `will-quit` and `quit`, and records the exit;
 * - the single-instance lock is held per userData folder across instances (`vi.resetModules()`
 *   and a new import of main.ts is a second instance); the holder gets `second-instance`;
 * - `utilityProcess.fork` is Node's `fork` (the server then talks over `process.send`).
 *
 * Each import of the mocked module gets a new instance: `createFakeElectron()` registers it in
 * `fakeElectrons` for the test to drive.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';

export interface FakeConfig {
  appPath: string;
  userData: string;
  isPackaged?: boolean;
  resourcesPath?: string;
}

/** Set by the test before main.ts is imported. */
export const fakeConfig: { current: FakeConfig | undefined } = ((globalThis as { __fakeElectronConfig?: { current: FakeConfig | undefined } }).__fakeElectronConfig ??= {
  current: undefined,
});

/** Lock holders by userData folder, shared by every instance (survives vi.resetModules). */
const locks: Map<string, FakeApp> = ((globalThis as { __fakeElectronLocks?: Map<string, FakeApp> }).__fakeElectronLocks ??= new Map());

export const fakeElectrons: FakeElectron[] = ((globalThis as { __fakeElectrons?: FakeElectron[] }).__fakeElectrons ??= []);

class PreventableEvent {
  defaultPrevented = false;
  preventDefault() {
    this.defaultPrevented = true;
  }
}

export class FakeFrame {
  readonly frames: FakeFrame[] = [];
  constructor(
    public url: string,
    readonly parent: FakeFrame | null,
  ) {}
  get top(): FakeFrame {
    return this.parent ? this.parent.top : this;
  }
  addSubframe(url: string): FakeFrame {
    const frame = new FakeFrame(url, this);
    this.frames.push(frame);
    return frame;
  }
}

export interface Load {
  url: string;
  status?: number;
  contentType?: string | null;
  csp?: string | null;
  body?: string;
  /** Why the page did not load (Electron would show its error page), e.g. an untrusted certificate. */
  error?: string;
}

type OpenHandler = (details: { url: string; frameName: string; features: string; disposition: string }) => {
  action: 'allow' | 'deny';
  overrideBrowserWindowOptions?: Record<string, unknown>;
};

let nextId = 1;

export class FakeWebContents extends EventEmitter {
  readonly id = nextId++;
  readonly mainFrame = new FakeFrame('', null);
  readonly loads: Load[] = [];
  openHandler: OpenHandler | undefined;
  destroyed = false;
  constructor(
    readonly electron: FakeElectron,
    readonly window: FakeBrowserWindow,
  ) {
    super();
  }
  getURL() {
    return this.mainFrame.url;
  }
  setWindowOpenHandler(handler: OpenHandler) {
    this.openHandler = handler;
  }
  isDestroyed() {
    return this.destroyed;
  }
  async loadURL(url: string): Promise<void> {
    this.mainFrame.url = url;
    const load: Load = { url };
    this.loads.push(load);
    if (/^https?:/.test(url)) {
      try {
        const response = await fetch(url);
        Object.assign(load, {
          status: response.status,
          contentType: response.headers.get('content-type'),
          csp: response.headers.get('content-security-policy'),
          body: await response.text(),
        });
      } catch (error) {
        load.error = String((error as Error).cause ?? error);
      }
    }
    this.emit('did-finish-load');
    this.window.emit('ready-to-show');
  }
  /** A navigation the page starts (a link, `location = …`): true when it went ahead. */
  navigate(url: string): boolean {
    const event = new PreventableEvent();
    this.emit('will-navigate', event, url);
    if (!event.defaultPrevented) this.mainFrame.url = url;
    return !event.defaultPrevented;
  }
  /** A server redirect during a navigation: true when it went ahead. */
  redirect(url: string): boolean {
    const event = new PreventableEvent();
    this.emit('will-redirect', event, url);
    return !event.defaultPrevented;
  }
  attachWebview(): boolean {
    const event = new PreventableEvent();
    this.emit('will-attach-webview', event, {}, {});
    return !event.defaultPrevented;
  }
  /** `window.open(url)` in the page: the pop-up's window when allowed, otherwise undefined. */
  openWindow(url: string, frameName = ''): FakeBrowserWindow | undefined {
    const answer = this.openHandler?.({ url, frameName, features: '', disposition: 'new-window' }) ?? { action: 'allow' };
    if (answer.action !== 'allow') return undefined;
    const popup = new this.electron.BrowserWindow(answer.overrideBrowserWindowOptions ?? {});
    popup.webContents.mainFrame.url = url;
    return popup;
  }
  /** `ipcRenderer.invoke(channel)` from `frame` (the main frame by default). */
  async invoke(channel: string, frame: FakeFrame | null = this.mainFrame): Promise<unknown> {
    const handler = this.electron.ipcMain.handlers.get(channel);
    if (!handler) throw new Error(`No handler registered for '${channel}'`);
    try {
      return await handler({ sender: this, senderFrame: frame, processId: 1, frameId: 1 });
    } catch (error) {
      // What Electron hands the renderer instead of the error itself.
      throw new Error(`Error invoking remote method '${channel}': ${String(error)}`);
    }
  }
}

export class FakeBrowserWindow extends EventEmitter {
  readonly webContents: FakeWebContents;
  destroyed = false;
  visible = false;
  minimized = false;
  focused = 0;
  constructor(
    readonly electron: FakeElectron,
    readonly options: Record<string, unknown>,
  ) {
    super();
    this.webContents = new FakeWebContents(electron, this);
    electron.windows.push(this);
    electron.app.emit('web-contents-created', new PreventableEvent(), this.webContents);
  }
  isDestroyed() {
    return this.destroyed;
  }
  isMinimized() {
    return this.minimized;
  }
  restore() {
    this.minimized = false;
  }
  show() {
    this.visible = true;
  }
  focus() {
    this.focused += 1;
  }
  loadURL(url: string) {
    return this.webContents.loadURL(url);
  }
  close() {
    if (this.destroyed) return;
    this.destroyed = true;
    this.webContents.destroyed = true;
    this.emit('closed');
    if (this.electron.windows.every((w) => w.destroyed)) this.electron.app.emit('window-all-closed');
  }
}

export class FakeApp extends EventEmitter {
  quitRequests = 0;
  /** Set when the app really quit (no listener prevented it). */
  exited = false;
  readonly quitted: Promise<void>;
  private markQuit!: () => void;
  private readonly ready = Promise.resolve();
  constructor(readonly electron: FakeElectron) {
    super();
    this.quitted = new Promise((resolve) => (this.markQuit = resolve));
  }
  get isPackaged() {
    return this.electron.config.isPackaged ?? false;
  }
  getAppPath() {
    return this.electron.config.appPath;
  }
  getPath(name: string) {
    if (name !== 'userData') throw new Error(`fake electron: no path ${name}`);
    return this.electron.config.userData;
  }
  requestSingleInstanceLock(): boolean {
    const holder = locks.get(this.electron.config.userData);
    if (holder && !holder.exited) {
      // Electron tells the first instance; this one is expected to quit.
      queueMicrotask(() => holder.emit('second-instance', new PreventableEvent(), ['electron', '.'], process.cwd()));
      return false;
    }
    locks.set(this.electron.config.userData, this);
    return true;
  }
  whenReady() {
    return this.ready;
  }
  quit() {
    this.quitRequests += 1;
    if (this.exited) return;
    const before = new PreventableEvent();
    this.emit('before-quit', before);
    if (before.defaultPrevented) return;
    const will = new PreventableEvent();
    this.emit('will-quit', will);
    if (will.defaultPrevented) return;
    this.exited = true;
    if (locks.get(this.electron.config.userData) === this) locks.delete(this.electron.config.userData);
    this.emit('quit');
    this.markQuit();
  }
}

type PermissionHandler = (contents: unknown, permission: string, callback: (granted: boolean) => void, details: unknown) => void;

export class FakeSession {
  requestHandler: PermissionHandler | undefined;
  checkHandler: ((contents: unknown, permission: string, origin: string, details: unknown) => boolean) | undefined;
  setPermissionRequestHandler(handler: PermissionHandler) {
    this.requestHandler = handler;
  }
  setPermissionCheckHandler(handler: FakeSession['checkHandler']) {
    this.checkHandler = handler;
  }
  /** A page asks for a permission (camera, notifications, …): resolves with the answer; undefined when none came. */
  requestPermission(contents: unknown, permission: string): Promise<boolean | undefined> {
    if (!this.requestHandler) return Promise.resolve(true); // Electron's default grants
    return new Promise((resolve) => {
      this.requestHandler!(contents, permission, resolve, { requestingUrl: '' });
      setTimeout(() => resolve(undefined), 100);
    });
  }
  checkPermission(contents: unknown, permission: string, origin: string): boolean {
    return this.checkHandler ? this.checkHandler(contents, permission, origin, {}) : true;
  }
}

export class FakeTray extends EventEmitter {
  tooltip = '';
  template: { label?: string; type?: string; enabled?: boolean; click?: () => void }[] = [];
  destroyed = false;
  constructor(
    readonly electron: FakeElectron,
    readonly image: unknown,
  ) {
    super();
    electron.trays.push(this);
  }
  setToolTip(text: string) {
    this.tooltip = text;
  }
  setContextMenu(menu: { template: FakeTray['template'] }) {
    this.template = menu.template;
  }
  destroy() {
    this.destroyed = true;
  }
  /** Clicks the menu item with this label. */
  click(label: string) {
    const item = this.template.find((i) => i.label === label);
    if (!item?.click) throw new Error(`no menu item "${label}"`);
    item.click();
  }
}

/** utilityProcess.fork on Node's fork: the same events and methods main.ts uses. */
class FakeUtilityProcess extends EventEmitter {
  readonly stderr: ChildProcess['stderr'];
  constructor(private readonly child: ChildProcess) {
    super();
    this.stderr = child.stderr;
    child.on('message', (message) => this.emit('message', message));
    child.on('exit', (code) => this.emit('exit', code ?? 1));
  }
  get pid() {
    return this.child.pid;
  }
  kill() {
    return this.child.kill('SIGTERM');
  }
}

export interface FakeElectron {
  config: FakeConfig;
  app: FakeApp;
  windows: FakeBrowserWindow[];
  trays: FakeTray[];
  errorBoxes: { title: string; content: string }[];
  opened: { external: string[]; paths: string[] };
  forks: { modulePath: string; args: string[]; options: Record<string, unknown>; pid: number | undefined }[];
  ipcMain: { handlers: Map<string, (event: unknown) => unknown>; handle(channel: string, handler: (event: unknown) => unknown): void };
  session: { defaultSession: FakeSession };
  BrowserWindow: new (options: Record<string, unknown>) => FakeBrowserWindow;
}

export function createFakeElectron() {
  const config = fakeConfig.current;
  if (!config) throw new Error('fake electron: set fakeConfig.current before importing electron/main.ts');
  const electron = { config, windows: [], trays: [], errorBoxes: [], opened: { external: [], paths: [] }, forks: [] } as unknown as FakeElectron;
  electron.app = new FakeApp(electron);
  electron.session = { defaultSession: new FakeSession() };
  electron.ipcMain = {
    handlers: new Map(),
    handle(channel, handler) {
      if (this.handlers.has(channel)) throw new Error(`Attempted to register a second handler for '${channel}'`);
      this.handlers.set(channel, handler);
    },
  };
  electron.BrowserWindow = class extends FakeBrowserWindow {
    constructor(options: Record<string, unknown>) {
      super(electron, options);
    }
  };
  fakeElectrons.push(electron);
  const nativeImage = {
    createFromPath: (path: string) => ({ path, resize: (size: unknown) => ({ path, size }) }),
  };
  return {
    default: undefined,
    app: electron.app,
    BrowserWindow: electron.BrowserWindow,
    ipcMain: electron.ipcMain,
    session: electron.session,
    dialog: { showErrorBox: (title: string, content: string) => void electron.errorBoxes.push({ title, content }) },
    shell: {
      openExternal: async (url: string) => void electron.opened.external.push(url),
      openPath: async (path: string) => {
        electron.opened.paths.push(path);
        return '';
      },
    },
    Menu: { buildFromTemplate: (template: FakeTray['template']) => ({ template }) },
    Tray: class extends FakeTray {
      constructor(image: unknown) {
        super(electron, image);
      }
    },
    nativeImage,
    utilityProcess: {
      fork(modulePath: string, args: string[] = [], options: { execArgv?: string[]; env?: NodeJS.ProcessEnv; stdio?: string[] } = {}) {
        const [stdin = 'ignore', stdout = 'inherit', stderr = 'inherit'] = options.stdio ?? [];
        const child = fork(modulePath, args, {
          execArgv: options.execArgv ?? [],
          env: options.env,
          stdio: [stdin, stdout, stderr, 'ipc'] as never,
        });
        electron.forks.push({ modulePath, args, options, pid: child.pid });
        return new FakeUtilityProcess(child);
      },
    },
  };
}
