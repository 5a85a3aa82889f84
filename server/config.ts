/**
 * Configuration: environment variables and `gatehouse serve` flags → one typed object.
 * Every bad value becomes a `ConfigError` whose message is one clear sentence; the CLI prints
 * it and exits 1 without a stack trace.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isIP } from './util/ip-family.js';
import { parseSwitch } from './util/switches.js';
import { addressEntryProblem, NAMED_RANGES } from './util/address-list.js';
import { DEFAULT_LOCALE, LOCALES, isLocale, type Locale } from './i18n/locales.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export interface Config {
  dataDir: string;
  port: number;
  host: string;
  /** Public base URL, the `iss` of every token; no trailing slash. Resolved after listen when not given. */
  issuer: string;
  /** True when the issuer came from configuration rather than the listen address. */
  issuerConfigured: boolean;
  /** ADMIN_TOKEN or the token file's content; when unset the token lives in `<data>/admin-token`. */
  adminToken: string | undefined;
  /** Where a given admin token came from (`ADMIN_TOKEN`, or the file named), for the start-up line. */
  adminTokenSource: string | undefined;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  sessionTtl: number;
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** Whether to log human-readable lines instead of JSON. */
  prettyLogs: boolean;
  /** HTTPS: off, a local CA under `<data>/tls/` (`auto`), or the administrator's own files. */
  tls: TlsConfig;
  /** Plain-http port that only redirects to https (GATEHOUSE_HTTP_REDIRECT_PORT). */
  httpRedirectPort: number | undefined;
  /** Seconds between automatic backups into `<data>/backups/` (GATEHOUSE_BACKUP_INTERVAL; 0 = off). */
  backupInterval: number;
  /** Automatic backups kept in `<data>/backups/`. */
  backupKeep: number;
  /** Encrypts backups when set (GATEHOUSE_BACKUP_PASSPHRASE). */
  backupPassphrase: string | undefined;
  /** A file whose bytes (at least 32) encrypt backups, instead of a passphrase (GATEHOUSE_BACKUP_KEY_FILE). */
  backupKeyFile: string | undefined;
  /** Seconds between retention sweeps (GATEHOUSE_SWEEP_INTERVAL; 0 = off). */
  sweepInterval: number;
  /** How long ended data is kept before the sweeper deletes it (data-lifecycle/retention-rules.ts). */
  retention: RetentionDays;
  /** Signing keys older than this many days are rotated (GATEHOUSE_KEY_ROTATION_DAYS). */
  keyRotationDays: number;
  /** GATEHOUSE_LOW_MEMORY: asks the launchers for V8's low-memory flags (server/cli/launch.ts). */
  lowMemory: boolean;
  /** GATEHOUSE_IDLE_RECLAIM: give memory back to the system when quiet (server/ops/idle-memory.ts; default on). */
  idleReclaim: boolean;
  /** GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: webhooks may target this machine's loopback addresses (default off). */
  webhookAllowLoopback: boolean;
  /**
   * GATEHOUSE_TRUST_PROXY: the reverse proxies (addresses, CIDR ranges, or `loopback`,
   * `linklocal`, `uniquelocal`) whose X-Forwarded-For / -Proto / -Host are believed; empty: none,
   * and the client address is the connection's (docs/postgresql.md).
   */
  trustProxy: string[];
  /** GATEHOUSE_LOCALE: the language of pages and e-mails when the reader's is not known (default `en`). */
  locale: Locale;
  /** The LDAP directory (spec ldap.md, server/ldap/): off unless GATEHOUSE_LDAP=on or `--ldap`. */
  ldap: LdapConfig;
  /** The RADIUS server (spec radius.md, server/radius/): off unless GATEHOUSE_RADIUS=on or `--radius`. */
  radius: RadiusConfig;
  /** Who may read `GET /metrics` (docs/monitoring.md). */
  metrics: MetricsAccess;
  /** The raw environment, for provider credentials (`<PROVIDER>_CLIENT_ID`, …). */
  env: Record<string, string | undefined>;
}

