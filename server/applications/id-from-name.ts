/**
 * The id suggested for an application (or SSO group) from its name, the same in the panel's
 * wizard and `gatehouse app create` without `--id`: lower case, runs of anything but a-z and 0-9
 * become one hyphen ("Team Notes" → "team-notes"), at most 63 characters. No imports: the panel
 * bundles it.
 */
export function idFromName(name: string): string {
  return name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63);
}
