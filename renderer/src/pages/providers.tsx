import { createResource, For } from 'solid-js';
import { api, type Provider } from '../api';
import { Async, CopyButton } from '../ui';

export function ProvidersPage() {
  const [providers] = createResource(() => api.get<{ providers: Provider[] }>('/api/admin/auth/providers').then((d) => d.providers));
  return (
    <>
      <h1>Sign-in providers</h1>
      <p class="muted">
        External providers are configured on the server with environment variables (restart after changing them). The callback URL of
        each is <code>{'{issuer}'}/api/auth/callback/{'{provider}'}</code>.
      </p>
      <Async resource={providers}>
        {(list) => (
          <table>
            <thead>
              <tr>
                <th>Provider</th>
                <th>Status</th>
                <th>Environment variables</th>
              </tr>
            </thead>
            <tbody>
              <For each={list}>
                {(p) => (
                  <tr>
                    <td>
                      {p.name} <code>{p.id}</code>
                    </td>
                    <td>{p.configured ? <span class="badge ok">configured</span> : <span class="badge warn">not configured</span>}</td>
                    <td>
                      {p.env_vars.length ? (
                        <span class="row">
                          <For each={p.env_vars}>{(v) => <code>{v}</code>}</For>
                          <CopyButton value={p.env_vars.map((v) => `${v}=`).join('\n')} label={`${p.name} variables`} />
                        </span>
                      ) : (
                        <span class="muted">none needed</span>
                      )}
                    </td>
                  </tr>
                )}
              </For>
            </tbody>
          </table>
        )}
      </Async>
    </>
  );
}
