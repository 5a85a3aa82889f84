/**
 * Who the panel acts as, and with which bearer token:
 * - in the desktop app, the local admin token from Electron's preload bridge;
 * - "Sign in with Gatehouse" (spec administrators-and-people.md): a named administrator's panel
 *   access token, got through the built-in client with code + PKCE and renewed with its refresh
 *   token before it expires. Both tokens live in this page's memory only — never in storage, a
 *   cookie or a URL — so no page outside /admin/ can read them. A reload signs in again silently
 *   (`prompt=none`: the Gatehouse session cookie answers), remembered by a flag in sessionStorage
 *   that holds no secret; the PKCE verifier waits there only during the redirect, with the panel
 *   page the sign-in started on (its `return_to`, server/pages/return-to.ts), where it ends: a
 *   link into the panel survives the sign-in and a second-factor enrolment.
 * - "Use the admin token": the token typed on the sign-in screen, kept in sessionStorage for this tab.
 */
import { createSignal } from 'solid-js';
import { panelReturnTo } from '../../server/pages/return-to';

export interface GatehouseBridge {
  getConfig(): Promise<{ serverUrl: string; adminToken: string }>;
}

declare global {
  interface Window {
    gatehouse?: GatehouseBridge;
  }
}

/** How the panel's own sign-in reaches the built-in client (`GET /api/setup`). */
export interface PanelSignIn {
  issuer: string;
  clientId: string;
  redirectUri: string;
  audience: string;
  scope: string;
}

const KEY = 'gatehouse.adminToken';
/** Set while signed in with Gatehouse: a reload signs in again silently. Holds no secret. */
const SIGNED_IN_FLAG = 'gatehouse.panelSignIn';
/** The state, PKCE verifier and `return_to` of a sign-in under way (only during the redirect). */
const PENDING = 'gatehouse.panelPending';

interface Pending {
  state: string;
  verifier: string;
  silent: boolean;
  returnTo?: string;
}

/** The panel page this tab shows: where a sign-in started here comes back to. */
const here = () => panelReturnTo(`${location.pathname}${location.search}${location.hash}`);

const [token, setToken] = createSignal<string | null>(null);
const [mode, setMode] = createSignal<'token' | 'panel' | null>(null);
const [serverUrl, setServerUrl] = createSignal('');
const [expiredNotice, setExpiredNotice] = createSignal(false);

let refreshToken: string | undefined;
let renewal: ReturnType<typeof setTimeout> | undefined;
let signInConfig: PanelSignIn | undefined;

function base64url(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
const random = (n: number) => base64url(crypto.getRandomValues(new Uint8Array(n)));
async function challengeOf(verifier: string): Promise<string> {
  return base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))));
}

