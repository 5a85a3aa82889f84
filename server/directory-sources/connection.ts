/**
 * One conversation with a directory source (RFC 4511 over `ldapts`, decision 0390): connect over
 * TLS (`ldaps://`, or `ldap://` upgraded with StartTLS, RFC 4513 §3; plain only to loopback or when
 * the administrator asked for it), bind, and paged searches (RFC 2696, 500 entries a page) whose
 * continuation references are never followed. Every wait is bounded: the TCP connect and every
 * operation by `timeoutMs` (5 s for a sign-in's bind), so a source that hangs is an error, not a
 * stuck request.
 *
 * Failures come back as `SourceError`s that say which step failed in words (`connect`, `tls`,
 * `bind`, `search`): the test endpoint shows them step by step, sign-in answers 503
 * `directory_unavailable` for `connect` and `tls`, and a sync run fails with them.
 */
import { isIP } from '../util/ip-family.js';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { Client, InvalidCredentialsError, type Entry } from 'ldapts';
import { BINARY_ATTRIBUTES } from './defaults.js';

export type SourceStep = 'connect' | 'tls' | 'bind' | 'search';

export class SourceError extends Error {
  override name = 'SourceError';
  constructor(readonly step: SourceStep, message: string) {
    super(message);
  }
  /** The source could not be reached (or not trusted): sign-in answers 503, not "wrong password". */
  get unreachable(): boolean {
    return this.step === 'connect' || this.step === 'tls';
  }
}

export interface Endpoint {
  url: string;
  startTls: boolean;
  caCertificate: string | null;
}

/** Entries a page asks for (spec: 500). */
export const PAGE_SIZE = 500;
/** Bytes one page of answers may take on the wire before the search is stopped (a hostile or broken source). */
export const MAX_PAGE_BYTES = 64 * 1024 * 1024;

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/i;

/** Whether a source URL's host is this machine (plain LDAP allowed there). */
export function isLoopbackUrl(url: string): boolean {
  try {
    return LOOPBACK.test(new URL(url).hostname.replace(/^\[|\]$/g, ''));
  } catch {
    return false;
  }
}

const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'UNABLE_TO_GET_ISSUER_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT', 'CERT_HAS_EXPIRED', 'CERT_NOT_YET_VALID', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE', 'CERT_REJECTED', 'ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO', 'ECONNRESET_TLS',
]);

/** What a failure means, in words an administrator can act on. */
export function classify(error: unknown, during: SourceStep, host: string): SourceError {
  if (error instanceof SourceError) return error;
  const e = error as NodeJS.ErrnoException & { reason?: string };
  const code = e?.code ?? '';
  const message = String(e?.message ?? error);
  if (TLS_CODES.has(code) || /certificate|SSL|TLS/i.test(code) || /certificate|self.signed|altnames|ssl3_|wrong version number/i.test(message)) {
    return new SourceError('tls', `The TLS certificate of ${host} is not trusted (${code || message}): give its CA certificate (caCertificate), or check the address.`);
  }
  if (code === 'ECONNREFUSED') return new SourceError('connect', `${host} refused the connection: is the directory running on that port?`);
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return new SourceError('connect', `${host} could not be found (DNS).`);
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return new SourceError('connect', `${host} cannot be reached from this machine.`);
  if (/Connection timeout|timed out|ETIMEDOUT/i.test(message) || code === 'ETIMEDOUT') {
    return new SourceError('connect', `${host} did not answer in time.`);
  }
  if (/Connection closed|Socket error|ECONNRESET|socket hang up/i.test(message) || code === 'ECONNRESET' || code === 'EPIPE') {
    return new SourceError(during === 'bind' || during === 'search' ? 'connect' : during, `${host} closed the connection.`);
  }
  if (/TLSNotSupported|Protocol error/i.test(message) && during === 'tls') return new SourceError('tls', `${host} does not offer StartTLS.`);
  return new SourceError(during, `${during === 'bind' ? 'Binding' : during === 'search' ? 'Searching' : 'Connecting'} failed: ${message.split('\n')[0]}`);
}

/** Node's TLS options for a source: verified against its CA (or the system's), TLS 1.2 at least. */
function tlsOptions(endpoint: Endpoint, host: string): tls.ConnectionOptions {
  return {
    ...(endpoint.caCertificate ? { ca: [endpoint.caCertificate] } : {}),
    ...(isIP(host) ? {} : { servername: host }),
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  };
}

export interface OpenOptions {
  /** Bound on the connect and on each operation. */
  timeoutMs: number;
}

/** A connection to a source: `open`, then `bind` / `search`, then `close`. */
export class SourceConnection {
  private pageBytes = 0;
  private tooBig = false;