/** The LDAP listener's settings (spec ldap.md, "Turning it on"; docs/ldap.md). */
export interface LdapConfig {
  /** GATEHOUSE_LDAP=on (or `--ldap`). */
  enabled: boolean;
  /** GATEHOUSE_LDAP_HOST, default HOST. */
  host: string;
  /** GATEHOUSE_LDAP_PORT (default 3890; 0 picks a free one). StartTLS is offered on it when LAN TLS is on. */
  port: number;
  /** GATEHOUSE_LDAPS_PORT (default 6360; 0 picks a free one): LDAP over TLS, only when LAN TLS is on. */
  ldapsPort: number;
  /** GATEHOUSE_LDAP_BASE_DN; undefined: derived from the issuer's host name (`ldapBaseDn`). */
  baseDn: string | undefined;
  /** GATEHOUSE_LDAP_ALLOW_PLAIN=1: simple binds over unencrypted connections from other machines are allowed. */
  allowPlain: boolean;
}

/** The RADIUS server's settings (spec radius.md, "Turning it on"; docs/radius.md). */
export interface RadiusConfig {
  /** GATEHOUSE_RADIUS=on (or `--radius`). */
  enabled: boolean;
  /** GATEHOUSE_RADIUS_HOST, default HOST. */
  host: string;
  /** GATEHOUSE_RADIUS_PORT (default 1812; 0 picks a free one): authentication. */
  port: number;
  /** GATEHOUSE_RADIUS_ACCT_PORT (default 1813; 0 picks a free one): accounting. */
  acctPort: number;
}

/** GATEHOUSE_METRICS_TOKEN (or _FILE) and GATEHOUSE_METRICS_ALLOW. */
export interface MetricsAccess {
  /** A bearer token that may always scrape; undefined when none is set. */
  token: string | undefined;
  /** Addresses and ranges that may scrape without the token (default: loopback only; `none`: nobody). */
  allow: string[];
}

/** Days each kind of ended data is kept; 0 keeps it for ever. */
export interface RetentionDays {
  /** Refresh-token families and one-time links, after they expire or are revoked (the reuse-detection grace). */
  tokens: number;
  /** Sessions, after they end (signed out or expired). */
  sessions: number;
  /** Webhook deliveries that succeeded or failed, after they were created. */
  webhooks: number;
  /** Audit entries. */
  audit: number;
  /** Invitations, after they expire (accepted, revoked or never used). */
  invitations: number;
}

/** The retention variables and their defaults (docs/configuration.md, "Data lifecycle"). */
export const RETENTION_ENV: Record<keyof RetentionDays, { name: string; fallback: number }> = {
  tokens: { name: 'GATEHOUSE_RETENTION_TOKENS_DAYS', fallback: 7 },
  sessions: { name: 'GATEHOUSE_RETENTION_SESSIONS_DAYS', fallback: 7 },
  webhooks: { name: 'GATEHOUSE_RETENTION_WEBHOOKS_DAYS', fallback: 30 },
  audit: { name: 'GATEHOUSE_RETENTION_AUDIT_DAYS', fallback: 400 },
  invitations: { name: 'GATEHOUSE_RETENTION_INVITATIONS_DAYS', fallback: 90 },
};

export type TlsConfig =
  | { mode: 'off' }
  | { mode: 'auto'; extraNames: string[] }
  | { mode: 'acme'; extraNames: string[]; acme: AcmeConfig }
  | { mode: 'files'; certFile: string; keyFile: string };

/**
 * GATEHOUSE_TLS=acme (spec lan-trust.md, "Real-domain certificate"): a certificate from an ACME
 * server by DNS-01 through RFC 2136 dynamic updates signed with TSIG. The TSIG secret stays in its
 * file, read when an update is sent (server/trust/acme/).
 */
export interface AcmeConfig {
  domains: string[];
  directory: string;
  email: string | undefined;
  caFile: string | undefined;
  dns: 'rfc2136';
  rfc2136: { host: string; port: number; tsigName: string; tsigAlgorithm: TsigAlgorithm; tsigSecretFile: string; zone: string | undefined };
}
export const TSIG_ALGORITHMS = ['hmac-sha256', 'hmac-sha384', 'hmac-sha512'] as const;
export type TsigAlgorithm = (typeof TSIG_ALGORITHMS)[number];
export const LETS_ENCRYPT_DIRECTORY = 'https://acme-v02.api.letsencrypt.org/directory';

