/**
 * RFC 4511 §5 (transport) and §4: one LDAP session over one TCP (or TLS) connection.
 *
 * The byte stream is cut into LDAPMessages by their BER length (ber.ts `elementLength`); a message
 * longer than LIMITS.messageBytes, or one that cannot be decoded, gets the Notice of Disconnection
 * (protocolError) and the connection is closed (§4.1.1). Requests are answered one at a time, in
 * order, from a queue of at most MAX_QUEUED; an abandon request (§4.11) is handled as it arrives:
 * it drops a queued operation, or stops a search between two slices of its results. Writes wait
 * for the socket to drain (`drained`), so a client that does not read cannot make the server hold
 * more than a slice of results for it. A connection that stays silent IDLE_MS, or leaves a message
 * half-sent PARTIAL_MS, is closed.
 *
 * StartTLS (§4.14, RFC 4513 §3): answered success only when TLS is available, the connection is
 * not already encrypted and nothing else is outstanding; the socket is then wrapped in TLS with
 * the appliance's certificate and the session goes on, still bound as before (anonymous in
 * practice: clients StartTLS first).
 */
import type { Socket } from 'node:net';
import { TLSSocket, type SecureContext } from 'node:tls';
import type { FastifyBaseLogger } from 'fastify';
import type { AppContext } from '../context.js';
import { BerError, elementLength } from './ber.js';
import { ANONYMOUS, bind, refreshIdentity, type BindLimits, type Identity } from './bind.js';
import type { Dn } from './dn.js';
import {
  LIMITS,
  OID,
  Op,
  RequestRefused,
  ResultCode,
  decodeMessage,
  extendedResponse,
  noticeOfDisconnection,
  resultResponse,
  type Message,
  type ResultFields,
} from './protocol.js';

/** Operations waiting behind the one being answered. */
export const MAX_QUEUED = 32;
/** A connection with no traffic for this long is closed (clients such as nslcd reconnect). */
export const IDLE_MS = 15 * 60_000;
/** A message must arrive whole within this long of its first byte. */
export const PARTIAL_MS = 30_000;

/** What a connection needs from its listener. */
export interface ConnectionHost {
  ctx: AppContext;
  log: FastifyBaseLogger;
  base: { text: string; dn: Dn };
  limits: BindLimits;
  /** The TLS context StartTLS upgrades to; undefined when LAN TLS is off. */
  secureContext(): SecureContext | undefined;
  /** Answers a search (search.ts). */
  search(connection: LdapConnection, message: Message & { request: { type: 'search' } }): Promise<void>;
  closed(connection: LdapConnection): void;
}

export class LdapConnection {
  identity: Identity = ANONYMOUS;
  private buffer: Buffer = Buffer.alloc(0);
  private readonly queue: Message[] = [];
  private working = false;
  private current: number | undefined;
  private readonly abandoned = new Set<number>();
  private partialTimer: NodeJS.Timeout | undefined;
  private ended = false;
  private finished = false;
  private corked = false;
  private socket: Socket;

  constructor(
    socket: Socket,
    private readonly host: ConnectionHost,
    public secure: boolean,
    readonly address: string,
    readonly loopback: boolean,
  ) {
    this.socket = socket;
    this.attach(socket);
  }

  private attach(socket: Socket) {
    socket.setNoDelay(true);
    socket.setTimeout(IDLE_MS, () => this.close());
    socket.on('data', (chunk: Buffer) => this.received(chunk));
    socket.on('error', () => this.close());
    socket.on('close', () => this.finish());
  }

  /** Whether the operation with this message id was abandoned (or the connection went away). */
  isAbandoned(id: number): boolean {
    return this.ended || this.abandoned.has(id);
  }

  get open(): boolean {
    return !this.ended;
  }

