/**
 * Hardening for every web contents the app creates: only the server's own origin may be shown;
 * other links open in the system browser; no permissions, no webviews.
 */
import { app, session, shell, type WebContents } from 'electron';

let allowedOrigin: string | undefined;

/** The server origin (http(s)://host:port) the windows may show; set once the server is ready. */
export function setAllowedOrigin(url: string): void {
  allowedOrigin = new URL(url).origin;
}

export function isAllowedUrl(url: string): boolean {
  try {
    return allowedOrigin !== undefined && new URL(url).origin === allowedOrigin;
  } catch {
    return false;
  }
}

function openOutside(url: string) {
  // Only web links leave the app; file:, javascript: and custom schemes are dropped.
  if (/^https?:\/\//i.test(url)) void shell.openExternal(url);
}

/** Secure defaults for every BrowserWindow (the same for pop-ups the panel opens). */
export const secureWebPreferences = {
  contextIsolation: true,
  sandbox: true,
  nodeIntegration: false,
  nodeIntegrationInWorker: false,
  webSecurity: true,
  allowRunningInsecureContent: false,
  webviewTag: false,
  spellcheck: false,
} as const;

function harden(contents: WebContents) {
  contents.on('will-navigate', (event, url) => {
    if (!isAllowedUrl(url)) {
      event.preventDefault();
      openOutside(url);
    }
  });
  contents.on('will-redirect', (event, url) => {
    if (!isAllowedUrl(url)) event.preventDefault();
  });
  contents.on('will-attach-webview', (event) => event.preventDefault());
  contents.setWindowOpenHandler(({ url }) => {
    // The panel's own pop-ups (the test sign-in) stay inside the app, without the preload bridge.
    if (isAllowedUrl(url)) {
      return { action: 'allow', overrideBrowserWindowOptions: { width: 520, height: 720, webPreferences: { ...secureWebPreferences } } };
    }
    openOutside(url);
    return { action: 'deny' };
  });
}

export function installSecurity(): void {
  app.on('web-contents-created', (_event, contents) => harden(contents));
  app.whenReady().then(() => {
    // The panel needs no camera, notifications, geolocation, …
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    session.defaultSession.setPermissionCheckHandler(() => false);
  });
}
