/**
 * Admin lists come a page at a time (DESIGN §4.2: `limit` at most 200, then `nextCursor`). Long
 * lists (members, invitations, API keys, people) show the first page and a "Load more" button;
 * short ones a panel needs whole (applications, SSO groups) are read to the end.
 *
 * A list is read through a typed page function, e.g.
 *   (cursor) => ok(client.GET('/api/admin/sso-groups', { params: { query: { limit: PAGE, cursor } } })).then((d) => page(d.ssoGroups, d))
 */
import { createResource, createSignal, Show, type Resource } from 'solid-js';
import { ErrorBox, useAction } from './ui';
import { strings } from './strings';

export const PAGE = 200; // the API's largest page

export interface Page<T> {
  rows: T[];
  nextCursor: string | null;
}

/** Reads one page of rows; `cursor` is undefined for the first page. */
export type PageFn<T> = (cursor: string | undefined) => Promise<Page<T>>;

export const page = <T,>(rows: T[], answer: { nextCursor: string | null }): Page<T> => ({ rows, nextCursor: answer.nextCursor });

/** Every row of a list, following `nextCursor` to the end. */
export async function fetchAll<T>(read: PageFn<T>): Promise<T[]> {
  const rows: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await read(cursor);
    rows.push(...p.rows);
    cursor = p.nextCursor ?? undefined;
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

/**
 * A list read page by page. `source()` is reactive (filters): when it changes, the list starts
 * again from the top; `read(source, cursor)` reads one page for it.
 */
export function createPagedList<S, T>(source: () => S, read: (source: S, cursor: string | undefined) => Promise<Page<T>>): PagedList<T> {
  const [later, setLater] = createSignal<Page<T> | null>(null);
  const [first, { refetch }] = createResource(source, async (s) => {
    const p = await read(s, undefined);
    setLater(null);
    return p;
  });
  const next = () => (later() ? later()!.nextCursor : (first.latest?.nextCursor ?? null));
  const more = useAction();
  const loadMore = async () => {
    const cursor = next();
    if (!cursor || more.busy()) return;
    const p = await more.run(() => read(source(), cursor));
    if (p) setLater((l) => ({ rows: [...(l?.rows ?? []), ...p.rows], nextCursor: p.nextCursor }));
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
            {props.list.more.busy() ? strings.common.loading : strings.common.loadMore(props.list.rows().length)}
          </button>
        </p>
      </Show>
    </>
  );
}
