/**
 * Admin lists come a page at a time (DESIGN §4.2: `limit` at most 200, then `nextCursor`). Long
 * lists (members, invitations, API keys) show the first page and a "Load more" button; short ones
 * a panel needs whole (applications, SSO groups) are read to the end.
 */
import { createResource, createSignal, Show, type Resource } from 'solid-js';
import { api, enc, listOf } from './api';
import { ErrorBox, useAction } from './ui';

const PAGE = 200; // the API's largest page

interface Page<T> {
  rows: T[];
  nextCursor: string | null;
}

function withQuery(path: string, params: Record<string, string>): string {
  const query = Object.entries(params)
    .map(([k, v]) => `${k}=${enc(v)}`)
    .join('&');
  return `${path}${path.includes('?') ? '&' : '?'}${query}`;
}

async function getPage<T>(path: string, cursor?: string): Promise<Page<T>> {
  const data = await api.get<{ nextCursor?: string | null }>(withQuery(path, cursor ? { limit: String(PAGE), cursor } : { limit: String(PAGE) }));
  return { rows: listOf<T>(data), nextCursor: data?.nextCursor ?? null };
}

/** Every row of a list, following `nextCursor` to the end. */
export async function fetchAll<T>(path: string): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await getPage<T>(path, cursor);
    rows.push(...page.rows);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return rows;
}

export interface PagedList<T> {
  /** The first page, for `<Async>` (loading and error states). */
  first: Resource<Page<T>>;
  /** Every row loaded so far. */
  rows: () => T[];
  hasMore: () => boolean;
  loadMore: () => Promise<void>;
  more: ReturnType<typeof useAction>;
  /** Reloads from the first page (after a change, or when the filters change). */
  refetch: () => void;
}

/** A list read page by page from `path()` (reactive: a new path starts again from the top). */
export function createPagedList<T>(path: () => string): PagedList<T> {
  const [later, setLater] = createSignal<Page<T> | null>(null);
  const [first, { refetch }] = createResource(path, async (p) => {
    const page = await getPage<T>(p);
    setLater(null);
    return page;
  });
  const next = () => (later() ? later()!.nextCursor : (first.latest?.nextCursor ?? null));
  const more = useAction();
  const loadMore = async () => {
    const cursor = next();
    if (!cursor || more.busy()) return;
    const page = await more.run(() => getPage<T>(path(), cursor));
    if (page) setLater((l) => ({ rows: [...(l?.rows ?? []), ...page.rows], nextCursor: page.nextCursor }));
  };
  return {
    first,
    rows: () => [...(first.latest?.rows ?? []), ...(later()?.rows ?? [])],
    hasMore: () => Boolean(next()),
    loadMore,
    more,
    refetch: () => void refetch(),
  };
}

/** The "Load more" button under a paged list, with its own error line. */
export function LoadMore<T>(props: { list: PagedList<T> }) {
  return (
    <>
      <ErrorBox error={props.list.more.error()} />
      <Show when={props.list.hasMore()}>
        <p>
          <button type="button" onClick={() => void props.list.loadMore()} disabled={props.list.more.busy()}>
            {props.list.more.busy() ? 'Loading…' : `Load more (showing ${props.list.rows().length})`}
          </button>
        </p>
      </Show>
    </>
  );
}
