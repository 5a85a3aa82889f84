/**
 * Spec radius.md: "EAP-TTLS and EAP-TLS run inside Gatehouse over the LAN TLS certificate … the
 * server certificate's chain is the appliance CA", and network certificates are issued by that CA.
 * The appliance CA and its server certificate live under `<data>/tls/` (ops/tls.ts); RADIUS uses
 * them whether or not HTTPS does (with GATEHOUSE_TLS off or the operator's own certificate, the
 * CA is made there for RADIUS alone), so the CA devices install for EAP is always the one
 * `/ca.pem` serves.
 */
import { readFileSync } from 'node:fs';
import type { Config } from '../config.js';
import { ensureLocalTls, tlsPaths } from '../ops/tls.js';
import type { TunnelMaterial } from './tls-tunnel.js';

const extraNames = (config: Pick<Config, 'tls'>) => (config.tls.mode === 'auto' ? config.tls.extraNames : []);

/** The EAP server's key, certificate and CA (made on first use). */
export function eapMaterial(config: Pick<Config, 'dataDir' | 'tls'>, now: Date): TunnelMaterial {
  const material = ensureLocalTls(config.dataDir, extraNames(config), now);
  return { key: material.key, cert: material.cert, ca: material.caPem! };
}

/** The appliance CA's certificate and key, to issue network certificates with. */
export function issuingCa(config: Pick<Config, 'dataDir' | 'tls'>, now: Date): { certPem: string; keyPem: string } {
  const material = ensureLocalTls(config.dataDir, extraNames(config), now);
  return { certPem: material.caPem!, keyPem: readFileSync(tlsPaths(config.dataDir).caKey, 'utf8') };
}