  /**
   * Sends one encoded message; false once the connection is gone. Messages written in one turn of
   * the event loop (a bind's answer; a search's entries and its done) leave in one write: a
   * system call per message was a fifth of the server's time under the benchmark's load.
   */
  send(bytes: Buffer): boolean {
    if (this.ended) return false;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      process.nextTick(() => this.uncork());
    }
    this.socket.write(bytes);
    return true;
  }

  private uncork() {
    if (!this.corked) return;
    this.corked = false;
    this.socket.uncork();
  }

  /** Resolves when the socket has room for more (at once when it has), or the connection ended. */
  drained(): Promise<void> {
    if (this.ended || !this.socket.writableNeedDrain) return Promise.resolve();
    this.uncork();
    return new Promise((resolve) => {
      const done = () => {
        this.socket.off('drain', done);
        this.socket.off('close', done);
        resolve();
      };
      this.socket.once('drain', done);
      this.socket.once('close', done);
    });
  }

  /** Sends the Notice of Disconnection (§4.4.1) and closes. */
  disconnect(code: number, diagnostic: string): void {
    if (this.ended) return;
    this.uncork();
    this.socket.end(noticeOfDisconnection(code, diagnostic));
    this.ended = true;
    this.clearPartial();
    setTimeout(() => this.socket.destroy(), 1_000).unref();
  }

  close(): void {
    if (!this.socket.destroyed) this.socket.destroy();
    this.finish();
  }

  private finish() {
    this.ended = true;
    this.clearPartial();
    this.queue.length = 0;
    if (!this.finished) {
      this.finished = true;
      this.host.closed(this);
    }
  }

  private clearPartial() {
    if (this.partialTimer) clearTimeout(this.partialTimer);
    this.partialTimer = undefined;
  }

  private received(chunk: Buffer) {
    if (this.ended) return;
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    try {
      for (;;) {
        if (this.buffer.length === 0) break;
        if (this.buffer[0] !== 0x30) throw new BerError('a message must be a SEQUENCE');
        const length = elementLength(this.buffer);
        if (length !== undefined && length > LIMITS.messageBytes) {
          return this.disconnect(ResultCode.protocolError, `a message longer than ${LIMITS.messageBytes} bytes`);
        }
        if (length === undefined || this.buffer.length < length) break;
        const frame = this.buffer.subarray(0, length);
        this.buffer = this.buffer.subarray(length);
        this.accept(frame);
        if (this.ended) return;
      }
    } catch (error) {
      if (error instanceof BerError) return this.disconnect(ResultCode.protocolError, error.message);
      throw error;
    }
    if (this.buffer.length === 0) this.clearPartial();
    else if (!this.partialTimer) {
      this.partialTimer = setTimeout(() => this.close(), PARTIAL_MS);
      this.partialTimer.unref();
    }
  }

  /** One framed message: decoded and queued (an abandon acts at once). */
  private accept(frame: Buffer) {
    let message: Message;
    try {
      message = decodeMessage(frame);
    } catch (error) {
      if (error instanceof RequestRefused) {
        this.enqueue({ id: error.messageId, request: { type: 'write', operation: 'modify', responseTag: error.responseTag }, controls: [], refused: error } as QueuedMessage);
        return;
      }
      throw error;
    }
    if (message.request.type === 'abandon') {
      const target = message.request.messageId;
      const queued = this.queue.findIndex((m) => m.id === target);
      if (queued >= 0) this.queue.splice(queued, 1);
      else if (this.current === target) this.abandoned.add(target);
      return;
    }
    this.enqueue(message);
  }

  private enqueue(message: Message) {
    if (this.queue.length >= MAX_QUEUED) return this.disconnect(ResultCode.busy, `more than ${MAX_QUEUED} operations outstanding`);
    this.queue.push(message);
    void this.pump();
  }

  private async pump() {
    if (this.working) return;
    this.working = true;
    try {
      while (!this.ended && this.queue.length) {
        const message = this.queue.shift()!;
        this.current = message.id;
        try {
          await this.handle(message);
        } catch (error) {
          this.host.log.error({ err: error }, 'LDAP operation failed');
          this.answerFailure(message);
        } finally {
          this.abandoned.delete(message.id);
          this.current = undefined;
        }
      }
    } finally {
      this.working = false;
    }
  }

  /** An unexpected failure: the operation's own response with `other`, no internals. */
  private answerFailure(message: Message) {
    const tag = responseTagOf(message);
    if (tag === undefined) return;
    if (tag === Op.extendedResponse) this.send(extendedResponse(message.id, { code: ResultCode.other, diagnostic: 'internal error' }));
    else this.send(resultResponse(message.id, tag, { code: ResultCode.other, diagnostic: 'internal error' }));
  }

  private async handle(message: Message) {
    const { ctx } = this.host;
    const queued = message as QueuedMessage;
    if (queued.refused) {
      this.send(resultResponse(message.id, queued.refused.responseTag, { code: queued.refused.resultCode, diagnostic: queued.refused.message }));
      return;
    }
    const request = message.request;
    if (request.type === 'unbind') return this.close();
    // A critical control this server does not know (§4.1.11); the search knows paged results.
    const unknownCritical = message.controls.find((c) => c.critical && !(request.type === 'search' && c.oid === OID.pagedResults));
    if (unknownCritical) {
      return this.answer(message, { code: ResultCode.unavailableCriticalExtension, diagnostic: `control ${unknownCritical.oid} is not supported` });
    }
    if (request.type === 'bind') {
      const outcome = await bind(ctx, request, { address: this.address, secure: this.secure, loopback: this.loopback }, this.host.limits, this.host.base);
      this.identity = outcome.identity;
      this.send(resultResponse(message.id, Op.bindResponse, outcome.result));
      return;
    }
    if (request.type === 'extended' && request.oid === OID.startTls) return this.startTls(message.id);
    // A bind that no longer holds (password rotated, app password revoked, LDAP off) is anonymous.
    this.identity = await refreshIdentity(ctx, this.identity);
    if (request.type === 'search') return this.host.search(this, message as Message & { request: { type: 'search' } });
    if (request.type === 'extended') {
      if (request.oid === OID.whoAmI) {
        // RFC 4532 §2: the authorization identity, `dn:<DN>`, or empty for anonymous.
        const identity = this.identity.kind === 'anonymous' ? '' : `dn:${this.identity.dn}`;
        this.send(extendedResponse(message.id, { code: ResultCode.success }, undefined, Buffer.from(identity, 'utf8')));
        return;
      }
      this.send(extendedResponse(message.id, { code: ResultCode.protocolError, diagnostic: `extended operation ${request.oid} is not supported` }));
      return;
    }
    if (request.type === 'write') {
      this.send(resultResponse(message.id, request.responseTag, { code: ResultCode.unwillingToPerform, diagnostic: 'this directory is read-only' }));
    }
  }

  private answer(message: Message, fields: ResultFields) {
    const tag = responseTagOf(message);
    if (tag === Op.extendedResponse) this.send(extendedResponse(message.id, fields));
    else if (tag !== undefined) this.send(resultResponse(message.id, tag, fields));
  }

  /** RFC 4511 §4.14 / RFC 4513 §3: answers, then wraps the socket in TLS. */
  private async startTls(id: number) {
    const context = this.host.secureContext();
    const refuse = (code: number, diagnostic: string) => this.send(extendedResponse(id, { code, diagnostic }, OID.startTls));
    if (!context) return refuse(ResultCode.unavailable, 'TLS is not configured on this server (GATEHOUSE_TLS)');
    if (this.secure) return refuse(ResultCode.operationsError, 'TLS is already in use');
    if (this.queue.length || this.buffer.length) return refuse(ResultCode.operationsError, 'other operations are outstanding');
    const plain = this.socket;
    this.uncork();
    plain.pause();
    plain.removeAllListeners('data');
    plain.removeAllListeners('error');
    plain.removeAllListeners('close');
    plain.removeAllListeners('timeout');
    plain.setTimeout(0);
    await new Promise<void>((resolve) => plain.write(extendedResponse(id, { code: ResultCode.success }, OID.startTls), () => resolve()));
    if (plain.destroyed) return this.finish();
    const secured = new TLSSocket(plain, { isServer: true, secureContext: context });
    this.socket = secured;
    this.secure = true;
    this.attach(secured);
    plain.on('error', () => this.close());
    plain.resume();
  }
}

/** A message whose request was refused while decoding (answered in order, like any other). */
interface QueuedMessage extends Message {
  refused?: RequestRefused;
}

function responseTagOf(message: Message): number | undefined {
  switch (message.request.type) {
    case 'bind':
      return Op.bindResponse;
    case 'search':
      return Op.searchResultDone;
    case 'extended':
      return Op.extendedResponse;
    case 'write':
      return message.request.responseTag;
    default:
      return undefined;
  }
}
