/**
 * Electron main, kept thin: single-instance lock, the supervised server (electron-free logic in
 * server-process.ts), the panel window, the tray, hardening. The server runs as a child process:
 * the system `node` in development (so native modules built for it match), Electron's
 * `utilityProcess.fork` in a packaged app (native modules rebuilt for Electron by electron-builder).
 */
import { app, dialog, ipcMain, shell, utilityProcess } from 'electron';
import { join } from 'node:path';
import { SERVER_BUNDLE, SERVE_ENV, serveNodeArgs } from '../server/cli/launch.js';
import { currentAdminToken } from './admin-token.js';
import { captureStderr, nodeSpawner, ServerStartError, ServerSupervisor, type ServerChild, type Spawner } from './server-process.js';
import { installSecurity, isPanelFrame, setAllowedOrigin } from './security.js';
import { loadPanel, panelWindow, showPanel } from './window.js';
import { GatehouseTray } from './tray.js';

if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  run();
}

function run() {
  const appRoot = app.getAppPath();
  const dataDir = process.env.GATEHOUSE_DATA_DIR ?? join(app.getPath('userData'), 'data');
  const cliPath = join(appRoot, SERVER_BUNDLE);
  const iconPath = join(app.isPackaged ? process.resourcesPath : join(appRoot, 'resources'), 'icon.png');
  // A fixed port keeps the issuer (and so every app's configuration) stable across restarts.
  const serverEnv = {
    PORT: process.env.PORT ?? '8787',
    HOST: process.env.HOST ?? '127.0.0.1',
    GATEHOUSE_RENDERER_DIR: join(appRoot, 'renderer', 'dist'),
  };

  const spawn: Spawner = app.isPackaged
    ? utilitySpawner(cliPath, dataDir, serverEnv)
    : nodeSpawner({ cliPath, dataDir, env: serverEnv, execPath: process.env.GATEHOUSE_NODE ?? 'node' });
  const supervisor = new ServerSupervisor({ spawn, readyTimeoutMs: 30_000 });
  let tray: GatehouseTray | undefined;
  let quitting = false;

  installSecurity(join(dataDir, 'tls', 'ca.pem'));

  ipcMain.handle('gatehouse:get-config', (event) => {
    // Only the panel itself (the panel window's main frame at {server}/admin/) may read the admin token.
    if (!supervisor.url || !isPanelFrame(event.senderFrame, event.sender, panelWindow()?.webContents)) throw new Error('Not allowed.');
    // Read on every call: after a rotation the panel asks again and gets the new token.
    return { serverUrl: supervisor.url, adminToken: currentAdminToken(dataDir) };
  });

  const openPanel = () => showPanel(supervisor.status === 'running' ? supervisor.url : undefined, iconPath);

  app.on('second-instance', () => openPanel());
  app.on('activate', () => openPanel());
  // The app lives in the tray; closing the window does not stop the server.
  app.on('window-all-closed', () => {});

  supervisor.on('status', (status: string) => tray?.update(status, supervisor.url));
  supervisor.on('ready', (ready: { url: string }) => {
    setAllowedOrigin(ready.url);
    tray?.update('running', ready.url);
    loadPanel(ready.url);
  });
  supervisor.on('server-error', (error: Error) => console.error(`[gatehouse] ${error.message}`));
  // The one place a give-up is shown: at start-up, and also when restarts after a crash run out.
  supervisor.on('first-failure', showFailure);

  app.on('before-quit', (event) => {
    if (quitting) return;
    // Stop the server cleanly first, then quit for real.
    event.preventDefault();
    quitting = true;
    void supervisor.stop().finally(() => {
      tray?.destroy();
      app.quit();
    });
  });

  app.whenReady().then(() => {
    tray = new GatehouseTray(iconPath, {
      openPanel,
      openDataFolder: () => void shell.openPath(dataDir),
      restartServer: () => {
        // A give-up is shown by the 'first-failure' listener; a double click's "already starting" is not news.
        void supervisor.stop().then(() => supervisor.start()).catch(() => {});
      },
      quit: () => app.quit(),
    });
    openPanel();
    void supervisor.start().catch(() => {});
  });

  function showFailure(error: unknown) {
    // When the server said why it would not start, that sentence is the message; otherwise guess.
    const hint =
      error instanceof ServerStartError && error.reason ? '' : `\nIs port ${serverEnv.PORT} already in use? Set PORT to change it.`;
    dialog.showErrorBox(
      'Gatehouse server failed',
      `${error instanceof Error ? error.message : String(error)}\n\nData folder: ${dataDir}${hint}`,
    );
    panelWindow()?.close();
  }
}

/** `utilityProcess.fork` adapted to the supervisor's ServerChild. */
function utilitySpawner(cliPath: string, dataDir: string, env: Record<string, string>): Spawner {
  return () => {
    const child = utilityProcess.fork(cliPath, ['serve'], {
      serviceName: 'Gatehouse server',
      execArgv: serveNodeArgs({ ...process.env, ...env }),
      env: { ...process.env, ...SERVE_ENV, ...env, GATEHOUSE_DATA_DIR: dataDir },
      // stderr is piped (and forwarded to ours) so a refusal to start can quote the server.
      stdio: ['ignore', 'inherit', 'pipe'],
    });
    const stderr = captureStderr(child.stderr, (chunk) => void process.stderr.write(chunk));
    let exited = false;
    let exitCode: number | null = null;
    const listeners: ((code: number | null) => void)[] = [];
    child.on('exit', (code) => {
      void stderr.drained().then(() => {
        exited = true;
        exitCode = code;
        for (const l of listeners) l(code);
      });
    });
    const adapted: ServerChild = {
      get pid() {
        return child.pid;
      },
      onMessage: (listener) => void child.on('message', listener),
      onExit: (listener) => (exited ? listener(exitCode) : void listeners.push(listener)),
      terminate: () => void child.kill(),
      kill: () => {
        if (child.pid) {
          try {
            process.kill(child.pid, 'SIGKILL');
            return;
          } catch {
            // already gone
          }
        }
        child.kill();
      },
      lastErrorLine: stderr.lastLine,
    };
    return adapted;
  };
}
