/**
 * `POST /api/admin/directory-sources/:id/test` (spec directory-sources.md): what an administrator
 * needs to see before the first sync, step by step: the TCP connection, TLS (the certificate
 * verified), the service account's bind, how many people and groups the filters find, the first
 * few people as they would be mapped (or why they would be skipped), and what a username finds.
 * A failing step is `ok: false` with the reason in words, and the steps after it are not run;
 * the answer is always 200, never a 5xx. Audited as `directory_source.tested`.
 */
import * as net from 'node:net';
import * as tls from 'node:tls';
import { isIP } from '../util/ip-family.js';
import type { AppContext } from '../context.js';
import type { DirectorySource } from '../db/schema.js';
import { recordAudit } from '../audit/record.js';
import { classify, SourceConnection, SourceError } from './connection.js';
import { KIND_DEFAULTS } from './defaults.js';
import { entryKey, mapPerson, personAttributes, type MappedPerson } from './mapping.js';
import { bindPasswordOf } from './sources.js';
import { findEntry } from './sync.js';
import { updateSourceRow } from './queries.js';

export const TEST_TIMEOUT_MS = 5000;
const SAMPLE = 5;
/** Entries counted at most (a count past this says "at least"). */
const COUNT_LIMIT = 200_000;

type Step = { step: 'connect' | 'tls' | 'bind' | 'people' | 'groups' | 'lookup'; ok: boolean; error?: string };

const personView = (p: MappedPerson) => ({ key: p.key, dn: p.dn, username: p.username, email: p.email, name: p.name, givenName: p.givenName, familyName: p.familyName, disabled: p.disabledAtSource });

function endpointOf(source: DirectorySource) {
  const url = new URL(source.url);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = Number(url.port || (url.protocol === 'ldaps:' ? 636 : 389));
  return { host, port, secure: url.protocol === 'ldaps:' };
}

/** A TCP connection, closed at once (or the reason it failed). */
function probeTcp(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SourceError('connect', `${host}:${port} did not answer in ${TEST_TIMEOUT_MS / 1000} s.`));
    }, TEST_TIMEOUT_MS);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(classify(error, 'connect', host));
    });
  });
}

/** An ldaps:// TLS handshake with the source's trust settings, closed at once. */
function probeTls(source: DirectorySource, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({
      host, port, rejectUnauthorized: true, minVersion: 'TLSv1.2',
      ...(source.caCertificate ? { ca: [source.caCertificate] } : {}),
      ...(isIP(host) ? {} : { servername: host }),
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new SourceError('tls', `${host}:${port} did not finish the TLS handshake in ${TEST_TIMEOUT_MS / 1000} s.`));
    }, TEST_TIMEOUT_MS);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      socket.destroy();
      reject(classify(error, 'tls', host));
    });
  });
}

export async function testSource(ctx: AppContext, source: DirectorySource, username: string | undefined, actor: string) {
  const steps: Step[] = [];
  const result = { ok: false, steps, people: null as number | null, groups: null as number | null, sample: [] as { dn: string; person: ReturnType<typeof personView> | null; skipped: string | null }[], lookup: undefined as undefined | { found: boolean; person?: ReturnType<typeof personView> } };
  const { host, port, secure } = endpointOf(source);
  const attempt = async (step: Step['step'], fn: () => Promise<void>): Promise<boolean> => {
    try {
      await fn();
      steps.push({ step, ok: true });
      return true;
    } catch (error) {
      const e = error instanceof SourceError ? error : classify(error, step === 'people' || step === 'groups' || step === 'lookup' ? 'search' : step === 'tls' ? 'tls' : step === 'bind' ? 'bind' : 'connect', host);
      steps.push({ step, ok: false, error: e.message });
      return false;
    }
  };
  let connection: SourceConnection | undefined;
  try {
    if (!(await attempt('connect', () => probeTcp(host, port)))) return await finish(ctx, source, result, actor);
    if (secure || source.startTls) {
      const tlsOk = await attempt('tls', async () => {
        if (secure) await probeTls(source, host, port);
        connection = await SourceConnection.open(source, { timeoutMs: TEST_TIMEOUT_MS });
      });
      if (!tlsOk) return await finish(ctx, source, result, actor);
    } else {
      connection = await SourceConnection.open(source, { timeoutMs: TEST_TIMEOUT_MS });
    }
    const conn = connection!;
    const bound = await attempt('bind', async () => {
      if (!source.bindDn) return;
      if ((await conn.bind(source.bindDn, bindPasswordOf(ctx, source) ?? '')) === 'invalid') {
        throw new SourceError('bind', `The directory refused the service account ${source.bindDn}: check bindDn and bindPassword.`);
      }
    });
    if (!bound) return await finish(ctx, source, result, actor);
    const attrs = source.attributes;
    const changeAttribute = KIND_DEFAULTS[source.kind].changeAttribute;
    const peopleOk = await attempt('people', async () => {
      let n = 0;
      for await (const page of conn.search(source.peopleBase, source.peopleFilter, [...personAttributes(attrs, source.kind, changeAttribute)], { sizeLimit: COUNT_LIMIT })) {
        for (const entry of page) {
          n++;
          if (result.sample.length < SAMPLE) {
            const mapped = mapPerson(entry, attrs, source.kind, changeAttribute);
            result.sample.push(mapped.ok ? { dn: mapped.value.dn, person: personView(mapped.value), skipped: null } : { dn: mapped.dn, person: null, skipped: mapped.reason });
          }
        }
      }
      result.people = n;
    });
    if (!peopleOk) return await finish(ctx, source, result, actor);
    if (source.groupsBase) {
      const groupsOk = await attempt('groups', async () => {
        let n = 0;
        for await (const page of conn.search(source.groupsBase!, source.groupsFilter, [attrs.id])) n += page.filter((e) => entryKey(e, attrs.id)).length;
        result.groups = n;
      });
      if (!groupsOk) return await finish(ctx, source, result, actor);
    }
    if (username !== undefined) {
      const lookupOk = await attempt('lookup', async () => {
        const found = await findEntry(conn, source, username.trim());
        result.lookup = found?.mapped ? { found: true, person: personView(found.mapped) } : { found: false };
        if (found?.skipped) throw new SourceError('search', `${found.dn} was found, but would be skipped: ${found.skipped}.`);
      });
      if (!lookupOk) return await finish(ctx, source, result, actor);
    }
    result.ok = true;
    return await finish(ctx, source, result, actor);
  } finally {
    await connection?.close();
  }
}

async function finish<T extends { ok: boolean; steps: Step[] }>(ctx: AppContext, source: DirectorySource, result: T, actor: string): Promise<T> {
  const now = ctx.clock.now();
  const failed = result.steps.find((s) => !s.ok);
  const unreachable = failed && (failed.step === 'connect' || failed.step === 'tls');
  await updateSourceRow(ctx.db, source.id, { status: unreachable ? 'unreachable' : 'ok', ...(failed ? { lastError: failed.error ?? null } : {}) });
  await recordAudit(ctx.db, now, { actor, action: 'directory_source.tested', target: source.id, details: { ok: result.ok, ...(failed ? { failedStep: failed.step, error: failed.error } : {}) } });
  return result;
}
