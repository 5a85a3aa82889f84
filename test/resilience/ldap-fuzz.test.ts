/**
 * Hostile input on the LDAP port (issue 35, "Bad input"; decision 0164): the built server, in its
 * own process, with GATEHOUSE_LDAP=on. fast-check sends random bytes, random well-formed BER
 * trees, and valid requests mutated (bytes flipped, cut short, lengths inflated, bytes added), one
 * connection per case; each connection must end in responses, a Notice of Disconnection or a close
 * within two seconds, and after every case a long-lived bound connection must still be answered
 * at once (no stuck loop). Then the named attacks: a length claiming a megabyte, a filter nested
 * thousands deep, the largest size and time limits, a flood of pipelined requests, and more
 * connections from one address than it may hold. At the end the process is alive and its HTTP
 * side answers.
 *
 * `FUZZ_SEED=<n>` replays a run; `FUZZ_RUNS=<n>` sets the cases per property.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { CLI, cleanEnv, removeTempDirs, startServer, tempDir, type ServerProcess } from '../helpers/server-process.js';
import { freePort } from '../helpers/free-port.js';
import { ADMIN_TOKEN, adminCall, postJson, sessionCookie, signUp } from './real-server.js';
import { RawLdap, and, bindRequest, equality, message, not, present, searchRequest } from '../helpers/ldap-raw.js';
import { constructed, elementLength, encode, integer, octets, primitive, sequence, type Element } from '../../server/ldap/ber.js';
import { LIMITS, decodeMessage } from '../../server/ldap/protocol.js';
import { MAX_CONNECTIONS_PER_ADDRESS } from '../../server/ldap/server.js';
import { MAX_QUEUED } from '../../server/ldap/connection.js';

const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 400);
const BASE = 'dc=gatehouse';

let server: ServerProcess;
let port: number;
let servicePassword: string;
let appPassword: string;
let watcher: RawLdap;
let watchId = 100;

beforeAll(async () => {
  port = await freePort();
  server = await startServer(process.execPath, [CLI, 'serve', '--port', '0', '--ldap', '--data-dir', tempDir('gatehouse-ldap-fuzz-')], cleanEnv({
    ADMIN_TOKEN, GATEHOUSE_LDAP_PORT: String(port), GATEHOUSE_SIGN_UP_RATE_LIMIT: '1000',
  }));
  const created = await adminCall(server.url, 'POST', '/api/admin/applications', {
    id: 'media', name: 'Media', audience: 'https://media.example.com', clientType: 'spa', redirectUris: ['https://media.example.com/cb'],
    authPolicy: { signup_policy: 'open' }, ldap: { enabled: true },
  });
  expect(created.status).toBe(201);
  servicePassword = created.body.ldapPassword;
  const cookie = sessionCookie(await signUp(server.url, 'ada@example.com', 'media'));
  const made = await postJson(server.url, '/api/me/app-passwords', { applicationId: 'media', name: 'fuzz' }, { cookie });
  expect(made.status).toBe(201);
  appPassword = made.body.password;
  watcher = await RawLdap.open(port);
  watcher.send(bindRequest(1, `cn=media,ou=services,${BASE}`, servicePassword));
  expect((await watcher.answers(1))[0]).toMatchObject({ code: 0 });
}, 120_000);

afterAll(async () => {
  watcher?.close();
  console.log(`LDAP fuzz seed ${SEED}`);
  await server?.stop();
  removeTempDirs();
});

/** The bound watcher is answered at once: the server neither died nor hangs. */
async function stillAnswers() {
  const id = ++watchId;
  watcher.send(searchRequest(id, `uid=ada,ou=people,${BASE}`, present('objectClass'), { scope: 0, attributes: ['uid'] }));
  const answers = await watcher.answers(id, 3_000);
  expect(answers.map((r) => [r.tag, r.code ?? r.dn])).toEqual([[0x64, `uid=ada,ou=people,${BASE}`], [0x65, 0]]);
}

/**
 * Sends `bytes` on a new connection; resolves when the server closed it, a little after its first
 * answer, or after `ms` (then the client closes it).
 */
function throwAt(bytes: Buffer, ms: number): Promise<{ closed: boolean; received: number }> {
  return new Promise((resolve) => {
    let received = 0;
    const socket = connect(port, '127.0.0.1', () => socket.write(bytes));
    const give = () => {
      socket.destroy();
      resolve({ closed: false, received });
    };
    let timer = setTimeout(give, ms);
    socket.on('data', (chunk) => {
      received += chunk.length;
      clearTimeout(timer);
      timer = setTimeout(give, 100);
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, received });
    });
  });
}

