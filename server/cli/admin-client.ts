/**
 * How the headless administration commands (`gatehouse app …`, `invite`, `member list`,
 * `key rotate`) reach the running server: over its admin API, so the server's rules, webhooks and
 * audit log apply exactly as for the panel.
 *
 * - Server: `--url`, else GATEHOUSE_URL, else the address `gatehouse serve` would listen on with
 *   this environment (HOST, PORT, GATEHOUSE_TLS; a wildcard host is reached on 127.0.0.1).
 * - Admin token: `--token-file FILE`, else ADMIN_TOKEN, else the file ADMIN_TOKEN_FILE names (what
 *   the server reads, docs/postgresql.md), else `<data>/admin-token`, read and never created. A
 *   failure says which of them it tried. Never the token itself on the command line (`--token` is
 *   refused with the reason: `ps` shows every user a process's arguments).
 * - HTTPS with the LAN's own CA: `<data>/tls/ca.pem` is trusted besides the system's CAs.
 *
 * Failures are one sentence each: problem details come out as their detail and stable `code`
 * (validation errors name the flag), an unreachable server says how to point at it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { join } from 'node:path';
import { ConfigError, defaultIssuer, loadConfig, type Config } from '../config.js';
import type { Command, Values } from './command.js';
import { flagForField, flagHelp, flagOptions, type FlagTable } from './flags.js';

/** The flags every admin command takes, besides its own. */
export const connectionFlags: FlagTable = {
  'data-dir': { type: 'string', value: 'DIR', help: 'data directory, for its admin token and LAN CA (GATEHOUSE_DATA_DIR, default ./data)' },
  url: { type: 'string', value: 'URL', help: 'the server (GATEHOUSE_URL; default: where `gatehouse serve` listens with this environment)' },
  'token-file': { type: 'string', value: 'FILE', help: 'read the admin token from FILE (default: ADMIN_TOKEN, else ADMIN_TOKEN_FILE, else <data>/admin-token)' },
  json: { type: 'boolean', help: 'print JSON instead of text' },
};

/** Declared so that `--token` is refused with its reason rather than as an unknown flag. */
const refusedFlags = { token: { type: 'string' } } as const;

export const TOKEN_ON_COMMAND_LINE =
  '--token would show the admin token to every user of this machine (ps); use --token-file FILE, ADMIN_TOKEN or ADMIN_TOKEN_FILE.';

/** A problem+json answer, as an error whose message is one readable sentence with its code. */
export class ApiError extends ConfigError {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The problem's `errors` (validation failures by field), as the server sent them. */
    readonly errors: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

export interface AdminClient {
  url: string;
  request<T = unknown>(method: string, path: string, body?: unknown): Promise<T>;
  /** A successful answer's body as text (a YAML document); failures as `request`'s. */
  text(method: string, path: string): Promise<string>;
}

interface Connection {
  url: string;
  token: string;
  ca?: string;
  tokenSource: string;
}

function readToken(file: string, what: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(code === 'ENOENT' ? `There is no admin token at ${file} (${what}).` : `Cannot read the admin token from ${file}: ${code}.`);
  }
  const token = text.trim();
  if (!token) throw new ConfigError(`The admin token file ${file} is empty.`);
  return token;
}

function connection(values: Values, env: Record<string, string | undefined>): Connection {
  const config = loadConfig(env, { dataDir: values['data-dir'] as string | undefined });
  let url = (values.url as string | undefined) ?? (env.GATEHOUSE_URL || undefined);
  if (url === undefined) {
    if (config.port === 0) throw new ConfigError('PORT is 0 (a free port picked at start), so the server cannot be found: pass --url.');
    url = defaultIssuer(config.host, config.port, config.tls.mode !== 'off');
  }
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error();
    url = parsed.origin + parsed.pathname.replace(/\/+$/, '');
  } catch {
    throw new ConfigError(`The server URL "${url}" is not an http(s) URL.`);
  }

  const { token, tokenSource } = adminTokenFor(values, config);
  const caFile = join(config.dataDir, 'tls', 'ca.pem');
  const ca = url.startsWith('https:') && existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined;
  return { url, token, ca, tokenSource };
}

