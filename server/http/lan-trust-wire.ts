/**
 * LAN trust on the wire (spec lan-trust.md), and the one place the core meets the trust plugin
 * (server/trust/): the core's routes name these shapes (`GET /api/admin/tls` adds `trust` and
 * `acme`; `GET /api/admin/applications/:id/setup` adds `trust`), and read their values through
 * `ctx.lanTrust`, which the trust plugin fills when it is registered. Without the plugin every
 * answer is null. This file is the wiring to move onto the app context's registries once they land
 * (docs/architecture.md); nothing here imports a feature or a plugin.
 */
import { Type, type Static } from 'typebox';

const NullableTimestamp = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

/** `trust` of `GET /api/admin/tls`: where devices open the trust page (the panel draws it as a QR code). */
export const TrustLinkSchema = Type.Object(
  {
    url: Type.String({ description: 'the trust page over HTTPS, {issuer}/trust' }),
    plainHttpUrl: Type.Union([Type.String(), Type.Null()], { description: 'the same page over plain http (GATEHOUSE_HTTP_REDIRECT_PORT), for devices that do not trust the CA yet' }),
    fingerprintSha256: Type.String({ description: 'the local CA, as `openssl x509 -fingerprint -sha256` prints it' }),
  },
  { additionalProperties: false },
);
export type TrustLink = Static<typeof TrustLinkSchema>;

/** `acme` of `GET /api/admin/tls` (GATEHOUSE_TLS=acme). */
export const AcmeStatusSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('pending'), Type.Literal('valid'), Type.Literal('failed')], {
      description: 'pending: no certificate from the ACME server yet (the local one serves); valid: one serves; failed: the last attempt failed (the current certificate keeps serving; see lastError)',
    }),
    domains: Type.Array(Type.String()),
    notAfter: NullableTimestamp,
    renewAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'a third of its lifetime before notAfter' }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'why the last attempt failed (ACME or DNS), in words' }),
  },
  { additionalProperties: false },
);
export type AcmeStatus = Static<typeof AcmeStatusSchema>;

/** How an app's server trusts the local CA: one generator, by the app's runtime. */
export const TRUST_RUNTIMES = ['node', 'python', 'php', 'nextcloud', 'java', 'system'] as const;
export type TrustRuntime = (typeof TRUST_RUNTIMES)[number];

/** `trust` of `GET /api/admin/applications/:id/setup`. */
export const SetupTrustSchema = Type.Object(
  {
    caUrl: Type.String({ description: 'where to download the CA (PEM)' }),
    fingerprintSha256: Type.String(),
    caPath: Type.String({ description: 'where the app\'s machine keeps the CA (?caPath=, default /etc/ssl/certs/gatehouse-ca.pem)' }),
    runtime: Type.Union([Type.Literal('node'), Type.Literal('python'), Type.Literal('php'), Type.Literal('nextcloud'), Type.Literal('java'), Type.Literal('system')]),
    env: Type.Record(Type.String(), Type.String(), { description: 'environment variables to start the app with' }),
    settings: Type.Array(Type.Object({ file: Type.String(), name: Type.String(), value: Type.String() }, { additionalProperties: false }), {
      description: 'lines of the runtime\'s own configuration (php.ini, config.php)',
    }),
    commands: Type.Array(Type.String(), { description: 'shell commands, in order' }),
  },
  { additionalProperties: false },
);
export type SetupTrust = Static<typeof SetupTrustSchema>;

/** What the trust plugin offers the core (ctx.lanTrust). */
export interface LanTrustHooks {
  /** The trust page's link, null without a local CA. */
  link(): TrustLink | null;
  /** The ACME certificate's state, null unless GATEHOUSE_TLS=acme. */
  acme(): AcmeStatus | null;
  /** The ACME certificate (PEM chain) while one serves, else null. */
  acmeCertificate(): string | null;
  /** An app's trust lines, null while no local-CA certificate serves (caPath already checked). */
  setup(runtime: TrustRuntime, caPath: string): SetupTrust | null;
}

export const NO_LAN_TRUST: LanTrustHooks = { link: () => null, acme: () => null, acmeCertificate: () => null, setup: () => null };

/** The CA path an app's set-up text uses unless `?caPath=` names another. */
export const DEFAULT_CA_PATH = '/etc/ssl/certs/gatehouse-ca.pem';

/**
 * `caPath` as the contract allows it: absolute, of `[A-Za-z0-9._/-]` only (it is pasted into
 * shells and configuration files), no `..` step, at most 255 characters. Undefined when it is fine,
 * else the message for `query.caPath`.
 */
export function caPathProblem(path: string): string | undefined {
  if (!/^\/[A-Za-z0-9._/-]*$/.test(path)) return 'must be an absolute path of letters, digits, ".", "_", "/" and "-" only';
  if (path.length > 255) return 'must be at most 255 characters';
  if (path.split('/').some((step) => step === '..' || step === '.')) return 'must not contain "." or ".." steps';
  if (path.endsWith('/')) return 'must name a file, not a directory';
  return undefined;
}