const validMessages = (): Buffer[] => [
  bindRequest(1, `uid=ada,ou=people,${BASE}`, 'x'),
  bindRequest(1, `cn=media,ou=services,${BASE}`, 'wrong-secret'),
  searchRequest(2, BASE, and(equality('objectClass', 'posixAccount'), not(equality('uid', 'bob'))), { attributes: ['cn', 'mail', '+'] }),
  searchRequest(3, '', present('objectClass'), { scope: 0 }),
  message(4, constructed(0x77, octets('1.3.6.1.4.1.4203.1.11.3', 0x80))),
  message(5, constructed(0x66, octets(`uid=ada,ou=people,${BASE}`), sequence())),
  message(6, integer(1, 0x50)),
];

/** Random BER: a tree of elements with random tags whose lengths are all consistent. */
const berTree: fc.Arbitrary<Element> = fc.letrec<{ element: Element }>((tie) => ({
  element: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.tuple(fc.integer({ min: 0, max: 0x1e }), fc.boolean(), fc.uint8Array({ maxLength: 24 })).map(([tag, tagged, value]) => primitive(tag | (tagged ? 0x80 : 0), Buffer.from(value))),
    fc.tuple(fc.constantFrom(0x30, 0x31, 0x60, 0x63, 0x77, 0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa9), fc.array(tie('element'), { maxLength: 5 })).map(([tag, children]) => constructed(tag, ...children)),
  ),
})).element;

const mutated = fc.tuple(fc.constantFrom(...validMessages()), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 6 }), fc.nat(), fc.constantFrom('flip', 'cut', 'inflate', 'append'))
  .map(([base, flips, at, how]) => {
    const bytes = Buffer.from(base);
    if (how === 'flip') for (const [i, v] of flips) bytes[i % bytes.length] = v;
    if (how === 'cut') return bytes.subarray(0, at % bytes.length);
    if (how === 'inflate') bytes[1] = 0x84; // the outer length now claims its next four bytes
    if (how === 'append') return Buffer.concat([bytes, Buffer.from(flips.map(([, v]) => v))]);
    return bytes;
  });

/**
 * What the server must do with `bytes` as the first bytes of a session (RFC 4511 §4.1.1): close a
 * stream that is not LDAP at all, answer (or close on) a whole message, wait for the rest of half
 * of one. An abandon request is the one whole message with no answer.
 */
function expectedOutcome(bytes: Buffer): 'close' | 'answer' | 'wait' | 'any' {
  if (bytes.length === 0) return 'wait';
  if (bytes[0] !== 0x30) return 'close';
  let length: number | undefined;
  try {
    length = elementLength(bytes);
  } catch {
    return 'close';
  }
  if (length !== undefined && length > LIMITS.messageBytes) return 'close';
  if (length === undefined || length > bytes.length) return 'wait';
  try {
    if (decodeMessage(bytes.subarray(0, length)).request.type === 'abandon') return 'any';
  } catch {
    // undecodable: the Notice of Disconnection
  }
  return 'answer';
}

