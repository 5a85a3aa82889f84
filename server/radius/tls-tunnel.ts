/**
 * RFC 5216 §2.1–2.3 and RFC 5281 §7–8: the TLS server side of EAP-TLS and EAP-TTLS, run by
 * Node's own TLS (OpenSSL) over an in-memory stream: what the peer's EAP fragments carry is
 * written into it, and what TLS writes back is collected for the next challenge. TLS 1.2 and 1.3
 * (RFC 9190 for EAP-TLS 1.3, RFC 9427 for EAP-TTLS 1.3).
 *
 * Keys (the MSK the access point gets as MS-MPPE keys):
 * - TLS 1.2: EAP-TLS `PRF(master, "client EAP encryption", client.random || server.random)`
 *   (RFC 5216 §2.3), EAP-TTLS the same with "ttls keying material" (RFC 5281 §8); OpenSSL's
 *   keying-material exporter without a context computes exactly that.
 * - TLS 1.3: `TLS-Exporter("EXPORTER_EAP_TLS_Key_Material", Type-Code, 128)` (RFC 9190 §2.3,
 *   RFC 9427 §2.1: Type-Code 0x0D for TLS, 0x15 for TTLS).
 * MSK is the first 64 octets, EMSK the next 64.
 *
 * Session resumption is off (no tickets, no cache): every authentication presents its certificate
 * and is checked live. The handshake's cryptography runs inside OpenSSL in a few milliseconds per
 * step (bench `radius`); nothing here waits on I/O.
 */
import { constants, X509Certificate } from 'node:crypto';
import { Duplex } from 'node:stream';
import { createSecureContext, TLSSocket, type PeerCertificate, type SecureContext } from 'node:tls';
import { setImmediate as nextTurn } from 'node:timers/promises';

export interface TunnelMaterial {
  key: string;
  cert: string;
  /** The appliance CA: sent after the server certificate, and what client certificates must chain to. */
  ca: string;
}

/** One secure context per certificate: building it parses the key (≈ 1 ms), so it is reused. */
export function tunnelContext(material: TunnelMaterial): SecureContext {
  return createSecureContext({
    key: material.key,
    cert: `${material.cert.trim()}\n${material.ca.trim()}\n`,
    ca: material.ca,
    minVersion: 'TLSv1.2',
    maxVersion: 'TLSv1.3',
    secureOptions: constants.SSL_OP_NO_TICKET,
  });
}

export class TlsTunnel {
  private readonly wire: Duplex;
  private readonly socket: TLSSocket;
  private written: Buffer[] = [];
  private plain: Buffer[] = [];
  private writes = 0;
  /** Set once the handshake has finished on our side. */
  established = false;
  /** The TLS error that ended the tunnel, if one did. */
  failed: Error | undefined;

  constructor(context: SecureContext, requestCert: boolean) {
    const written = this.written;
    const self = this;
    this.wire = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        written.push(chunk);
        self.writes++;
        callback();
      },
    });
    this.socket = new TLSSocket(this.wire, { isServer: true, secureContext: context, requestCert, rejectUnauthorized: false });
    this.socket.on('secure', () => {
      this.established = true;
    });
    this.socket.on('data', (chunk: Buffer) => this.plain.push(chunk));
    this.socket.on('error', (error: Error) => {
      this.failed ??= error;
    });
  }

  /**
   * Gives TLS what the peer sent and waits until it has answered: the records to send back (maybe
   * none) and the application data that arrived (TTLS's AVPs).
   */
  async feed(records: Buffer): Promise<{ out: Buffer; plain: Buffer }> {
    if (records.length) this.wire.push(records);
    await this.settle();
    return this.take();
  }

  /** Writes application data into the tunnel (the TLS 1.3 commitment octet) and returns the records. */
  async send(data: Buffer): Promise<Buffer> {
    this.socket.write(data);
    await this.settle();
    return this.take().out;
  }

  private take(): { out: Buffer; plain: Buffer } {
    const out = Buffer.concat(this.written);
    const plain = Buffer.concat(this.plain);
    this.written.length = 0;
    this.plain.length = 0;
    return { out, plain };
  }

  /** Lets OpenSSL's work run to the end: until two turns of the event loop pass without a write. */
  private async settle(): Promise<void> {
    let quiet = 0;
    for (let turn = 0; turn < 64 && quiet < 2; turn++) {
      const before = this.writes + this.plain.length;
      await nextTurn();
      quiet = this.writes + this.plain.length === before ? quiet + 1 : 0;
    }
  }

  get protocol(): string | null {
    return this.socket.getProtocol();
  }

  /**
   * The peer's certificate (EAP-TLS) when `ca` issued and signed it and it is within its validity
   * (checked here: a TLSSocket made without a tls.Server never sets `authorized`), else undefined.
   */
  peer(ca: X509Certificate, now: Date): Buffer | undefined {
    const presented = this.socket.getPeerCertificate(false) as PeerCertificate | undefined;
    if (!presented?.raw) return undefined;
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(presented.raw);
    } catch {
      return undefined;
    }
    if (!certificate.checkIssued(ca) || !certificate.verify(ca.publicKey)) return undefined;
    if (new Date(certificate.validFrom) > now || new Date(certificate.validTo) <= now) return undefined;
    return certificate.raw;
  }

  /** RFC 5216 §2.3 / RFC 5281 §8 / RFC 9190 §2.3 / RFC 9427 §2.1: MSK and EMSK. */
  keys(method: 'tls' | 'ttls'): { msk: Buffer; emsk: Buffer } {
    const material =
      this.socket.getProtocol() === 'TLSv1.3'
        ? this.socket.exportKeyingMaterial(128, 'EXPORTER_EAP_TLS_Key_Material', Buffer.from([method === 'tls' ? 0x0d : 0x15]))
        : // No context (OpenSSL's use_context = 0): the TLS 1.2 PRF over client.random || server.random.
          this.socket.exportKeyingMaterial(128, method === 'tls' ? 'client EAP encryption' : 'ttls keying material', undefined as unknown as Buffer);
    return { msk: material.subarray(0, 64), emsk: material.subarray(64, 128) };
  }

  close(): void {
    this.socket.destroy();
    this.wire.destroy();
  }
}
