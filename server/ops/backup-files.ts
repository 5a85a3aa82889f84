/**
 * Files of the data directory that travel in a backup besides the database: one registration
 * point. A feature that keeps a file the server cannot do without (a key, a certificate) adds a
 * line here; backup and restore carry it, and restore accepts no other name (so an archive can
 * never write outside these paths).
 *
 * `encryptedOnly` files hold private keys (or belong to a set that does), so they travel only in
 * encrypted backups: an unencrypted one (`gatehouse backup --unencrypted`, or the pre-migration
 * copy kept in the data directory when no passphrase is configured) leaves them out, and its
 * restore leaves the directory's own copies in place. The LAN TLS set goes whole or not at all: a
 * certificate without its key is of no use, and the CA key must never be in clear text outside
 * the data directory (issue 22).
 */
export interface CarriedFile {
  /** Path under the data directory, `/`-separated. */
  path: string;
  /** File mode given on restore. */
  mode: 0o600 | 0o644;
  encryptedOnly: boolean;
}

export const DATABASE_ENTRY = 'gatehouse.db';

export const BACKUP_FILES: CarriedFile[] = [
  { path: 'tls/ca.pem', mode: 0o644, encryptedOnly: true },
  { path: 'tls/ca-key.pem', mode: 0o600, encryptedOnly: true },
  { path: 'tls/server.pem', mode: 0o644, encryptedOnly: true },
  { path: 'tls/server-key.pem', mode: 0o600, encryptedOnly: true },
  // Issue 46: GATEHOUSE_TLS=acme's account key and certificate (server/trust/acme/store.ts); after
  // the local CA's files, so restore has made tls/ before tls/acme/.
  { path: 'tls/acme/account-key.pem', mode: 0o600, encryptedOnly: true },
  { path: 'tls/acme/key.pem', mode: 0o600, encryptedOnly: true },
  { path: 'tls/acme/cert.pem', mode: 0o644, encryptedOnly: true },
  // Issue 23: the key that seals TOTP secrets and hashes recovery codes (accounts/second-factor/
  // secret-box.ts). A key, so encrypted backups only: restoring one without it leaves the
  // authenticator apps enrolled so far unreadable (people use a recovery code or get a reset).
  { path: 'second-factor.key', mode: 0o600, encryptedOnly: true },
];

/** The registered file with this archive path, if any. */
export function carriedFile(path: string): CarriedFile | undefined {
  return BACKUP_FILES.find((file) => file.path === path);
}
