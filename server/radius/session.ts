/**
 * RFC 3579 §2.1 and §2.6.1 (the State attribute ties an EAP conversation's round trips together),
 * RFC 3748 §4.1 (a response must carry the identifier of the request it answers) and spec
 * radius.md ("an EAP conversation longer than 50 round trips or 30 s is dropped"): the EAP
 * conversations in progress, in memory.
 *
 * Bounded: at most MAX_CONVERSATIONS at once and MAX_PER_CLIENT per client address (a new one past
 * either is dropped and counted), each at most MAX_ROUNDS round trips and MAX_AGE_MS old; expired
 * ones are swept (their TLS state freed) every SWEEP_MS. An unknown or expired State is refused.
 */
import { randomBytes } from 'node:crypto';
import { Reassembly, type Outgoing } from './eap.js';
import type { TlsTunnel } from './tls-tunnel.js';

export const MAX_CONVERSATIONS = 4_096;
export const MAX_PER_CLIENT = 1_024;
export const MAX_ROUNDS = 50;
export const MAX_AGE_MS = 30_000;
const SWEEP_MS = 5_000;

export type EapMethod = 'ttls' | 'tls';

export class Conversation {
  readonly state = randomBytes(16);
  readonly key = this.state.toString('hex');
  readonly startedAt: number;
  rounds = 0;
  /** The identifier of our last EAP request: the response must carry it. */
  lastId: number;
  method: EapMethod | undefined;
  tunnel: TlsTunnel | undefined;
  readonly reassembly = new Reassembly();
  outgoing: Outgoing | undefined;
  /** TLS 1.3 EAP-TLS: the commitment message was sent (RFC 9190 §2.5). */
  committed = false;

  constructor(
    readonly clientAddress: string,
    readonly identity: string,
    now: number,
    firstId: number,
  ) {
    this.startedAt = now;
    this.lastId = firstId;
  }

  nextId(): number {
    this.lastId = (this.lastId + 1) & 0xff;
    return this.lastId;
  }
}

export class Conversations {
  private readonly byKey = new Map<string, Conversation>();
  private readonly perClient = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.timer = setInterval(() => this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  get size(): number {
    return this.byKey.size;
  }

  /** A new conversation, or undefined when the caps are reached. */
  start(clientAddress: string, identity: string, responseId: number): Conversation | undefined {
    if (this.byKey.size >= MAX_CONVERSATIONS || (this.perClient.get(clientAddress) ?? 0) >= MAX_PER_CLIENT) {
      this.sweep();
      if (this.byKey.size >= MAX_CONVERSATIONS || (this.perClient.get(clientAddress) ?? 0) >= MAX_PER_CLIENT) return undefined;
    }
    const conversation = new Conversation(clientAddress, identity, this.now(), responseId);
    this.byKey.set(conversation.key, conversation);
    this.perClient.set(clientAddress, (this.perClient.get(clientAddress) ?? 0) + 1);
    return conversation;
  }

  /** The live conversation a State names from this client, or undefined (unknown, another client's, or too old). */
  find(state: Buffer, clientAddress: string): Conversation | undefined {
    if (state.length !== 16) return undefined;
    const conversation = this.byKey.get(state.toString('hex'));
    if (!conversation || conversation.clientAddress !== clientAddress) return undefined;
    if (this.now() - conversation.startedAt > MAX_AGE_MS) {
      this.end(conversation);
      return undefined;
    }
    return conversation;
  }

  /** Forgets a conversation and frees its TLS state. */
  end(conversation: Conversation): void {
    if (!this.byKey.delete(conversation.key)) return;
    conversation.tunnel?.close();
    const left = (this.perClient.get(conversation.clientAddress) ?? 1) - 1;
    if (left > 0) this.perClient.set(conversation.clientAddress, left);
    else this.perClient.delete(conversation.clientAddress);
  }

  sweep(): void {
    const limit = this.now() - MAX_AGE_MS;
    for (const conversation of this.byKey.values()) if (conversation.startedAt < limit) this.end(conversation);
  }

  stop(): void {
    clearInterval(this.timer);
    for (const conversation of [...this.byKey.values()]) this.end(conversation);
  }
}