/** Whether the server keeps a local CA under `<data>/tls/` (GATEHOUSE_TLS=auto, and acme, whose local certificate serves until the first ACME one). */
export const hasLocalCa = (tls: TlsConfig): tls is Extract<TlsConfig, { extraNames: string[] }> => tls.mode === 'auto' || tls.mode === 'acme';

/** Flags accepted by `gatehouse serve`, each mirroring an environment variable. */
export interface ServeFlags {
  dataDir?: string;
  port?: string;
  host?: string;
  issuer?: string;
  /** Programmatic only (tests, embedding): `gatehouse serve` refuses the token on its command line. */
  adminToken?: string;
  /** `--admin-token-file` (ADMIN_TOKEN_FILE): a file holding the admin token. */
  adminTokenFile?: string;
  accessTokenTtl?: string;
  pretty?: boolean;
  tls?: string;
  /** `--ldap`: GATEHOUSE_LDAP=on. */
  ldap?: boolean;
  /** `--radius`: GATEHOUSE_RADIUS=on. */
  radius?: boolean;
}

export const DEFAULTS = {
  dataDir: './data',
  port: 8787,
  host: '127.0.0.1',
  accessTokenTtl: 900,
  refreshTokenTtl: 30 * 24 * 3600,
  sessionTtl: 30 * 24 * 3600,
  backupInterval: 24 * 3600,
  backupKeep: 7,
  keyRotationDays: 90,
  sweepInterval: 3600,
  ldapPort: 3890,
  ldapsPort: 6360,
  radiusPort: 1812,
  radiusAcctPort: 1813,
} as const;

function parseInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}".`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}.`);
  return value;
}

/**
 * A tuning variable that is a positive whole number (limits, timeouts): `fallback` when unset or
 * empty, otherwise validated like every other setting, so a typo stops the start with one
 * sentence instead of being silently replaced by the default.
 */
export function positiveIntegerEnv(env: Record<string, string | undefined>, name: string, fallback: number, max = 2 ** 31 - 1): number {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : parseInteger(name, raw, 1, max);
}

/**
 * The positive-integer tuning variables, read where they are used (with their defaults) and
 * checked here as well, so a bad one stops the start before the data directory is touched.
 */
const POSITIVE_INTEGER_TUNABLES = [
  'GATEHOUSE_HEADERS_TIMEOUT_MS', 'GATEHOUSE_REQUEST_TIMEOUT_MS', 'GATEHOUSE_TOKEN_FAILURE_LIMIT',
  'GATEHOUSE_SIGN_IN_RATE_LIMIT', 'GATEHOUSE_SIGN_UP_RATE_LIMIT', 'GATEHOUSE_PASSWORD_RESET_RATE_LIMIT',
  'GATEHOUSE_DEVICE_AUTHORIZATION_RATE_LIMIT', 'GATEHOUSE_DEVICE_CODE_FAILURE_LIMIT',
];

/** pino's levels, plus `silent`. */
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** Validates an issuer URL: http(s), a host, no trailing slash, query or fragment. */
export function parseIssuer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`GATEHOUSE_ISSUER must be an absolute http(s) URL, got "${raw}".`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`GATEHOUSE_ISSUER must use http or https, got "${raw}".`);
  }
  if (url.search || url.hash || raw.includes('?') || raw.includes('#')) {
    throw new ConfigError(`GATEHOUSE_ISSUER must not have a query or fragment, got "${raw}".`);
  }
  if (raw.endsWith('/')) throw new ConfigError(`GATEHOUSE_ISSUER must not end with a slash, got "${raw}".`);
  return raw;
}

