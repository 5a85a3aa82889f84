/** Small building blocks: loading/empty/error states, copy buttons, confirmation dialog, toasts. */
import { createEffect, createSignal, For, Show, type JSX, type Resource } from 'solid-js';

export function Loading(props: { label?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {props.label ?? 'Loading…'}
    </p>
  );
}

export function Empty(props: { children: JSX.Element }) {
  return <div class="empty">{props.children}</div>;
}

/**
 * A list shown as a table, or its empty state when there are no rows. An empty string in
 * `columns` is an unlabelled column (row actions).
 */
export function ListTable<T>(props: {
  rows: readonly T[];
  columns: string[];
  empty: JSX.Element;
  children: (row: T) => JSX.Element;
}) {
  return (
    <Show when={props.rows.length} fallback={<Empty>{props.empty}</Empty>}>
      <table>
        <thead>
          <tr>
            <For each={props.columns}>{(column) => <th>{column}</th>}</For>
          </tr>
        </thead>
        <tbody>
          <For each={props.rows}>{(row) => props.children(row)}</For>
        </tbody>
      </table>
    </Show>
  );
}

export function ErrorBox(props: { error: unknown }) {
  return (
    <Show when={props.error}>
      <div class="error" role="alert">
        {props.error instanceof Error ? props.error.message : String(props.error)}
      </div>
    </Show>
  );
}

/** Renders a resource: spinner while loading, words on failure, the children otherwise. */
export function Async<T>(props: { resource: Resource<T>; children: (value: T) => JSX.Element; label?: string }) {
  return (
    <Show when={!props.resource.error} fallback={<ErrorBox error={props.resource.error} />}>
      <Show when={props.resource.latest !== undefined} fallback={<Loading label={props.label} />}>
        {props.children(props.resource.latest as T)}
      </Show>
    </Show>
  );
}

export function CopyButton(props: { value: string; label?: string }) {
  const [done, setDone] = createSignal(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
    } catch {
      // Clipboard API refused (insecure context): fall back to a selection copy.
      const area = document.createElement('textarea');
      area.value = props.value;
      document.body.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" class="small" onClick={copy} aria-label={`Copy ${props.label ?? 'value'}`}>
      {done() ? 'Copied' : 'Copy'}
    </button>
  );
}

export function CopyField(props: { label: string; value: string; secret?: boolean }) {
  return (
    <div class="copy-field">
      <span class="label">{props.label}</span>
      <code class={props.secret ? 'secret' : ''} data-testid={`copy-${props.label.toLowerCase().replaceAll(' ', '-')}`}>
        {props.value}
      </code>
      <CopyButton value={props.value} label={props.label} />
    </div>
  );
}

// ---- Confirmation dialog (one, rendered by the layout) ----
interface Pending {
  title: string;
  body: string;
  action: string;
  resolve: (ok: boolean) => void;
}
const [pending, setPending] = createSignal<Pending | null>(null);

/** Asks before a destructive action; resolves true when confirmed. */
export function confirmAction(title: string, body: string, action = 'Delete'): Promise<boolean> {
  return new Promise((resolve) => setPending({ title, body, action, resolve }));
}

export function ConfirmHost() {
  let dialog!: HTMLDialogElement;
  createEffect(() => {
    if (pending() && !dialog.open) dialog.showModal();
  });
  const close = (ok: boolean) => {
    pending()?.resolve(ok);
    setPending(null);
    if (dialog.open) dialog.close();
  };
  return (
    <dialog
      ref={dialog}
      class="confirm"
      aria-labelledby="confirm-title"
      onCancel={(e) => {
        e.preventDefault();
        close(false);
      }}
    >
      <Show when={pending()}>
        {(p) => (
          <form onSubmit={(e) => (e.preventDefault(), close(true))}>
            <h2 id="confirm-title">{p().title}</h2>
            <p>{p().body}</p>
            <div class="actions">
              <button type="button" onClick={() => close(false)} autofocus>
                Cancel
              </button>
              <button type="submit" class="danger">
                {p().action}
              </button>
            </div>
          </form>
        )}
      </Show>
    </dialog>
  );
}

// ---- Toasts ----
const [toasts, setToasts] = createSignal<{ id: number; text: string }[]>([]);
let toastId = 0;
export function toast(text: string) {
  const id = ++toastId;
  setToasts((t) => [...t, { id, text }]);
  setTimeout(() => setToasts((t) => t.filter((x) => x.id !== id)), 4000);
}
export function ToastHost() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      <For each={toasts()}>{(t) => <div class="toast">{t.text}</div>}</For>
    </div>
  );
}

export function when(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Wraps an async action: remembers its error and a busy flag for the button. */
export function useAction() {
  const [busy, setBusy] = createSignal(false);
  const [error, setError] = createSignal<unknown>(null);
  const run = async <T,>(fn: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    try {
      return await fn();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, setError, run };
}
