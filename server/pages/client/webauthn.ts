/**
 * The hosted pages' one script (served from our origin as /assets/webauthn.js, bundled with
 * @simplewebauthn/browser by scripts/bundle-server.mjs; the pages' CSP allows `script-src 'self'`
 * and nothing else). It drives the passkey buttons the templates mark with `data-webauthn`:
 *
 * - `sign-in`: passkey-first sign-in on /sign-in, by the button and by WebAuthn conditional
 *   mediation (the e-mail field's `autocomplete="username webauthn"`), through the JSON API;
 * - `second-step`: a passkey as the second step; the answer is posted with the page's form;
 * - `register`: a new passkey, through the JSON API (`data-endpoint`) or the page's form.
 *
 * Every word a person reads comes from the page (`#webauthn-messages` data attributes, or the
 * server's problem `detail`), so the templates hold all page text. Passkey controls are hidden
 * until this script finds WebAuthn in the browser.
 */
import {
  WebAuthnAbortService,
  browserSupportsWebAuthn,
  browserSupportsWebAuthnAutofill,
  startAuthentication,
  startRegistration,
} from '@simplewebauthn/browser';

class ServerRefusal extends Error {
  constructor(readonly code: string, detail: string) {
    super(detail);
  }
}

const messages = (): DOMStringMap => document.getElementById('webauthn-messages')?.dataset ?? {};

/** A failure in words: the browser's WebAuthn errors by name, the server's by its detail. */
function words(error: unknown): string {
  const m = messages();
  if (error instanceof ServerRefusal) return error.message;
  const name = (error as { name?: string })?.name;
  if (name === 'NotAllowedError' || name === 'AbortError') return m.notAllowed ?? '';
  if (name === 'InvalidStateError') return m.invalidState ?? '';
  if (name === 'SecurityError') return m.insecure ?? '';
  return m.failed ?? '';
}

async function postJson<T>(url: string, body: unknown = {}): Promise<T> {
  const res = await fetch(url, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const data = (await res.json().catch(() => ({}))) as { code?: string; detail?: string };
  if (!res.ok) throw new ServerRefusal(data.code ?? 'failed', data.detail ?? messages().failed ?? '');
  return data as T;
}

function statusFor(button: HTMLElement): HTMLElement | null {
  return button.closest('[data-webauthn-box]')?.querySelector<HTMLElement>('[data-webauthn-status]') ?? null;
}

function show(button: HTMLElement, text: string): void {
  const status = statusFor(button);
  if (!status) return;
  status.textContent = text;
  status.hidden = text === '';
}

/** Puts the browser's answer into the button's form and submits it (a page that finishes server-side). */
function submitWith(button: HTMLElement, answer: unknown, name?: string): void {
  const form = button.closest('form');
  if (!form) return;
  const field = form.querySelector<HTMLInputElement>('input[name="response"]');
  if (field) field.value = JSON.stringify(answer);
  const nameField = form.querySelector<HTMLInputElement>('input[name="name"]');
  if (nameField && name !== undefined) nameField.value = name;
  form.submit();
}

async function signIn(button: HTMLElement, autofill: boolean): Promise<void> {
  const d = button.dataset;
  const optionsJSON = await postJson<Parameters<typeof startAuthentication>[0]['optionsJSON']>(d.options!);
  const answer = await startAuthentication({ optionsJSON, useBrowserAutofill: autofill });
  await postJson(d.endpoint!, { response: answer, ...(d.application ? { applicationId: d.application } : {}) });
  window.location.assign(d.next ?? '/account');
}

async function secondStep(button: HTMLElement): Promise<void> {
  const optionsJSON = await postJson<Parameters<typeof startAuthentication>[0]['optionsJSON']>(button.dataset.options!);
  submitWith(button, await startAuthentication({ optionsJSON }));
}

async function register(button: HTMLElement): Promise<void> {
  const d = button.dataset;
  const box = button.closest('[data-webauthn-box]');
  const name = box?.querySelector<HTMLInputElement>('input[data-passkey-name]')?.value.trim() || d.defaultName || 'Passkey';
  const optionsJSON = await postJson<Parameters<typeof startRegistration>[0]['optionsJSON']>(d.options!);
  const answer = await startRegistration({ optionsJSON });
  if (!d.endpoint) return submitWith(button, answer, name);
  await postJson(d.endpoint, { name, response: answer });
  window.location.assign(d.next ?? window.location.pathname);
}

const ACTIONS: Record<string, (button: HTMLElement) => Promise<void>> = {
  'sign-in': (button) => signIn(button, false),
  'second-step': secondStep,
  register,
};

function wire(button: HTMLElement): void {
  const action = ACTIONS[button.dataset.webauthn ?? ''];
  if (!action) return;
  button.addEventListener('click', (event) => {
    event.preventDefault();
    show(button, '');
    button.setAttribute('aria-busy', 'true');
    action(button)
      .catch((error: unknown) => show(button, words(error)))
      .finally(() => button.removeAttribute('aria-busy'));
  });
}

/** Conditional mediation: the browser offers its passkeys in the e-mail field's autofill. */
async function autofill(button: HTMLElement): Promise<void> {
  if (!(await browserSupportsWebAuthnAutofill())) return;
  document.documentElement.dataset.passkeyAutofill = 'on';
  try {
    await signIn(button, true);
  } catch (error) {
    // A conditional request is cancelled whenever the button starts a modal one: not a failure.
    const name = (error as { name?: string })?.name;
    if (name !== 'AbortError' && !(name === 'NotAllowedError' && !(error instanceof ServerRefusal))) show(button, words(error));
  }
}

function start(): void {
  if (!browserSupportsWebAuthn()) return;
  if (!window.isSecureContext) {
    document.querySelectorAll<HTMLElement>('[data-webauthn-insecure]').forEach((el) => (el.hidden = false));
    return;
  }
  document.querySelectorAll<HTMLElement>('[data-webauthn-only]').forEach((el) => (el.hidden = false));
  const buttons = [...document.querySelectorAll<HTMLElement>('[data-webauthn]')];
  buttons.forEach(wire);
  const conditional = buttons.find((b) => b.dataset.webauthn === 'sign-in' && b.dataset.autofill === 'on');
  if (conditional) void autofill(conditional);
  // Leaving the page cancels a conditional request still waiting.
  window.addEventListener('pagehide', () => WebAuthnAbortService.cancelCeremony());
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
