/**
 * Small building blocks: loading/empty/error states, tables that scroll in their own box, form
 * fields with their messages, copy buttons, confirmation dialog, toasts.
 */
import { createEffect, createSignal, createUniqueId, For, Show, type JSX, type Resource } from 'solid-js';
import { ApiError } from './api';
import { strings } from './strings';

const t = strings.common;

export function Loading(props: { label?: string }) {
  return (
    <p class="muted" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" /> {props.label ?? t.loading}
    </p>
  );
}

export function Empty(props: { children: JSX.Element }) {
  return <div class="empty">{props.children}</div>;
}

/**
 * A wide table in a box of its own that scrolls sideways on a narrow screen, so the page itself
 * never does. The box is a labelled, focusable region: keyboard users can scroll it too.
 */
export function TableScroll(props: { label: string; children: JSX.Element }) {
  return (
    <div class="table-scroll" role="region" aria-label={props.label} tabindex="0">
      {props.children}
    </div>
  );
}

/**
 * A table of rows in its own scrolling box. An empty string in `columns` is an unlabelled
 * column (row actions).
 */
export function DataTable<T>(props: {
  rows: readonly T[];
  columns: readonly string[];
  /** What the table lists, for its scroll region. */
  label: string;
  class?: string;
  children: (row: T) => JSX.Element;
}) {
  return (
    <TableScroll label={props.label}>
      <table class={props.class}>
        <thead>
          <tr>
            <For each={props.columns}>{(column) => <th>{column}</th>}</For>
          </tr>
        </thead>
        <tbody>
          <For each={props.rows}>{(row) => props.children(row)}</For>
        </tbody>
      </table>
    </TableScroll>
  );
}

/** A list shown as a table, or its empty state when there are no rows. */
export function ListTable<T>(props: {
  rows: readonly T[];
  columns: readonly string[];
  empty: JSX.Element;
  label: string;
  children: (row: T) => JSX.Element;
}) {
  return (
    <Show when={props.rows.length} fallback={<Empty>{props.empty}</Empty>}>
      <DataTable rows={props.rows} columns={props.columns} label={props.label}>
        {props.children}
      </DataTable>
    </Show>
  );
}

/**
 * A failure in words. With `fieldsShown`, a validation problem's field messages are left to the
 * fields (<Field errors>) and the box says only what went wrong overall.
 */
export function ErrorBox(props: { error: unknown; fieldsShown?: boolean }) {
  const text = () => {
    const e = props.error;
    if (props.fieldsShown && e instanceof ApiError && e.problem.errors?.length) return e.problem.detail ?? e.message;
    return e instanceof Error ? e.message : String(e);
  };
  return (
    <Show when={props.error}>
      <div class="error" role="alert">
        {text()}
      </div>
    </Show>
  );
}

/**
 * A labelled form field with its hint and its messages in words, one per line, tied to the input
 * (`aria-describedby`, `aria-invalid`). `children` renders the input with the given attributes.
 */
export function Field(props: {
  label: JSX.Element;
  hint?: JSX.Element;
  errors?: readonly string[];
  children: (a: { id: string; 'aria-describedby': string | undefined; 'aria-invalid': boolean }) => JSX.Element;
}) {
  const id = createUniqueId();
  const hintId = `${id}-hint`;
  const errorId = `${id}-errors`;
  const bad = () => Boolean(props.errors?.length);
  const describedBy = () => [props.hint ? hintId : '', bad() ? errorId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field" classList={{ invalid: bad() }}>
      <label for={id}>{props.label}</label>
      {props.children({
        id,
        get 'aria-describedby'() {
          return describedBy();
        },
        get 'aria-invalid'() {
          return bad();
        },
      })}
      <Show when={props.hint}>
        <span class="hint" id={hintId}>
          {props.hint}
        </span>
      </Show>
      <div id={errorId} class="field-errors" aria-live="polite">
        <For each={props.errors ?? []}>{(message) => <p>{message}</p>}</For>
      </div>
    </div>
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
    <button type="button" class="small" onClick={copy} aria-label={t.copyLabel(props.label ?? 'value')}>
      {done() ? t.copied : t.copy}
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
                {t.cancel}
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
  if (!iso) return t.none;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/**
 * The row under a protocol tab's form (forward auth, SAML, RADIUS): the submit button, and the
 * button that turns the protocol off for the application, shown only while it is on.
 */
export function SaveOrTurnOff(props: { save: string; off: string; on: boolean; busy: boolean; saveDisabled?: boolean; onTurnOff: () => void }) {
  return (
    <div class="actions">
      <button class="primary" type="submit" disabled={props.busy || props.saveDisabled}>
        {props.save}
      </button>
      <Show when={props.on}>
        <button type="button" class="danger" disabled={props.busy} onClick={() => props.onTurnOff()}>
          {props.off}
        </button>
      </Show>
    </div>
  );
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