export function loadConfig(env: Record<string, string | undefined>, flags: ServeFlags = {}): Config {
  const pick = (flag: string | undefined, name: string) => {
    const value = flag ?? env[name];
    return value === undefined || value === '' ? undefined : value;
  };
  const dataDir = resolve(pick(flags.dataDir, 'GATEHOUSE_DATA_DIR') ?? DEFAULTS.dataDir);
  const portRaw = pick(flags.port, 'PORT');
  const port = portRaw === undefined ? DEFAULTS.port : parseInteger('PORT', portRaw, 0, 65535);
  const host = pick(flags.host, 'HOST') ?? DEFAULTS.host;
  const issuerRaw = pick(flags.issuer, 'GATEHOUSE_ISSUER');
  const ttlRaw = pick(flags.accessTokenTtl, 'GATEHOUSE_ACCESS_TOKEN_TTL');
  const { adminToken, adminTokenSource } = readAdminToken(pick(flags.adminToken, 'ADMIN_TOKEN'), flags.adminTokenFile, pick(undefined, 'ADMIN_TOKEN_FILE'));
  const tls = parseTls(pick(flags.tls, 'GATEHOUSE_TLS'), env);
  for (const name of POSITIVE_INTEGER_TUNABLES) positiveIntegerEnv(env, name, 1);
  const logLevel = pick(undefined, 'LOG_LEVEL');
  if (logLevel !== undefined && !LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  }
  const lowMemory = switchEnv(env, 'GATEHOUSE_LOW_MEMORY', false);
  const idleReclaim = switchEnv(env, 'GATEHOUSE_IDLE_RECLAIM', true);
  const webhookAllowLoopback = switchEnv(env, 'GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK', false);
  const redirectRaw = pick(undefined, 'GATEHOUSE_HTTP_REDIRECT_PORT');
  const backupRaw = pick(undefined, 'GATEHOUSE_BACKUP_INTERVAL');
  const rotationRaw = pick(undefined, 'GATEHOUSE_KEY_ROTATION_DAYS');
  const sweepRaw = pick(undefined, 'GATEHOUSE_SWEEP_INTERVAL');
  const backupKeyFile = pick(undefined, 'GATEHOUSE_BACKUP_KEY_FILE');
  if (backupKeyFile !== undefined && !existsSync(backupKeyFile)) {
    throw new ConfigError(`GATEHOUSE_BACKUP_KEY_FILE names ${backupKeyFile}, which does not exist.`);
  }
  if (backupKeyFile !== undefined && statSync(backupKeyFile).size < 32) {
    throw new ConfigError(`GATEHOUSE_BACKUP_KEY_FILE names ${backupKeyFile}, which holds fewer than 32 bytes; fill it with random bytes (e.g. openssl rand -out FILE 32).`);
  }
  const retention = Object.fromEntries(
    Object.entries(RETENTION_ENV).map(([key, { name, fallback }]) => {
      const raw = pick(undefined, name);
      return [key, raw === undefined ? fallback : parseInteger(name, raw, 0, 36500)];
    }),
  ) as unknown as RetentionDays;
  return {
    dataDir,
    port,
    host,
    issuer: issuerRaw === undefined ? defaultIssuer(host, port, tls.mode !== 'off') : parseIssuer(issuerRaw),
    issuerConfigured: issuerRaw !== undefined,
    adminToken,
    adminTokenSource,
    accessTokenTtl:
      ttlRaw === undefined ? DEFAULTS.accessTokenTtl : parseInteger('GATEHOUSE_ACCESS_TOKEN_TTL', ttlRaw, 60, 86400),
    refreshTokenTtl: DEFAULTS.refreshTokenTtl,
    sessionTtl: DEFAULTS.sessionTtl,
    smtpUrl: pick(undefined, 'SMTP_URL'),
    smtpFrom: pick(undefined, 'SMTP_FROM') ?? 'Gatehouse <gatehouse@localhost>',
    prettyLogs: flags.pretty ?? false,
    tls,
    httpRedirectPort:
      redirectRaw === undefined ? undefined : parseInteger('GATEHOUSE_HTTP_REDIRECT_PORT', redirectRaw, 0, 65535),
    backupInterval:
      backupRaw === undefined ? DEFAULTS.backupInterval : parseInteger('GATEHOUSE_BACKUP_INTERVAL', backupRaw, 0, 366 * 24 * 3600),
    backupKeep: DEFAULTS.backupKeep,
    backupPassphrase: pick(undefined, 'GATEHOUSE_BACKUP_PASSPHRASE'),
    backupKeyFile: backupKeyFile === undefined ? undefined : resolve(backupKeyFile),
    sweepInterval:
      sweepRaw === undefined ? DEFAULTS.sweepInterval : parseInteger('GATEHOUSE_SWEEP_INTERVAL', sweepRaw, 0, 7 * 24 * 3600),
    retention,
    keyRotationDays:
      rotationRaw === undefined ? DEFAULTS.keyRotationDays : parseInteger('GATEHOUSE_KEY_ROTATION_DAYS', rotationRaw, 1, 3650),
    lowMemory,
    idleReclaim,
    webhookAllowLoopback,
    trustProxy: parseTrustProxy(pick(undefined, 'GATEHOUSE_TRUST_PROXY')),
    locale: parseLocale(pick(undefined, 'GATEHOUSE_LOCALE')),
    ldap: parseLdap(env, flags.ldap, host),
    radius: parseRadius(env, flags.radius, host),
    metrics: {
      token: readSecretSetting('GATEHOUSE_METRICS_TOKEN', pick(undefined, 'GATEHOUSE_METRICS_TOKEN'), pick(undefined, 'GATEHOUSE_METRICS_TOKEN_FILE')),
      allow: parseMetricsAllow(pick(undefined, 'GATEHOUSE_METRICS_ALLOW')),
    },
    env,
  };
}

