/**
 * A real certificate by ACME (RFC 8555) with DNS-01 through RFC 2136 (spec lan-trust.md,
 * "Real-domain certificate"; decision 0371). The protocol is acme-client's (`Client.auto`: account,
 * order, authorizations, finalize, download); the DNS step is ours (rfc2136.ts, signed with TSIG):
 * - the TXT record `_acme-challenge.<domain>` is added at the configured server, checked there
 *   until it answers with the value (before the ACME server is asked to validate: acme-client's own
 *   check asks the system resolver, which on a LAN is often not the server that was updated), and
 *   removed afterwards, one record only;
 * - the local-CA certificate serves until the first certificate arrives; each new one (with its
 *   chain) is stored (store.ts) and handed to `ctx.serveCertificate`, so the next TLS handshake uses
 *   it, without a restart;
 * - a certificate is renewed with a third of its lifetime left (`renewAt`); a failed attempt keeps
 *   the current certificate serving, says why in `lastError`, and is retried after 30 s, 2 min,
 *   10 min, 1 h, then every 6 h; one attempt at a time.
 */
import { readFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { createRequire } from 'node:module';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { AcmeConfig, Config } from '../../config.js';
import type { AcmeStatus } from '../../http/lan-trust-wire.js';
import type { Clock } from '../../util/clock.js';
import { addTxt, removeTxt, txtValues, zoneOf, type DnsServer } from './rfc2136.js';
import type { TsigKey } from './tsig.js';
import { ACCOUNT_KEY_PURPOSE, ensureAcmeDir, readAcmeCertificate, readKey, storeCertificate, writeKey, type AcmeCertificate } from './store.js';
import { existsSync } from 'node:fs';

type AcmeLib = typeof import('acme-client');
// acme-client (and axios under it) load only when GATEHOUSE_TLS=acme asks for a certificate.
let acmeLib: AcmeLib | undefined;
const loadAcme = (): AcmeLib => (acmeLib ??= createRequire(import.meta.url)('acme-client') as AcmeLib);

const RETRY_MS = [30_000, 120_000, 600_000, 3_600_000, 6 * 3_600_000];
/** Look again at least daily (a timer cannot wait months; the clock may jump). */
const MAX_WAIT_MS = 24 * 3_600_000;
const TXT_CHECKS = 20;

/** `renewAt`: a third of the certificate's lifetime before it ends. */
export function renewAt(notBefore: Date, notAfter: Date): Date {
  return new Date(notAfter.getTime() - (notAfter.getTime() - notBefore.getTime()) / 3);
}

export interface AcmeManagerDeps {
  config: Config;
  acme: AcmeConfig;
  clock: Clock;
  log: FastifyBaseLogger;
  serve(material: { key: string; cert: string }): void;
}

/** The TSIG key from its file (base64, as tsig-keygen and BIND write it); never logged, never kept. */
export function readTsigKey(acme: AcmeConfig): TsigKey {
  const { tsigSecretFile, tsigName, tsigAlgorithm } = acme.rfc2136;
  let text: string;
  try {
    text = readFileSync(tsigSecretFile, 'utf8').trim();
  } catch {
    throw new Error(`the TSIG secret file ${tsigSecretFile} cannot be read`);
  }
  // A BIND key clause pasted whole: take its secret.
  const secret = /secret\s+"([^"]+)"/.exec(text)?.[1] ?? text;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret)) throw new Error(`the TSIG secret file ${tsigSecretFile} does not hold a base64 secret`);
  return { name: tsigName, algorithm: tsigAlgorithm, secret: Buffer.from(secret, 'base64') };
}

export class AcmeManager {
  private lastError: string | null = null;
  private failures = 0;
  private attempt: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;

  constructor(private readonly deps: AcmeManagerDeps) {}

  /** The stored certificate, when it is usable now. */
  current(): AcmeCertificate | undefined {
    const { config, acme, clock } = this.deps;
    return readAcmeCertificate(config.dataDir, config.env, acme.domains, clock.now());
  }

  status(): AcmeStatus {
    const cert = this.current();
    return {
      status: this.lastError !== null ? 'failed' : cert ? 'valid' : 'pending',
      domains: this.deps.acme.domains,
      notAfter: cert ? cert.notAfter.toISOString() : null,
      renewAt: cert ? renewAt(cert.notBefore, cert.notAfter).toISOString() : null,
      lastError: this.lastError,
    };
  }

  /** Starts the schedule: at once without a certificate, else at its renewAt. */
  start(): void {
    this.stopped = false;
    this.schedule();
  }

  stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    return this.attempt ?? Promise.resolve();
  }

  /** Asks for a certificate now (or joins the attempt under way). */
  renewNow(): Promise<void> {
    this.attempt ??= this.obtain().finally(() => {
      this.attempt = undefined;
      this.schedule();
    });
    return this.attempt;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const now = this.deps.clock.now().getTime();
    const cert = this.current();
    let wait: number;
    if (this.lastError !== null) wait = RETRY_MS[Math.min(this.failures - 1, RETRY_MS.length - 1)]!;
    else if (!cert) wait = 0;
    else wait = Math.max(0, renewAt(cert.notBefore, cert.notAfter).getTime() - now);
    this.timer = setTimeout(() => {
      const due = this.current();
      const dueNow = this.lastError !== null || !due || renewAt(due.notBefore, due.notAfter).getTime() <= this.deps.clock.now().getTime();
      if (dueNow) void this.renewNow();
      else this.schedule();
    }, Math.min(wait, MAX_WAIT_MS));
    this.timer.unref();
  }

  private async obtain(): Promise<void> {
    const { config, acme, log } = this.deps;
    try {
      const { key, chain } = await this.order();
      storeCertificate(config.dataDir, config.env, key, chain);
      const stored = this.current();
      if (!stored) throw new Error('the ACME server\'s certificate does not name every domain of GATEHOUSE_ACME_DOMAINS, or has expired');
      this.deps.serve({ key: stored.key, cert: stored.cert });
      this.lastError = null;
      this.failures = 0;
      log.info({ domains: acme.domains, notAfter: stored.notAfter.toISOString() }, 'ACME certificate obtained and served');
    } catch (error) {
      this.failures += 1;
      this.lastError = describe(error);
      log.warn({ domains: acme.domains, failures: this.failures }, `ACME certificate not obtained: ${this.lastError}`);
    }
  }

  /** One order from account to chain; the DNS records it adds are removed whatever happens. */
  private async order(): Promise<{ key: string; chain: string }> {
    const { config, acme } = this.deps;
    const lib = loadAcme();
    const tsig = readTsigKey(acme);
    const dns: DnsServer = { host: acme.rfc2136.host, port: acme.rfc2136.port };
    const paths = ensureAcmeDir(config.dataDir);
    if (!existsSync(paths.accountKey)) writeKey(paths.accountKey, (await lib.crypto.createPrivateKey()).toString(), config.env, ACCOUNT_KEY_PURPOSE);
    const accountKey = readKey(paths.accountKey, config.env, ACCOUNT_KEY_PURPOSE);
    // acme-client's one axios instance: the CA that signs the directory's certificate, when it is not a public one.
    lib.axios.defaults.httpsAgent = acme.caFile ? new Agent({ ca: readFileSync(acme.caFile, 'utf8') }) : undefined;
    const client = new lib.Client({ directoryUrl: acme.directory, accountKey });
    const [key, csr] = await lib.crypto.createCsr({ commonName: acme.domains[0]!, altNames: acme.domains });
    const zones = new Map<string, string>();
    const added: { zone: string; name: string; value: string }[] = [];
    const zoneFor = async (name: string) => {
      if (acme.rfc2136.zone) return acme.rfc2136.zone;
      if (!zones.has(name)) zones.set(name, await zoneOf(dns, name));
      return zones.get(name)!;
    };
    try {
      const chain = await client.auto({
        csr,
        email: acme.email,
        termsOfServiceAgreed: true,
        challengePriority: ['dns-01'],
        // Checked here, at the server that was updated (below), not through the system resolver.
        skipChallengeVerification: true,
        challengeCreateFn: async (authz, challenge, keyAuthorization) => {
          if (challenge.type !== 'dns-01') throw new Error(`the ACME server offered no dns-01 challenge for ${authz.identifier.value}`);
          const name = `_acme-challenge.${authz.identifier.value}`;
          const zone = await zoneFor(name);
          await addTxt(dns, tsig, zone, name, keyAuthorization);
          added.push({ zone, name, value: keyAuthorization });
          for (let i = 0; i < TXT_CHECKS; i++) {
            if ((await txtValues(dns, name)).includes(keyAuthorization)) return;
            await new Promise((resolve) => setTimeout(resolve, 250));
          }
          throw new Error(`the DNS server took the update but does not answer ${name} with the new TXT record`);
        },
        challengeRemoveFn: async () => {},
      });
      const leaf = new X509Certificate(chain);
      if (!leaf.checkPrivateKey(createPrivateKey(key))) throw new Error('the ACME server\'s certificate is not for the key Gatehouse sent');
      return { key: key.toString(), chain };
    } finally {
      for (const record of added) {
        await removeTxt(dns, tsig, record.zone, record.name, record.value).catch((error: unknown) =>
          this.deps.log.warn(`ACME: the TXT record of ${record.name} was not removed: ${describe(error)}`),
        );
      }
    }
  }
}

/** An error in words for `lastError`: acme-client's problem documents carry the ACME server's detail. */
function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').slice(0, 500);
}
