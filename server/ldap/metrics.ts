/** `gatehouse_ldap_binds_total{result}` (spec ldap.md, "Operations"): binds by result, counted by bind.ts. */
import type { AppContext } from '../context.js';

/** LDAP binds (spec ldap.md): success, `invalidCredentials`, or `busy` (the back-off's delay). */
export type LdapBindResult = 'success' | 'invalid_credentials' | 'busy';

export const LDAP_BINDS = { name: 'gatehouse_ldap_binds_total', help: 'LDAP binds by result.', labelNames: ['result'] } as const;

export function countBind(ctx: Pick<AppContext, 'metrics'>, result: LdapBindResult): void {
  ctx.metrics.counter(LDAP_BINDS).inc({ result });
}
