/**
 * The hosted pages' own module (served from our origin as /assets/js/pages.js; CSP
 * `script-src 'self'`). Everything here improves a page that already works without it:
 *
 * - `[data-toggle-password]`: a show/hide button for a password field (hidden until this runs).
 * - `[data-strength-input]`: a strength hint under a new password, from @zxcvbn-ts/core with the
 *   common dictionaries and the page language's own (loaded on the first key press, as a chunk of
 *   its own: most visitors never type a new password).
 * - `[data-countdown]`: the sign-in lock-out's "Try again in N seconds", counting down.
 * - `form[data-auto-submit]`: a form that carries a protocol message onward (the SAML identity
 *   provider's HTTP-POST binding) is submitted at once; its Continue button stays for a browser
 *   without script.
 *
 * The words come from the page (data attributes filled from the catalogues), so this module
 * holds no text of its own.
 */

function passwordToggles(): void {
  for (const button of document.querySelectorAll<HTMLButtonElement>('[data-toggle-password]')) {
    const input = document.getElementById(button.dataset.togglePassword ?? '');
    if (!(input instanceof HTMLInputElement)) continue;
    button.hidden = false;
    button.addEventListener('click', () => {
      const show = input.type === 'password';
      input.type = show ? 'text' : 'password';
      button.setAttribute('aria-pressed', String(show));
      button.textContent = (show ? button.dataset.hide : button.dataset.show) ?? button.textContent;
    });
  }
}

type Estimator = (password: string) => number;
let estimator: Promise<Estimator> | undefined;

/** zxcvbn with the common dictionaries and the page language's. */
function loadEstimator(lang: string): Promise<Estimator> {
  estimator ??= (async () => {
    const [core, common, own] = await Promise.all([
      import('@zxcvbn-ts/core'),
      import('@zxcvbn-ts/language-common'),
      lang === 'de' ? import('@zxcvbn-ts/language-de')
        : lang === 'fr' ? import('@zxcvbn-ts/language-fr')
        : lang === 'es' ? import('@zxcvbn-ts/language-es-es')
        : import('@zxcvbn-ts/language-en'),
    ]);
    const zxcvbn = new core.ZxcvbnFactory({
      graphs: common.adjacencyGraphs,
      dictionary: { ...common.dictionary, ...own.dictionary },
    });
    return (password: string) => zxcvbn.check(password.slice(0, 100)).score;
  })();
  return estimator;
}

function strengthHints(): void {
  for (const input of document.querySelectorAll<HTMLInputElement>('[data-strength-input]')) {
    const hint = document.getElementById(input.dataset.strengthInput ?? '');
    if (!hint) continue;
    const labels = (hint.dataset.labels ?? '').split('|');
    let timer: ReturnType<typeof setTimeout> | undefined;
    input.addEventListener('input', () => {
      clearTimeout(timer);
      timer = setTimeout(async () => {
        const value = input.value;
        if (!value) {
          hint.hidden = true;
          return;
        }
        const score = (await loadEstimator(hint.dataset.lang ?? 'en'))(value);
        if (input.value !== value) return;
        hint.textContent = `${hint.dataset.prefix ?? ''} ${labels[score] ?? ''}`.trim();
        hint.dataset.score = String(score);
        hint.hidden = false;
      }, 150);
    });
  }
}

function countdowns(): void {
  for (const box of document.querySelectorAll<HTMLElement>('[data-countdown]')) {
    const end = Date.now() + Number(box.dataset.countdown) * 1000;
    // The first sentence was announced with the page; the ticking is not read out each second.
    box.setAttribute('aria-live', 'off');
    const tick = () => {
      const left = Math.ceil((end - Date.now()) / 1000);
      if (left <= 0) {
        box.setAttribute('aria-live', 'polite');
        box.textContent = box.dataset.done ?? '';
        box.classList.replace('error', 'notice');
        return;
      }
      box.textContent = ((left === 1 ? box.dataset.one : box.dataset.other) ?? '').replace('#', String(left));
      // Wake at the next whole second left.
      setTimeout(tick, (end - Date.now()) % 1000 || 1000);
    };
    tick();
  }
}

function autoSubmit(): void {
  const form = document.querySelector<HTMLFormElement>('form[data-auto-submit]');
  form?.submit();
}

passwordToggles();
strengthHints();
countdowns();
autoSubmit();
