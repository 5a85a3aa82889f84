/**
 * Hardening for every web contents the app creates: only the server's own origin may be shown;
 * other links open in the system browser; no permissions, no webviews.
 */
import { existsSync, readFileSync } from 'node:fs';
import { app, session, shell, type Certificate, type WebContents } from 'electron';

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

/**
 * Whether an IPC call may be given the admin token: it must come from the main frame of the
 * panel window (not a sub-frame, not a pop-up such as the test sign-in), showing the panel
 * itself, `{server}/admin/…`; not any other page of the server's origin (the hosted sign-in and
 * account pages run no panel code, and a page there that went wrong must not be able to ask).
 */
export function isPanelFrame(
  frame: { url: string; parent: unknown } | null | undefined,
  sender: WebContents,
  panel: WebContents | undefined,
): boolean {
  if (!frame || !panel || sender !== panel || frame.parent !== null || !isAllowedUrl(frame.url)) return false;
  return new URL(frame.url).pathname.startsWith('/admin/');
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
    // The panel's own pop-ups (the test sign-in) stay inside the app with the same locked-down preferences.
    if (isAllowedUrl(url)) {
      return { action: 'allow', overrideBrowserWindowOptions: { width: 520, height: 720, webPreferences: { ...secureWebPreferences } } };
    }
    openOutside(url);
    return { action: 'deny' };
  });
}

const normalizePem = (pem: string) => pem.replace(/\r/g, '').trim();

/** True when `certificate`'s chain contains the installation's own local CA (LAN TLS mode). */
function chainedToLocalCa(certificate: Certificate, caPem: string): boolean {
  for (let cert: Certificate | undefined = certificate, depth = 0; cert && depth < 8; cert = cert.issuerCert, depth++) {
    if (normalizePem(cert.data) === caPem) return true;
  }
  return false;
}

/**
 * `caPath`: `<data>/tls/ca.pem`. With GATEHOUSE_TLS=auto the server presents a certificate from its
 * own local CA; the window trusts exactly that CA, and only for the server's origin.
 */
export function installSecurity(caPath?: string): void {
  app.on('web-contents-created', (_event, contents) => harden(contents));
  app.on('certificate-error', (event, _contents, url, _error, certificate, callback) => {
    if (!caPath || !isAllowedUrl(url) || !existsSync(caPath)) return callback(false);
    if (chainedToLocalCa(certificate, normalizePem(readFileSync(caPath, 'utf8')))) {
      event.preventDefault();
      return callback(true);
    }
    callback(false);
  });
  app.whenReady().then(() => {
    // The panel needs no camera, notifications, geolocation, …
    session.defaultSession.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
    session.defaultSession.setPermissionCheckHandler(() => false);
  });
}