/** An attribute=value pair of a DN, without the escapes a base DN never needs (RFC 4514). */
const BASE_DN = /^[A-Za-z][A-Za-z0-9-]*=[^,=+"\\<>;#\s][^,=+"\\<>;]*(,[A-Za-z][A-Za-z0-9-]*=[^,=+"\\<>;#\s][^,=+"\\<>;]*)*$/;

/** GATEHOUSE_LDAP and its companions (spec ldap.md, "Turning it on"). */
function parseLdap(env: Record<string, string | undefined>, flag: boolean | undefined, host: string): LdapConfig {
  const raw = env.GATEHOUSE_LDAP?.trim().toLowerCase();
  let enabled = flag ?? false;
  if (!flag && raw !== undefined && raw !== '') {
    if (['on', '1', 'true'].includes(raw)) enabled = true;
    else if (!['off', '0', 'false'].includes(raw)) throw new ConfigError(`GATEHOUSE_LDAP must be "on" or "off", got "${env.GATEHOUSE_LDAP}".`);
  }
  const port = (name: string, fallback: number) => {
    const value = env[name];
    return value === undefined || value === '' ? fallback : parseInteger(name, value, 0, 65535);
  };
  const baseDn = env.GATEHOUSE_LDAP_BASE_DN?.trim().replace(/\s*,\s*/g, ',') || undefined;
  if (baseDn !== undefined && !BASE_DN.test(baseDn)) {
    throw new ConfigError(`GATEHOUSE_LDAP_BASE_DN must be a distinguished name such as dc=example,dc=com, got "${baseDn}".`);
  }
  return {
    enabled,
    host: env.GATEHOUSE_LDAP_HOST?.trim() || host,
    port: port('GATEHOUSE_LDAP_PORT', DEFAULTS.ldapPort),
    ldapsPort: port('GATEHOUSE_LDAPS_PORT', DEFAULTS.ldapsPort),
    baseDn,
    allowPlain: switchEnv(env, 'GATEHOUSE_LDAP_ALLOW_PLAIN', false),
  };
}

/** GATEHOUSE_RADIUS and its companions (spec radius.md, "Turning it on"). */
function parseRadius(env: Record<string, string | undefined>, flag: boolean | undefined, host: string): RadiusConfig {
  const raw = env.GATEHOUSE_RADIUS?.trim().toLowerCase();
  let enabled = flag ?? false;
  if (!flag && raw !== undefined && raw !== '') {
    if (['on', '1', 'true'].includes(raw)) enabled = true;
    else if (!['off', '0', 'false'].includes(raw)) throw new ConfigError(`GATEHOUSE_RADIUS must be "on" or "off", got "${env.GATEHOUSE_RADIUS}".`);
  }
  const port = (name: string, fallback: number) => {
    const value = env[name];
    return value === undefined || value === '' ? fallback : parseInteger(name, value, 0, 65535);
  };
  return {
    enabled,
    host: env.GATEHOUSE_RADIUS_HOST?.trim() || host,
    port: port('GATEHOUSE_RADIUS_PORT', DEFAULTS.radiusPort),
    acctPort: port('GATEHOUSE_RADIUS_ACCT_PORT', DEFAULTS.radiusAcctPort),
  };
}

