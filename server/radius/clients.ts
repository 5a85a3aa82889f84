/**
 * RFC 2865 §3 ("A request from a client for which the RADIUS server does not have a shared secret
 * MUST be silently discarded") and spec radius.md: which application's client a datagram comes
 * from, by its source address. Every application's `radius.clients` are held in memory (a few
 * dozen ranges in all) and matched most specific first; the table is read again when an
 * application changes (the plugin's hook) and at least every RELOAD_MS (another instance on the
 * same PostgreSQL database may have changed them). A packet never waits for the database to know
 * its client.
 */
import { BlockList } from 'node:net';
import { isIP } from '../util/ip-family.js';
import type { Db } from '../db/client.js';
import { applications, type RadiusClientSettings, type RadiusSettings } from '../db/schema.js';
import { openAtRest } from '../db/secrets-at-rest.js';
import { many } from '../db/store.js';
import { isNotNull } from 'drizzle-orm';

export const RELOAD_MS = 5_000;

export const secretPurpose = (applicationId: string, name: string) => `radius client secret ${applicationId}/${name}`;

/** The plaintext secret of a stored client. */
export function clientSecret(db: Db, applicationId: string, client: RadiusClientSettings): string {
  return openAtRest(db, client.secret, secretPurpose(applicationId, client.name));
}

export interface KnownClient {
  applicationId: string;
  name: string;
  secret: Buffer;
  /** The application's VLAN rules. */
  settings: RadiusSettings;
}

/** An address or CIDR range in its normal form (`192.168.10.0/24`, `10.0.0.7`, `fd00::/64`), or undefined. */
export function normalizeRange(text: string): string | undefined {
  const [address = '', bits, extra] = text.trim().split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return undefined;
  const max = family === 4 ? 32 : 128;
  if (bits === undefined) return family === 4 ? address : compressV6(address);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  const prefix = Number(bits);
  if (prefix === max) return family === 4 ? address : compressV6(address);
  return `${family === 4 ? maskV4(address, prefix) : maskV6(address, prefix)}/${prefix}`;
}

function maskV4(address: string, prefix: number): string {
  const n = address.split('.').reduce((acc, part) => (acc << 8) + Number(part), 0) >>> 0;
  const masked = prefix === 0 ? 0 : (n & (~0 << (32 - prefix))) >>> 0;
  return [24, 16, 8, 0].map((s) => (masked >>> s) & 255).join('.');
}

function v6Groups(address: string): number[] {
  const [head = '', tail] = address.toLowerCase().split('::');
  const part = (s: string) => (s ? s.split(':') : []);
  let left = part(head);
  let right = tail === undefined ? [] : part(tail);
  const v4 = (list: string[]) => {
    const last = list[list.length - 1];
    if (!last?.includes('.')) return list;
    const b = last.split('.').map(Number);
    return [...list.slice(0, -1), ((b[0]! << 8) | b[1]!).toString(16), ((b[2]! << 8) | b[3]!).toString(16)];
  };
  if (tail === undefined) left = v4(left);
  else right = v4(right);
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}

function compressV6(address: string): string {
  return v6Groups(address).map((g) => g.toString(16)).join(':');
}

function maskV6(address: string, prefix: number): string {
  return v6Groups(address)
    .map((g, i) => {
      const keep = Math.max(0, Math.min(16, prefix - i * 16));
      return (keep === 0 ? 0 : g & (0xffff << (16 - keep)) & 0xffff).toString(16);
    })
    .join(':');
}

interface Entry {
  client: KnownClient;
  prefix: number;
  list: BlockList;
}

/** The clients of every application, matched by address. */
export class ClientTable {
  private readonly entries: Entry[];
  private readonly seen = new Map<string, KnownClient | null>();

  constructor(clients: { client: KnownClient; range: string }[]) {
    this.entries = clients
      .map(({ client, range }) => {
        const [address, bits] = range.split('/') as [string, string | undefined];
        const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
        const prefix = bits === undefined ? (type === 'ipv6' ? 128 : 32) : Number(bits);
        const list = new BlockList();
        list.addSubnet(address, prefix, type);
        return { client, prefix, list };
      })
      .sort((a, b) => b.prefix - a.prefix);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The client a datagram from `address` belongs to, or undefined (drop it). */
  find(address: string): KnownClient | undefined {
    const cached = this.seen.get(address);
    if (cached !== undefined) return cached ?? undefined;
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const type = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
    const found = this.entries.find((e) => e.list.check(plain, type))?.client;
    // Bounded: made-up source addresses cannot grow it past this.
    if (this.seen.size > 10_000) this.seen.clear();
    this.seen.set(address, found ?? null);
    return found;
  }
}

export async function loadClients(db: Db): Promise<ClientTable> {
  const rows = await many(db.select({ id: applications.id, radius: applications.radius }).from(applications).where(isNotNull(applications.radius)));
  const clients: { client: KnownClient; range: string }[] = [];
  for (const row of rows) {
    if (!row.radius) continue;
    for (const client of row.radius.clients) {
      clients.push({
        client: { applicationId: row.id, name: client.name, secret: Buffer.from(clientSecret(db, row.id, client), 'utf8'), settings: row.radius },
        range: client.address,
      });
    }
  }
  return new ClientTable(clients);
}

/** The table, kept fresh: `current` is synchronous; a reload runs beside the packets. */
export class ClientDirectory {
  private table = new ClientTable([]);
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(private readonly db: Db) {}

  async reload(): Promise<void> {
    this.loading ??= loadClients(this.db)
      .then((table) => {
        this.table = table;
        this.loadedAt = Date.now();
      })
      .finally(() => {
        this.loading = undefined;
      });
    await this.loading;
  }

  current(): ClientTable {
    if (Date.now() - this.loadedAt > RELOAD_MS && !this.loading) void this.reload().catch(() => {});
    return this.table;
  }
}