describe('malformed input', () => {
  it('random bytes, random BER and mutated requests: a response, a protocol error or a close; the server goes on', async () => {
    const input = fc.oneof(
      fc.uint8Array({ minLength: 1, maxLength: 300 }).map((a) => Buffer.from(a)),
      berTree.map((tree) => encode(constructed(0x30, integer(7), tree))),
      berTree.map((tree) => encode(tree)),
      mutated,
    );
    await fc.assert(
      fc.asyncProperty(input, async (bytes) => {
        const expected = expectedOutcome(bytes);
        const outcome = await throwAt(bytes, expected === 'wait' ? 200 : 2_000);
        if (expected === 'close') expect(outcome.closed).toBe(true);
        // A whole message is answered (a response, or the Notice of Disconnection) or ends the session.
        if (expected === 'answer') expect(outcome.closed || outcome.received > 0).toBe(true);
        // Half a message: the server waits for the rest, saying nothing yet.
        if (expected === 'wait') expect(outcome).toEqual({ closed: false, received: 0 });
        await stillAnswers();
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  }, 170_000);

  it('a length claiming a megabyte: the Notice of Disconnection (protocolError), at once', async () => {
    const raw = await RawLdap.open(port);
    raw.send(Buffer.from([0x30, 0x83, 0x10, 0x00, 0x00, 0x02, 0x01, 0x01]));
    await raw.waitFor(() => false, 3_000).catch(() => undefined);
    expect(raw.closed).toBe(true);
    expect(raw.responses).toEqual([{ id: 0, tag: 0x78, code: 2, matchedDN: '', diagnostic: 'a message longer than 65536 bytes', name: '1.3.6.1.4.1.1466.20036', controls: [] }]);
    await stillAnswers();
  });

  it('a filter nested 2,000 deep: protocolError for that search, the session goes on', async () => {
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, `cn=media,ou=services,${BASE}`, servicePassword));
    let filter: Element = equality('uid', 'ada');
    for (let i = 0; i < 2_000; i++) filter = not(filter);
    raw.send(searchRequest(2, BASE, filter));
    raw.send(searchRequest(3, `uid=ada,ou=people,${BASE}`, present('uid'), { scope: 0, attributes: ['1.1'] }));
    expect((await raw.answers(2))).toEqual([{ id: 2, tag: 0x65, code: 2, matchedDN: '', diagnostic: 'the filter nests deeper than 32 levels', controls: [] }]);
    expect((await raw.answers(3)).map((r) => r.tag)).toEqual([0x64, 0x65]);
    raw.close();
  });

  it('the largest size and time limits change nothing but the answer', async () => {
    const raw = await RawLdap.open(port);
    raw.send(bindRequest(1, `uid=ada,ou=people,${BASE}`, appPassword));
    raw.send(message(2, constructed(0x63, octets(BASE), primitive(0x0a, Buffer.from([2])), primitive(0x0a, Buffer.from([0])), integer(2 ** 31 - 1), integer(2 ** 31 - 1), primitive(0x01, Buffer.from([0])), present('objectClass'), sequence(octets('1.1')))));
    expect((await raw.answers(1))[0]).toMatchObject({ code: 0 });
    const answers = await raw.answers(2);
    expect(answers.at(-1)).toMatchObject({ tag: 0x65, code: 0 });
    expect(answers.filter((r) => r.tag === 0x64).map((r) => r.dn)).toEqual([BASE, `ou=people,${BASE}`, `uid=ada,ou=people,${BASE}`, `ou=groups,${BASE}`, `ou=services,${BASE}`]);
    raw.close();
  });

  it(`more than ${MAX_QUEUED} pipelined requests: busy, and the connection closes`, async () => {
    const raw = await RawLdap.open(port);
    const many = Buffer.concat(Array.from({ length: 200 }, (_, i) => searchRequest(i + 1, '', present('objectClass'), { scope: 0 })));
    raw.send(many);
    await raw.waitFor(() => false, 5_000).catch(() => undefined);
    expect(raw.closed).toBe(true);
    expect(raw.responses.at(-1)).toMatchObject({ id: 0, tag: 0x78, code: 51, name: '1.3.6.1.4.1.1466.20036' });
    await stillAnswers();
  });

  it(`more than ${MAX_CONNECTIONS_PER_ADDRESS} connections from one address: the rest are turned away (busy); others still served`, async () => {
    // The watcher (and any connection an earlier case left) holds some of the address's already.
    const held = (await adminCall(server.url, 'GET', '/api/admin/overview')).body.ldap.connections as number;
    expect(held).toBeGreaterThanOrEqual(1);
    const crowd = await Promise.all(Array.from({ length: MAX_CONNECTIONS_PER_ADDRESS + 10 }, () => RawLdap.open(port)));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const refused = crowd.filter((c) => c.closed);
    expect(refused.length).toBe(10 + held);
    for (const c of refused) expect(c.responses).toEqual([expect.objectContaining({ id: 0, tag: 0x78, code: 51, diagnostic: 'too many connections' })]);
    for (const c of crowd) c.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await stillAnswers();
    const fresh = await RawLdap.open(port);
    fresh.send(searchRequest(1, '', present('objectClass'), { scope: 0 }));
    expect((await fresh.answers(1)).at(-1)).toMatchObject({ code: 0 });
    fresh.close();
  });

  it('leaves the process alive, its HTTP side answering', async () => {
    expect(server.child.exitCode).toBeNull();
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
  });
});
