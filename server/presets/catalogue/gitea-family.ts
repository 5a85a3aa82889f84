/** What Gitea and its fork Forgejo share: the authentication source's name and `admin auth add-oauth`. */
import { PLACEHOLDERS } from '../build.js';
import type { PresetInput, SetupContext } from '../types.js';

export const sourceNameInput: PresetInput = {
  key: 'sourceName', label: 'Authentication source name', example: 'gatehouse', kind: 'text', required: false, default: 'gatehouse',
  pattern: { source: '^[A-Za-z0-9_-]{1,64}$', message: 'letters, digits, - and _ only (at most 64)' },
  hint: 'The name of the authentication source; it is part of the callback address.',
};

/** The `<binary> admin auth add-oauth` command for this application. */
export function addOauthCommand(binary: 'gitea' | 'forgejo', c: SetupContext, scopes: string[]): string {
  return [
    `${binary} admin auth add-oauth \\`,
    `  --name '${c.inputs.sourceName ?? 'gatehouse'}' --provider openidConnect \\`,
    `  --key '${c.app.id}' --secret '${PLACEHOLDERS.clientSecret}' \\`,
    `  --auto-discover-url '${c.discoveryUrl}' \\`,
    `  ${scopes.map((s) => `--scopes ${s}`).join(' ')} \\`,
    `  --group-claim-name groups${c.inputs.adminGroup ? ` --admin-group '${c.inputs.adminGroup}'` : ''}`,
  ].join('\n') + '\n';
}
