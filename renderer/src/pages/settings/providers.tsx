import { createResource, For } from 'solid-js';
import { client, ok } from '../../api';
import { Async, CopyButton, DataTable } from '../../ui';

const t = {
  title: 'Sign-in providers',
  intro: [
    'External providers are configured on the server with environment variables (restart after changing them). The callback URL of each is ',
    '{issuer}/api/auth/callback/{provider}',
    '.',
  ] as const,
  table: 'Sign-in providers',
  columns: ['Provider', 'Status', 'Environment variables'],
  configured: 'configured',
  notConfigured: 'not configured',
  variables: (name: string) => `${name} variables`,
  noneNeeded: 'none needed',
};

/** The providers and whether each is configured (shared with the sign-in policy tab). */
export const loadProviders = () => ok(client.GET('/api/admin/auth/providers')).then((d) => d.providers);

export function ProvidersPage() {
  const [providers] = createResource(loadProviders);
  return (
    <>
      <h1>{t.title}</h1>
      <p class="muted">
        {t.intro[0]}
        <code>{t.intro[1]}</code>
        {t.intro[2]}
      </p>
      <Async resource={providers}>
        {(list) => (
          <DataTable label={t.table} columns={t.columns} rows={list}>
            {(p) => (
              <tr>
                <td>
                  {p.name} <code>{p.id}</code>
                </td>
                <td>{p.configured ? <span class="badge ok">{t.configured}</span> : <span class="badge warn">{t.notConfigured}</span>}</td>
                <td>
                  {p.env_vars.length ? (
                    <span class="row">
                      <For each={p.env_vars}>{(v) => <code>{v}</code>}</For>
                      <CopyButton value={p.env_vars.map((v) => `${v}=`).join('\n')} label={t.variables(p.name)} />
                    </span>
                  ) : (
                    <span class="muted">{t.noneNeeded}</span>
                  )}
                </td>
              </tr>
            )}
          </DataTable>
        )}
      </Async>
    </>
  );
}