  private constructor(private readonly client: Client, readonly host: string) {}

  /** Connects (and for `ldap://` with StartTLS, upgrades) or throws a `SourceError`. */
  static async open(endpoint: Endpoint, options: OpenOptions): Promise<SourceConnection> {
    let url: URL;
    try {
      url = new URL(endpoint.url);
    } catch {
      throw new SourceError('connect', `${endpoint.url} is not a URL.`);
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const secure = url.protocol === 'ldaps:';
    const options_ = tlsOptions(endpoint, host);
    let connection: SourceConnection | undefined;
    const count = (socket: net.Socket) => {
      socket.on('data', (chunk: Buffer) => connection?.counted(chunk.length, socket));
      return socket;
    };
    const client = new Client({
      url: endpoint.url,
      timeout: options.timeoutMs,
      connectTimeout: options.timeoutMs,
      strictDN: false,
      // ldapts connects with TLS whenever it is given TLS options: only for ldaps:// (StartTLS gets them at the upgrade).
      ...(secure ? { tlsOptions: options_ } : {}),
      // Bytes are counted on the socket LDAP messages arrive on: the TLS socket once StartTLS
      // upgraded the plain one (a listener on the plain socket would steal TLS's records).
      createConnection: ((...args: Parameters<typeof net.connect>) => (endpoint.startTls ? net.connect(...args) : count(net.connect(...args)))) as typeof net.connect,
      createSecureConnection: ((...args: Parameters<typeof tls.connect>) => count(tls.connect(...args))) as typeof tls.connect,
    });
    connection = new SourceConnection(client, host);
    try {
      if (!secure && endpoint.startTls) {
        try {
          await client.startTLS(options_);
        } catch (error) {
          throw classify(error, 'tls', host);
        }
      }
    } catch (error) {
      await connection.close();
      throw classify(error, 'connect', host);
    }
    return connection;
  }

  private counted(bytes: number, socket: net.Socket): void {
    this.pageBytes += bytes;
    if (this.pageBytes > MAX_PAGE_BYTES && !this.tooBig) {
      this.tooBig = true;
      socket.destroy();
    }
  }

  /** Simple bind (RFC 4511 §4.2): `ok`, or `invalid` for wrong credentials (result 49); otherwise throws. */
  async bind(dn: string, password: string): Promise<'ok' | 'invalid'> {
    // RFC 4513 §5.1.2: a simple bind with an empty password is an unauthenticated bind that
    // succeeds without checking anything. Never let it stand for a person's password.
    if (password.length === 0) return 'invalid';
    try {
      await this.client.bind(dn, password);
      return 'ok';
    } catch (error) {
      if (error instanceof InvalidCredentialsError) return 'invalid';
      throw classify(error, 'bind', this.host);
    }
  }

  /**
   * Searches `base` (subtree) page by page (RFC 2696), yielding each page's entries; continuation
   * references are dropped, never chased. Binary attributes (objectGUID) come as bytes.
   */
  async *search(base: string, filter: string, attributes: string[], options: { sizeLimit?: number } = {}): AsyncGenerator<Entry[]> {
    this.pageBytes = 0;
    try {
      const pages = this.client.searchPaginated(base, {
        scope: 'sub',
        filter,
        attributes,
        derefAliases: 'never',
        explicitBufferAttributes: BINARY_ATTRIBUTES,
        paged: { pageSize: PAGE_SIZE },
        ...(options.sizeLimit ? { sizeLimit: options.sizeLimit } : {}),
      });
      // One page ahead: the next page is asked for as soon as one arrives, so the source reads
      // and sends it while this one is worked on (slapd and the sync use both cores, one each).
      let next = pages.next();
      try {
        for (;;) {
          const page = await next;
          if (page.done) break;
          this.pageBytes = 0;
          next = pages.next();
          // Failures of the page ahead are thrown when it is awaited; none is left unhandled meanwhile.
          next.catch(() => {});
          yield page.value.searchEntries;
        }
      } finally {
        // The caller stopped early: the page ahead is let go with the generator.
        void next.then(() => pages.return(undefined), () => {}).catch(() => {});
      }
    } catch (error) {
      if (this.tooBig) throw new SourceError('search', `${this.host} sent more than ${MAX_PAGE_BYTES / 1024 / 1024} MB for one page of ${PAGE_SIZE} entries; the search was stopped.`);
      // The size limit a sample asked for: what came is what was wanted.
      if ((error as { code?: number }).code === 4) return;
      if ((error as { code?: number }).code === 32) throw new SourceError('search', `The base ${base} does not exist in the directory.`);
      throw classify(error, 'search', this.host);
    }
  }

  async close(): Promise<void> {
    await this.client.unbind().catch(() => {});
  }
}
