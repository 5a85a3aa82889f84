/**
 * Where the panel gets its server URL and admin token: from Electron's preload bridge when it runs
 * in the desktop app, otherwise from a sign-in screen (kept in sessionStorage for this tab only).
 */
import { createSignal } from 'solid-js';

export interface GatehouseBridge {
  getConfig(): Promise<{ serverUrl: string; adminToken: string }>;
}

declare global {
  interface Window {
    gatehouse?: GatehouseBridge;
  }
}

const KEY = 'gatehouse.adminToken';
const [token, setToken] = createSignal<string | null>(null);
const [serverUrl, setServerUrl] = createSignal('');
const [expiredNotice, setExpiredNotice] = createSignal(false);

export const session = {
  token,
  serverUrl,
  expiredNotice,
  desktop: () => Boolean(window.gatehouse),
  async init(): Promise<void> {
    if (window.gatehouse) {
      const config = await window.gatehouse.getConfig();
      // The window is loaded from the server, so same-origin requests are the norm.
      setServerUrl(new URL(config.serverUrl).origin === location.origin ? '' : config.serverUrl.replace(/\/$/, ''));
      setToken(config.adminToken);
      return;
    }
    setToken(sessionStorage.getItem(KEY));
  },
  signIn(value: string) {
    sessionStorage.setItem(KEY, value);
    setExpiredNotice(false);
    setToken(value);
  },
  signOut() {
    sessionStorage.removeItem(KEY);
    setToken(null);
  },
  /**
   * Desktop: asks the shell for the admin token again (it reads it on every call, so a rotated
   * token or a changed ADMIN_TOKEN shows up). True when it differs from `refused`, the one the
   * server just turned down (comparing with that, not the current one, lets concurrent 401s all retry).
   */
  async reload(refused: string): Promise<boolean> {
    if (!window.gatehouse) return false;
    try {
      const config = await window.gatehouse.getConfig();
      if (!config.adminToken || config.adminToken === refused) return false;
      if (config.adminToken !== token()) setToken(config.adminToken);
      return true;
    } catch {
      return false;
    }
  },
  /** A 401 with the stored token: back to the sign-in screen with a note. */
  expired() {
    if (window.gatehouse) return;
    sessionStorage.removeItem(KEY);
    setExpiredNotice(true);
    setToken(null);
  },
};
