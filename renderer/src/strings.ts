/**
 * Words shared by every screen of the panel: the frame (navigation, sign-in) and common buttons.
 * Each page keeps its own words in one `t` object at its top, so a translation later replaces
 * these objects, not markup. The panel is English for now.
 */
export const strings = {
  product: 'Gatehouse',
  nav: {
    label: 'Main',
    menu: 'Menu',
    closeMenu: 'Close menu',
    overview: 'Overview',
    applications: 'Applications',
    people: 'People',
    groups: 'Groups',
    ssoGroups: 'Shared sign-in',
    providers: 'Sign-in providers',
    directory: 'Directory',
    audit: 'Audit log',
    operations: 'Operations',
    keys: 'Signing keys',
    backups: 'Backups',
    lifecycle: 'Data lifecycle',
    tls: 'LAN TLS',
    administrators: 'Administrators',
    settings: 'Password policy',
    signOut: 'Sign out',
    roles: { owner: 'Owner', people_manager: 'People manager', app_manager: 'App manager' } as Record<string, string>,
    viaToken: 'Admin token',
  },
  signIn: {
    title: 'Gatehouse control panel',
    expired: 'Your sign-in has ended. Sign in again.',
    withGatehouse: 'Sign in with Gatehouse',
    withGatehouseHint: 'Administrators sign in with their Gatehouse account and a second factor.',
    useToken: 'Use the admin token',
    signingIn: 'Signing in…',
    failed: (reason: string) => `The sign-in did not finish: ${reason}`,
    token: 'Admin token',
    hint: 'It is kept only for this browser tab.',
    hintWhere: (file: string, command: string) => [`Find it in `, file, ` or run `, command, `.`] as const,
    checking: 'Checking…',
    submit: 'Sign in',
  },
  common: {
    loading: 'Loading…',
    loadMore: (n: number) => `Load more (showing ${n})`,
    noSuchPage: 'There is no such page.',
    cancel: 'Cancel',
    copy: 'Copy',
    copied: 'Copied',
    copyLabel: (what: string) => `Copy ${what}`,
    none: '—',
    scrollTable: (what: string) => `${what} (scrolls sideways)`,
  },
};

/** "1 address" / "3 addresses". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