/**
 * The admin token: `--token-file`, ADMIN_TOKEN, ADMIN_TOKEN_FILE (both read and checked by
 * loadConfig, as the server reads them), then `<data>/admin-token`.
 */
function adminTokenFor(values: Values, config: Config): { token: string; tokenSource: string } {
  if (values.token !== undefined) throw new ConfigError(TOKEN_ON_COMMAND_LINE);
  const flagFile = values['token-file'] as string | undefined;
  if (flagFile) return { token: readToken(flagFile, 'from --token-file'), tokenSource: `the token in ${flagFile} (--token-file)` };
  if (config.adminToken !== undefined) {
    const source = config.adminTokenSource === 'ADMIN_TOKEN' ? 'ADMIN_TOKEN' : `the token in ${config.adminTokenSource} (ADMIN_TOKEN_FILE)`;
    return { token: config.adminToken, tokenSource: source };
  }
  const file = join(config.dataDir, 'admin-token');
  const tried = 'ADMIN_TOKEN and ADMIN_TOKEN_FILE are not set; start the server once with this data directory, or set ADMIN_TOKEN_FILE, or give --token-file';
  return { token: readToken(file, tried), tokenSource: `the token in ${file}` };
}

/** Reads a whole answer (small JSON documents). */
function readBody(response: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    response.on('end', () => resolve(text));
    response.on('error', reject);
  });
}

/** What a failed request says, in words. */
function networkError(url: string, error: NodeJS.ErrnoException): ConfigError {
  const where = `the Gatehouse server at ${url}`;
  switch (error.code) {
    case 'ECONNREFUSED':
      return new ConfigError(`Nothing answers at ${url}: is the server running? Start it with \`gatehouse serve\`, or point at it with --url or GATEHOUSE_URL.`);
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new ConfigError(`Cannot find the host of ${url}: check --url or GATEHOUSE_URL.`);
    case 'ETIMEDOUT':
      return new ConfigError(`${where} did not answer within 30 seconds.`);
    case 'DEPTH_ZERO_SELF_SIGNED_CERT':
    case 'SELF_SIGNED_CERT_IN_CHAIN':
    case 'UNABLE_TO_VERIFY_LEAF_SIGNATURE':
    case 'ERR_TLS_CERT_ALTNAME_INVALID':
      return new ConfigError(`The certificate of ${where} is not trusted (${error.code}); with LAN TLS, run this on the server's machine with its --data-dir.`);
    default:
      return new ConfigError(`Cannot reach ${where}: ${error.message}.`);
  }
}

/** The sentence for a problem+json answer: its detail (or title), its code, and what to do. */
function problemMessage(status: number, body: unknown, flags: FlagTable, tokenSource: string): ApiError {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as {
    title?: string;
    detail?: string;
    code?: string;
    errors?: { path: string; message: string }[];
  };
  const code = problem.code ?? `http_${status}`;
  let text = (problem.detail || problem.title || `The server answered ${status}`).replace(/\.?$/, '.');
  if (status === 401) text = `The server refused ${tokenSource}. ${text}`;
  const lines = [`${text} (${code})`];
  // One line per field, naming the flag the administrator typed (`body.redirectUris.0` →
  // `--redirect-uri`); a union's several complaints ("must be equal to constant" per choice) are one.
  const byField = new Map<string, string[]>();
  for (const error of problem.errors ?? []) {
    const [where, field, sub] = error.path.split('.');
    // A preset's inputs: `--base-url`, or `--input KEY=` (app create --preset).
    const presetInput = where === 'body' && field === 'presetInputs' && sub ? (sub === 'baseUrl' ? '--base-url' : `--input ${sub}=`) : undefined;
    const flag = presetInput ?? (where === 'body' || where === 'querystring' ? flagForField(flags, field ?? '') : undefined);
    const name = presetInput ?? (flag ? `${flag}${flags[flag.slice(2)]?.value?.includes('|') ? ` (${flags[flag.slice(2)]!.value})` : ''}` : error.path.replace(/^body\./, ''));
    const messages = byField.get(name) ?? [];
    if (!messages.includes(error.message)) messages.push(error.message);
    byField.set(name, messages);
  }
  for (const [name, messages] of byField) {
    const union = messages.some((m) => m.includes('anyOf') || m.includes('equal to constant'));
    for (const message of union ? ['is not one of the allowed values'] : messages) lines.push(`  ${name}: ${message}`);
  }
  return new ApiError(status, code, lines.join('\n'), problem.errors ?? []);
}

