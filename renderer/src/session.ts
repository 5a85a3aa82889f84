/**
 * Where the panel gets its server URL and admin token: from Electron's preload bridge when it runs
 * in the desktop app, otherwise from a sign-in screen (kept in sessionStorage for this tab only).
 */
import { createSignal } from 'solid-js';

export interface GatehouseBridge {
  getConfig(): Promise<{ serverUrl: string; adminToken: string }>;
  openExternal?(url: string): Promise<void>;
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
  /** A 401 with the stored token: back to the sign-in screen with a note. */
  expired() {
    if (window.gatehouse) return;
    sessionStorage.removeItem(KEY);
    setExpiredNotice(true);
    setToken(null);
  },
};