/**
 * The directory's base DN: GATEHOUSE_LDAP_BASE_DN, else `dc=` of each label of the issuer's host
 * name (`auth.lan.example` → `dc=auth,dc=lan,dc=example`), or `dc=gatehouse` for an IP address.
 */
export function ldapBaseDn(config: Pick<Config, 'issuer' | 'ldap'>): string {
  if (config.ldap.baseDn) return config.ldap.baseDn;
  const host = new URL(config.issuer).hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (isIP(host) || host === '') return 'dc=gatehouse';
  return host.split('.').map((label) => `dc=${label}`).join(',');
}

const PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * GATEHOUSE_TRUST_PROXY: comma-separated proxy addresses or CIDR ranges (or the named ranges
 * above). Never "everything": a client that reaches an instance directly could then choose the
 * address its rate limits are counted under.
 */
function parseTrustProxy(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return [];
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const prefixOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (PROXY_RANGES.includes(entry) || (family !== 0 && prefixOk && extra === undefined)) continue;
    throw new ConfigError(
      `GATEHOUSE_TRUST_PROXY must list the proxies' addresses or CIDR ranges (or ${PROXY_RANGES.join(', ')}), comma-separated; "${entry}" is none of these.`,
    );
  }
  return entries;
}

/** GATEHOUSE_METRICS_ALLOW: comma-separated addresses, CIDR ranges or named ranges; `none` for nobody. */
function parseMetricsAllow(raw: string | undefined): string[] {
  if (raw === undefined) return ['loopback'];
  if (raw.trim() === 'none') return [];
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const problem = addressEntryProblem(entry);
    if (problem) {
      throw new ConfigError(
        `GATEHOUSE_METRICS_ALLOW must list addresses or CIDR ranges (or ${Object.keys(NAMED_RANGES).join(', ')}), comma-separated, or be "none"; ${problem}.`,
      );
    }
  }
  return entries;
}

/**
 * A secret setting given as `NAME` or as a file named by `NAME_FILE` (one trailing line break
 * dropped), never both; at least 16 characters.
 */
function readSecretSetting(name: string, value: string | undefined, file: string | undefined): string | undefined {
  if (file === undefined) {
    if (value !== undefined && value.length < 16) throw new ConfigError(`${name} must be at least 16 characters long.`);
    return value;
  }
  if (value !== undefined) throw new ConfigError(`Set ${name} or ${name}_FILE, not both.`);
  const path = resolve(file);
  let secret: string;
  try {
    secret = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigError(`${name}_FILE names ${path}, which ${unreadable(error)}.`);
  }
  if (secret.length < 16) throw new ConfigError(`The value in ${path} (${name}_FILE) must be at least 16 characters long.`);
  return secret;
}

const unreadable = (error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT' ? 'does not exist' : code === 'EISDIR' ? 'is a directory' : 'cannot be read';
};

/** GATEHOUSE_LOCALE: one of the languages the pages speak. */
function parseLocale(raw: string | undefined): Locale {
  if (raw === undefined || raw === '') return DEFAULT_LOCALE;
  if (!isLocale(raw)) throw new ConfigError(`GATEHOUSE_LOCALE must be one of ${LOCALES.join(', ')}, got "${raw}".`);
  return raw;
}

/**
 * The admin token from ADMIN_TOKEN, or from a file (`--admin-token-file`, ADMIN_TOKEN_FILE; one
 * trailing line break dropped), never both. A file or the environment keeps the token out of `ps`.
 */