/** A client for the server the flags and environment point at. */
export function adminClient(values: Values, flags: FlagTable, env: Record<string, string | undefined> = process.env): AdminClient {
  const target = connection(values, env);

  /** One request; a 2xx answer as parsed JSON, or as text with `asText`. */
  function send(method: string, path: string, body: unknown, asText: boolean): Promise<unknown> {
    const url = new URL(`${target.url}${path}`);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const transport = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<unknown>((resolve, reject) => {
      const req = transport(
        url,
        {
          method,
          headers: {
            authorization: `Bearer ${target.token}`,
            accept: asText ? '*/*' : 'application/json, application/problem+json',
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
          timeout: 30_000,
          ...(target.ca ? { ca: [...rootCertificates, target.ca] } : {}),
        },
        (response) => {
          readBody(response).then((text) => {
            const status = response.statusCode ?? 0;
            let parsed: unknown;
            try {
              parsed = text ? JSON.parse(text) : undefined;
            } catch {
              parsed = undefined;
            }
            if (status >= 200 && status < 300) resolve(asText ? text : parsed);
            else reject(problemMessage(status, parsed, flags, target.tokenSource));
          }, reject);
        },
      );
      req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { code: 'ETIMEDOUT' })));
      req.on('error', (error: NodeJS.ErrnoException) => reject(networkError(target.url, error)));
      if (payload !== undefined) req.write(payload);
      req.end();
    });
  }

  return {
    url: target.url,
    request: <T>(method: string, path: string, body?: unknown) => send(method, path, body, false) as Promise<T>,
    text: (method, path) => send(method, path, undefined, true) as Promise<string>,
  };
}

/** The admin API path of one application. */
export const applicationPath = (id: string) => `/api/admin/applications/${encodeURIComponent(id)}`;

/** Follows `nextCursor` to the end of an admin list, 200 items a request. */
export async function listAll<T>(client: AdminClient, path: string, key: string, query: Record<string, string | undefined> = {}): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null | undefined;
  do {
    const params = new URLSearchParams({ limit: '200' });
    for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, value);
    if (cursor) params.set('cursor', cursor);
    const page = await client.request<Record<string, unknown> & { nextCursor: string | null }>('GET', `${path}?${params}`);
    items.push(...((page[key] as T[]) ?? []));
    cursor = page.nextCursor;
  } while (cursor);
  return items;
}

export interface AdminRun {
  client: AdminClient;
  values: Values;
  positionals: string[];
  json: boolean;
}

/**
 * An admin command from its own flag table (the connection flags are added), the positionals it
 * wants (`usage` for `--help`, `min` to `max` of them, max undefined for any number, and the
 * sentence `missing` when they do not fit) and what it does with a client.
 */
export function adminCommand(spec: {
  flags?: FlagTable;
  positionals?: { usage: string; min: number; max?: number; missing: string };
  run(context: AdminRun): Promise<void>;
}): Command {
  const flags = { ...(spec.flags ?? {}), ...connectionFlags };
  return {
    options: { ...flagOptions(flags), ...refusedFlags },
    help: flagHelp(flags),
    positionals: spec.positionals?.usage,
    async run(values, positionals) {
      const wanted = spec.positionals ?? { usage: '', min: 0, max: 0, missing: 'This command takes no arguments.' };
      if (positionals.length < wanted.min || (wanted.max !== undefined && positionals.length > wanted.max)) {
        throw new ConfigError(`${wanted.missing} Run with --help for its flags.`);
      }
      await spec.run({ client: adminClient(values, flags), values, positionals, json: values.json === true });
    },
  };
}