interface TokenAnswer {
  access_token?: string;
  refresh_token?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

async function tokenRequest(form: Record<string, string>): Promise<TokenAnswer> {
  const response = await fetch('/api/auth/oauth2/token', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  const body = (await response.json().catch(() => ({}))) as TokenAnswer;
  if (!response.ok || !body.access_token) throw new Error(body.error_description ?? body.error ?? `The token endpoint answered ${response.status}.`);
  return body;
}

/** Keeps the panel token fresh: renews at four fifths of its life while the Gatehouse session lives. */
function accept(answer: TokenAnswer) {
  refreshToken = answer.refresh_token ?? refreshToken;
  setToken(answer.access_token!);
  setMode('panel');
  setExpiredNotice(false);
  sessionStorage.setItem(SIGNED_IN_FLAG, '1');
  clearTimeout(renewal);
  const lifetime = Math.max(30, answer.expires_in ?? 600);
  renewal = setTimeout(() => void renew(), lifetime * 800);
}

async function renew(): Promise<boolean> {
  if (!refreshToken || !signInConfig) return false;
  try {
    accept(await tokenRequest({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: signInConfig.clientId }));
    return true;
  } catch {
    // The session ended or the role went: back to the sign-in screen.
    forget(true);
    return false;
  }
}

function forget(notice: boolean) {
  clearTimeout(renewal);
  refreshToken = undefined;
  sessionStorage.removeItem(SIGNED_IN_FLAG);
  sessionStorage.removeItem(KEY);
  setToken(null);
  setMode(null);
  setExpiredNotice(notice);
}

export const session = {
  token,
  mode,
  serverUrl,
  expiredNotice,
  desktop: () => Boolean(window.gatehouse),
  async init(): Promise<void> {
    if (window.gatehouse) {
      const config = await window.gatehouse.getConfig();
      // The window is loaded from the server, so same-origin requests are the norm.
      setServerUrl(new URL(config.serverUrl).origin === location.origin ? '' : config.serverUrl.replace(/\/$/, ''));
      setToken(config.adminToken);
      setMode('token');
      return;
    }
    const stored = sessionStorage.getItem(KEY);
    if (stored) {
      setToken(stored);
      setMode('token');
    }
  },
  /** Whether a reload should sign in again silently (the panel was signed in with Gatehouse). */
  wasSignedIn: () => sessionStorage.getItem(SIGNED_IN_FLAG) === '1',
  configure(config: PanelSignIn) {
    signInConfig = config;
  },
  /**
   * Off to Gatehouse's own sign-in (the hosted pages), or silently with `prompt=none`; it comes
   * back to `returnTo` (this page by default), checked as the hosted pages check theirs.
   */
  async startPanelSignIn(silent = false, returnTo = here()): Promise<void> {
    const config = signInConfig;
    if (!config) throw new Error('The sign-in settings have not loaded yet.');
    const issuerOrigin = new URL(config.issuer).origin;
    // The sign-in comes back to the issuer's own /admin/: start there (on the same page), so the verifier is found.
    if (issuerOrigin !== location.origin) {
      location.assign(`${issuerOrigin}${panelReturnTo(returnTo)}`);
      return;
    }
    const verifier = random(48);
    const state = random(16);
    const pending: Pending = { state, verifier, silent, returnTo: panelReturnTo(returnTo) };
    sessionStorage.setItem(PENDING, JSON.stringify(pending));
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: config.clientId,
      redirect_uri: config.redirectUri,
      scope: config.scope,
      state,
      code_challenge: await challengeOf(verifier),
      code_challenge_method: 'S256',
      resource: config.audience,
      ...(silent ? { prompt: 'none' } : {}),
    });
    location.assign(`/api/auth/oauth2/authorize?${params.toString()}`);
  },
  /**
   * On /admin/signed-in: takes the code out of the address bar and history at once, putting the
   * page the sign-in started on (its `return_to`, checked again: the storage is the origin's)
   * there instead, then exchanges the code (checked against the state and verifier this tab sent).
   */
  async finishPanelSignIn(): Promise<{ ok: true } | { ok: false; error: string; silent: boolean }> {
    const q = new URLSearchParams(location.search);
    let pending: Pending | null = null;
    try {
      pending = JSON.parse(sessionStorage.getItem(PENDING) ?? 'null') as Pending | null;
    } catch {
      pending = null;
    }
    sessionStorage.removeItem(PENDING);
    history.replaceState(null, '', panelReturnTo(pending?.returnTo));
    const silent = pending?.silent ?? false;
    if (!pending || q.get('state') !== pending.state) return { ok: false, error: 'This sign-in was not started here. Start it again.', silent };
    if (q.get('error')) return { ok: false, error: q.get('error_description') ?? q.get('error')!, silent };
    const code = q.get('code');
    if (!code || !signInConfig) return { ok: false, error: 'The sign-in came back without a code.', silent };
    try {
      accept(
        await tokenRequest({
          grant_type: 'authorization_code',
          code,
          redirect_uri: signInConfig.redirectUri,
          client_id: signInConfig.clientId,
          code_verifier: pending.verifier,
          resource: signInConfig.audience,
        }),
      );
      return { ok: true };
    } catch (error) {
      return { ok: false, error: (error as Error).message, silent };
    }
  },
  signIn(value: string) {
    sessionStorage.setItem(KEY, value);
    setExpiredNotice(false);
    setToken(value);
    setMode('token');
  },
  /** Signing out of the panel signed in with Gatehouse ends the Gatehouse session too (and its tokens). */
  async signOut(): Promise<void> {
    const wasPanel = mode() === 'panel';
    forget(false);
    if (wasPanel) {
      await fetch('/api/auth/sign-out', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(() => undefined);
    }
  },
  /**
   * After a 401: true when a newer token is there to retry with — desktop: the shell's (it reads
   * it on every call, so a rotated token shows up); panel: a renewed one. `refused` is the token
   * the server just turned down (comparing with that lets concurrent 401s all retry).
   */
  async reload(refused: string): Promise<boolean> {
    if (mode() === 'panel') return (await renew()) && token() !== refused;
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
    forget(true);
  },
};