function readAdminToken(fromEnv: string | undefined, flagFile: string | undefined, envFile: string | undefined) {
  const file = flagFile || envFile;
  if (file === undefined) {
    if (fromEnv !== undefined && fromEnv.length < 16) throw new ConfigError('ADMIN_TOKEN must be at least 16 characters long.');
    return { adminToken: fromEnv, adminTokenSource: fromEnv === undefined ? undefined : 'ADMIN_TOKEN' };
  }
  if (fromEnv !== undefined) throw new ConfigError('Set the admin token once: ADMIN_TOKEN or an admin token file, not both.');
  const named = flagFile ? '--admin-token-file' : 'ADMIN_TOKEN_FILE';
  const path = resolve(file);
  let token: string;
  try {
    token = readFileSync(path, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    throw new ConfigError(`${named} names ${path}, which ${unreadable(error)}.`);
  }
  if (token.length < 16) throw new ConfigError(`The admin token in ${path} must be at least 16 characters long.`);
  return { adminToken: token, adminTokenSource: path };
}

/** An on/off variable (`1`/`true`, `0`/`false`; unset or empty is `fallback`). */
function switchEnv(env: Record<string, string | undefined>, name: string, fallback: boolean): boolean {
  const value = parseSwitch(env[name], fallback);
  if (value === undefined) throw new ConfigError(`${name} must be 1 or 0 (true or false), got "${env[name]}".`);
  return value;
}

/** `http(s)://{host}:{port}`; wildcard hosts are shown as loopback until the real port is known. */
export function defaultIssuer(host: string, port: number, https = false): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const bracketed = shown.includes(':') ? `[${shown}]` : shown;
  return `${https ? 'https' : 'http'}://${bracketed}:${port}`;
}

