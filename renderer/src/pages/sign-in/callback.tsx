/**
 * Landing page of the test sign-in's redirect (`/admin/callback`): hands the code to the panel tab
 * that started the flow (BroadcastChannel, same origin) and closes itself. Needs no admin token.
 */
import { onMount } from 'solid-js';
import { CALLBACK_CHANNEL, type CallbackResult } from '../../oauth';

const t = {
  title: 'Test sign-in',
  ended: (error: string, description: string | null) => `The sign-in ended with “${error}”${description ? `: ${description}` : ''}.`,
  signedIn: 'Signed in. Return to the control panel to see the token.',
  close: 'You can close this window.',
};

export function CallbackPage() {
  const q = new URLSearchParams(location.search);
  const result: CallbackResult = {
    state: q.get('state'),
    code: q.get('code'),
    iss: q.get('iss'),
    error: q.get('error'),
    error_description: q.get('error_description'),
  };
  onMount(() => {
    const channel = new BroadcastChannel(CALLBACK_CHANNEL);
    channel.postMessage(result);
    channel.close();
    // Remove the code from the address bar and history.
    history.replaceState(null, '', '/admin/callback');
    setTimeout(() => window.close(), 300);
  });
  return (
    <main class="signin">
      <div class="card">
        <h1>{t.title}</h1>
        <p>{result.error ? t.ended(result.error, result.error_description) : t.signedIn}</p>
        <p class="hint">{t.close}</p>
      </div>
    </main>
  );
}
