/**
 * Configuration: environment variables and `gatehouse serve` flags → one typed object.
 * Every bad value becomes a `ConfigError` whose message is one clear sentence; the CLI prints
 * it and exits 1 without a stack trace.
 */
import { resolve } from 'node:path';

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
  /** ADMIN_TOKEN from the environment; when unset the token lives in `<data>/admin-token`. */
  adminToken: string | undefined;
  accessTokenTtl: number;
  refreshTokenTtl: number;
  sessionTtl: number;
  smtpUrl: string | undefined;
  smtpFrom: string;
  /** Whether to log human-readable lines instead of JSON. */
  prettyLogs: boolean;
  /** The raw environment, for provider credentials (`<PROVIDER>_CLIENT_ID`, …). */
  env: Record<string, string | undefined>;
}

/** Flags accepted by `gatehouse serve`, each mirroring an environment variable. */
export interface ServeFlags {
  dataDir?: string;
  port?: string;
  host?: string;
  issuer?: string;
  adminToken?: string;
  accessTokenTtl?: string;
  pretty?: boolean;
}

export const DEFAULTS = {
  dataDir: './data',
  port: 8787,
  host: '127.0.0.1',
  accessTokenTtl: 900,
  refreshTokenTtl: 30 * 24 * 3600,
  sessionTtl: 30 * 24 * 3600,
} as const;

function parseInteger(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}".`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}.`);
  return value;
}

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
  const adminToken = pick(flags.adminToken, 'ADMIN_TOKEN');
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN must be at least 16 characters long.');
  }
  return {
    dataDir,
    port,
    host,
    issuer: issuerRaw === undefined ? defaultIssuer(host, port) : parseIssuer(issuerRaw),
    issuerConfigured: issuerRaw !== undefined,
    adminToken,
    accessTokenTtl:
      ttlRaw === undefined ? DEFAULTS.accessTokenTtl : parseInteger('GATEHOUSE_ACCESS_TOKEN_TTL', ttlRaw, 60, 86400),
    refreshTokenTtl: DEFAULTS.refreshTokenTtl,
    sessionTtl: DEFAULTS.sessionTtl,
    smtpUrl: pick(undefined, 'SMTP_URL'),
    smtpFrom: pick(undefined, 'SMTP_FROM') ?? 'Gatehouse <gatehouse@localhost>',
    prettyLogs: flags.pretty ?? false,
    env,
  };
}

/** `http://{host}:{port}`; wildcard hosts are shown as loopback until the real port is known. */
export function defaultIssuer(host: string, port: number): string {
  const shown = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  const bracketed = shown.includes(':') ? `[${shown}]` : shown;
  return `http://${bracketed}:${port}`;
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
