/**
 * Dynamic DNS updates for ACME DNS-01 (RFC 2136), signed with TSIG (RFC 8945), over TCP (RFC 1035
 * §4.2.2: a two-byte length before each message; RFC 7766 makes TCP a full transport, and an update
 * with its TSIG record is best kept off UDP's 512 bytes). What the ACME manager needs:
 * - `zoneOf`: the zone holding a name, by SOA (the answer's owner, or the SOA in the authority
 *   section of a negative answer), unless configured;
 * - `addTxt` / `removeTxt`: one TXT record added (§2.5.1) or that one record deleted (class NONE,
 *   §2.5.4), leaving other records of the name (a wildcard's and its base's challenges share it);
 * - `txtValues`: the TXT records the server holds for a name, to check the update took before the
 *   ACME server is asked to validate.
 * Every answer to a signed update must be signed by the same key (tsig.ts); an unsigned refusal is
 * reported with its rcode and TSIG error.
 */
import { randomInt } from 'node:crypto';
import { connect } from 'node:net';
import { CLASS, DnsWireError, decodeMessage, encodeMessage, OPCODE, opcodeOf, RCODE_NAMES, rcodeOf, readTxt, TYPE, txtData, type DecodedMessage, type Message } from './dns-wire.js';
import { signRequest, verifyResponse, type TsigKey } from './tsig.js';

export interface DnsServer {
  host: string;
  port: number;
}

/** A DNS failure, in words fit for the panel's `lastError`. */
export class DnsUpdateError extends Error {
  override name = 'DnsUpdateError';
}

const TIMEOUT_MS = 10_000;
const MAX_MESSAGE = 65_535;

/** One message over one TCP connection: sends `request`, reads one length-prefixed answer. */
function exchange(server: DnsServer, request: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: server.host, port: server.port });
    let received = Buffer.alloc(0);
    const fail = (why: string) => {
      socket.destroy();
      reject(new DnsUpdateError(`DNS server ${server.host}:${server.port}: ${why}`));
    };
    socket.setTimeout(TIMEOUT_MS, () => fail('no answer within 10 s'));
    socket.on('error', (error: NodeJS.ErrnoException) => fail(error.code === 'ECONNREFUSED' ? 'connection refused' : error.message));
    socket.on('connect', () => {
      const length = Buffer.alloc(2);
      length.writeUInt16BE(request.length);
      socket.write(Buffer.concat([length, request]));
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (received.length > MAX_MESSAGE + 2) return fail('answer too long');
      if (received.length >= 2 && received.length >= 2 + received.readUInt16BE(0)) {
        socket.end();
        resolve(received.subarray(2, 2 + received.readUInt16BE(0)));
      }
    });
    socket.on('end', () => {
      if (received.length < 2 || received.length < 2 + received.readUInt16BE(0)) fail('the connection closed before a whole answer');
    });
  });
}

function message(opcode: number, fields: Partial<Message>): Message {
  return { id: randomInt(0, 0x10000), flags: opcode << 11, questions: [], answers: [], authorities: [], additionals: [], ...fields };
}

async function ask(server: DnsServer, request: Message, key?: TsigKey): Promise<DecodedMessage> {
  const encoded = encodeMessage(request);
  const now = Math.floor(Date.now() / 1000);
  const signed = key ? signRequest(encoded, key, now) : undefined;
  const raw = await exchange(server, signed?.signed ?? encoded);
  let answer: DecodedMessage;
  try {
    answer = decodeMessage(raw);
  } catch (error) {
    throw new DnsUpdateError(`DNS server ${server.host}:${server.port} sent a malformed answer (${(error as DnsWireError).message})`);
  }
  if (answer.id !== request.id || opcodeOf(answer.flags) !== opcodeOf(request.flags) || !(answer.flags & 0x8000)) {
    throw new DnsUpdateError(`DNS server ${server.host}:${server.port} answered another question`);
  }
  if (key && signed) {
    const problem = verifyResponse(raw, answer, key, signed.mac, Math.floor(Date.now() / 1000));
    const rcode = rcodeOf(answer.flags);
    if (problem) {
      const refused = rcode !== 0 ? `${RCODE_NAMES[rcode] ?? rcode}, ` : '';
      throw new DnsUpdateError(`DNS server ${server.host}:${server.port} refused the TSIG key "${key.name}" (${refused}${problem}): check GATEHOUSE_ACME_RFC2136_TSIG_NAME, _ALGORITHM and the secret file`);
    }
  }
  return answer;
}

const strip = (name: string) => name.toLowerCase().replace(/\.$/, '');

/** The zone holding `name`, by its SOA at `server` (walking up towards the root). */
export async function zoneOf(server: DnsServer, name: string): Promise<string> {
  let candidate = strip(name);
  for (;;) {
    const answer = await ask(server, message(OPCODE.QUERY, { questions: [{ name: candidate, type: TYPE.SOA, class: CLASS.IN }] }));
    const rcode = rcodeOf(answer.flags);
    if (rcode !== 0 && rcode !== 3) throw new DnsUpdateError(`DNS server ${server.host}:${server.port} answered ${RCODE_NAMES[rcode] ?? rcode} when asked for the zone of ${name}`);
    const soa = [...answer.answers, ...answer.authorities].find((r) => r.type === TYPE.SOA);
    if (soa) return strip(soa.name);
    if (!candidate.includes('.')) throw new DnsUpdateError(`DNS server ${server.host}:${server.port} holds no zone for ${name}; set GATEHOUSE_ACME_RFC2136_ZONE`);
    candidate = candidate.slice(candidate.indexOf('.') + 1);
  }
}

async function update(server: DnsServer, key: TsigKey, zone: string, record: Message['authorities'][number], what: string): Promise<void> {
  const answer = await ask(server, message(OPCODE.UPDATE, { questions: [{ name: zone, type: TYPE.SOA, class: CLASS.IN }], authorities: [record] }), key);
  const rcode = rcodeOf(answer.flags);
  if (rcode !== 0) {
    const hint = rcode === 5 ? ' (the server\'s update policy does not let this key change that name)' : rcode === 9 ? ' (the server is not authoritative for the zone, or refused the key)' : rcode === 10 ? ' (the name is not in the zone)' : '';
    throw new DnsUpdateError(`DNS server ${server.host}:${server.port} refused to ${what}: ${RCODE_NAMES[rcode] ?? rcode}${hint}`);
  }
}

export function addTxt(server: DnsServer, key: TsigKey, zone: string, name: string, value: string, ttl = 60): Promise<void> {
  return update(server, key, zone, { name, type: TYPE.TXT, class: CLASS.IN, ttl, data: txtData(value) }, `add the TXT record of ${name}`);
}

export function removeTxt(server: DnsServer, key: TsigKey, zone: string, name: string, value: string): Promise<void> {
  return update(server, key, zone, { name, type: TYPE.TXT, class: CLASS.NONE, ttl: 0, data: txtData(value) }, `remove the TXT record of ${name}`);
}

/** The TXT values the server holds for `name` (none when it has none). */
export async function txtValues(server: DnsServer, name: string): Promise<string[]> {
  const answer = await ask(server, message(OPCODE.QUERY, { questions: [{ name, type: TYPE.TXT, class: CLASS.IN }] }));
  const rcode = rcodeOf(answer.flags);
  if (rcode !== 0 && rcode !== 3) throw new DnsUpdateError(`DNS server ${server.host}:${server.port} answered ${RCODE_NAMES[rcode] ?? rcode} for the TXT records of ${name}`);
  return answer.answers.filter((r) => r.type === TYPE.TXT && strip(r.name) === strip(name)).map((r) => readTxt(r.data));
}