/** GATEHOUSE_TLS (`off` | `auto`) and GATEHOUSE_TLS_CERT/KEY (own files, which win over `auto`). */
function parseTls(mode: string | undefined, env: Record<string, string | undefined>): TlsConfig {
  const certFile = env.GATEHOUSE_TLS_CERT || undefined;
  const keyFile = env.GATEHOUSE_TLS_KEY || undefined;
  if (certFile || keyFile) {
    if (!certFile || !keyFile) throw new ConfigError('GATEHOUSE_TLS_CERT and GATEHOUSE_TLS_KEY must be set together.');
    for (const file of [certFile, keyFile]) {
      if (!existsSync(file)) throw new ConfigError(`The TLS file ${file} does not exist.`);
    }
    return { mode: 'files', certFile: resolve(certFile), keyFile: resolve(keyFile) };
  }
  if (mode === undefined || mode === 'off') return { mode: 'off' };
  if (mode !== 'auto' && mode !== 'acme') throw new ConfigError(`GATEHOUSE_TLS must be "auto", "acme" or "off", got "${mode}".`);
  const extraNames = (env.GATEHOUSE_TLS_NAMES ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  if (mode === 'auto') return { mode: 'auto', extraNames };
  return { mode: 'acme', extraNames, acme: parseAcme(env) };
}

const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The GATEHOUSE_ACME_* settings; each mistake is one sentence naming its variable. */
function parseAcme(env: Record<string, string | undefined>): AcmeConfig {
  const get = (name: string) => {
    const value = env[name]?.trim();
    return value ? value : undefined;
  };
  const need = (name: string, what: string) => {
    const value = get(name);
    if (value === undefined) throw new ConfigError(`GATEHOUSE_TLS=acme needs ${name} (${what}).`);
    return value;
  };
  if (get('GATEHOUSE_ACME_AGREE_TOS') !== 'yes') {
    throw new ConfigError('GATEHOUSE_TLS=acme needs GATEHOUSE_ACME_AGREE_TOS=yes: you agree to the ACME server\'s terms of service (Let\'s Encrypt\'s, by default).');
  }
  const domains = need('GATEHOUSE_ACME_DOMAINS', 'the names the certificate is for, comma-separated').split(',').map((d) => d.trim().toLowerCase().replace(/\.$/, '')).filter(Boolean);
  for (const domain of domains) {
    if (domain.length > 253 || !DNS_NAME.test(domain)) throw new ConfigError(`GATEHOUSE_ACME_DOMAINS: "${domain}" is not a DNS name.`);
  }
  if (!domains.length) throw new ConfigError('GATEHOUSE_ACME_DOMAINS names no domain.');
  const directory = get('GATEHOUSE_ACME_DIRECTORY') ?? LETS_ENCRYPT_DIRECTORY;
  let url: URL;
  try {
    url = new URL(directory);
  } catch {
    throw new ConfigError(`GATEHOUSE_ACME_DIRECTORY must be the ACME server's directory URL, got "${directory}".`);
  }
  if (url.protocol !== 'https:') throw new ConfigError(`GATEHOUSE_ACME_DIRECTORY must be an https URL, got "${directory}".`);
  const email = get('GATEHOUSE_ACME_EMAIL');
  if (email !== undefined && !/^[^\s@]+@[^\s@]+$/.test(email)) throw new ConfigError(`GATEHOUSE_ACME_EMAIL must be an e-mail address, got "${email}".`);
  const caFile = get('GATEHOUSE_ACME_CA_FILE');
  if (caFile !== undefined && !existsSync(caFile)) throw new ConfigError(`GATEHOUSE_ACME_CA_FILE names ${caFile}, which does not exist.`);
  const dns = get('GATEHOUSE_ACME_DNS') ?? 'rfc2136';
  if (dns !== 'rfc2136') throw new ConfigError(`GATEHOUSE_ACME_DNS must be "rfc2136" (dynamic DNS updates signed with TSIG), got "${dns}".`);
  const server = need('GATEHOUSE_ACME_RFC2136_SERVER', 'the DNS server that takes dynamic updates, host:port');
  const hostPort = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s]+))(?::(\d{1,5}))?$/.exec(server);
  const port = hostPort?.[3] === undefined ? 53 : Number(hostPort[3]);
  if (!hostPort || port < 1 || port > 65535) throw new ConfigError(`GATEHOUSE_ACME_RFC2136_SERVER must be host:port (port 53 when left out), got "${server}".`);
  const tsigName = need('GATEHOUSE_ACME_RFC2136_TSIG_NAME', 'the TSIG key\'s name, as the DNS server knows it').toLowerCase().replace(/\.$/, '');
  if (!/^[a-z0-9_]([a-z0-9_.-]{0,251}[a-z0-9_])?$/.test(tsigName)) throw new ConfigError(`GATEHOUSE_ACME_RFC2136_TSIG_NAME must be a DNS name, got "${tsigName}".`);
  const algorithm = (get('GATEHOUSE_ACME_RFC2136_TSIG_ALGORITHM') ?? 'hmac-sha256').toLowerCase();
  if (!(TSIG_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw new ConfigError(`GATEHOUSE_ACME_RFC2136_TSIG_ALGORITHM must be one of ${TSIG_ALGORITHMS.join(', ')}, got "${algorithm}".`);
  }
  const secretFile = need('GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE', 'a file holding the TSIG key\'s secret, base64');
  if (!existsSync(secretFile)) throw new ConfigError(`GATEHOUSE_ACME_RFC2136_TSIG_SECRET_FILE names ${secretFile}, which does not exist.`);
  const zone = get('GATEHOUSE_ACME_RFC2136_ZONE')?.toLowerCase().replace(/\.$/, '');
  if (zone !== undefined && !DNS_NAME.test(zone)) throw new ConfigError(`GATEHOUSE_ACME_RFC2136_ZONE must be a DNS name, got "${zone}".`);
  return {
    domains: [...new Set(domains)],
    directory,
    email,
    caFile: caFile === undefined ? undefined : resolve(caFile),
    dns: 'rfc2136',
    rfc2136: { host: hostPort[1] ?? hostPort[2]!, port, tsigName, tsigAlgorithm: algorithm as TsigAlgorithm, tsigSecretFile: resolve(secretFile), zone },
  };
}

/** A configuration for tests and embedding: defaults plus overrides, no environment read. */
export function testConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({}),
    dataDir: ':memory:',
    issuer: 'http://127.0.0.1:8787',
    adminToken: 'test-admin-token-0123456789',
    ...overrides,
  };
}
