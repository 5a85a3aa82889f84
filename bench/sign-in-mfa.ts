/**
 * Sign-in with a second factor (issue 23): password + TOTP sign-ins against password-only ones on
 * the same server, and what verifying a passkey assertion costs.
 *
 * - Password only: `POST /api/auth/sign-in/email` for accounts without a second factor.
 * - Password + TOTP: the same request for accounts with an authenticator app, answered with
 *   `{secondFactor}` and the `gatehouse_mfa` cookie, then `POST /api/auth/second-factor/totp` with
 *   the code (computed with otpauth here). A code is good once per 30-second step per person, so
 *   each account signs in at most once per step of the ±1 window and many accounts are enrolled.
 *   One sign-in = both requests; its latency is theirs together.
 *   Both loads come from the same client (CONNECTIONS workers with fetch) for the same time, so
 *   the comparison is fair; argon2id dominates either way.
 *   Target: password + TOTP sign-ins/s ≥ 90 % of password-only, and p99 ≤ 110 % of password-only.
 * - Passkey assertion verification: @simplewebauthn/server's check of an ES256 assertion through
 *   our `verifyAssertion` (the server's code, in this process, on the stored form of a passkey
 *   registered through the server's own `verifyRegistration`), main-thread CPU per verification
 *   from /proc (the signature check itself runs on libuv's pool). Target ≤ 2 ms. Passkey-first
 *   sign-ins over HTTP (options + answer) are measured too: the server's main-thread CPU per
 *   sign-in is reported.
 */
import { Secret, TOTP } from 'otpauth';
import type { BenchResult, Scenario } from './run.js';
import { BENCH_PASSWORD, cpuPerOp, cpuSample, createApplication, loadAverage, percentile, signUp, startBenchServer, type BenchServer } from './_server.js';
import { SoftAuthenticator } from '../test/helpers/soft-authenticator.js';
import { freePort } from '../test/helpers/free-port.js';
import { testConfig } from '../server/config.js';
import { verifyAssertion, verifyRegistration, registrationOptions } from '../server/accounts/second-factor/webauthn.js';
import type { Passkey, Person } from '../server/db/schema.js';

const CONNECTIONS = 4;
/** Each load runs ROUNDS × SECONDS, in alternating rounds, so a change in the machine's other load hits both alike. */
const ROUNDS = 3;
const SECONDS = 2;
const PASSWORD_ACCOUNTS = 8;
const TOTP_ACCOUNTS = 320;
const PASSKEY_VERIFICATIONS = 1_000;
const PASSKEY_SIGN_INS = 200;
const APP = 'mfa-bench';
const STEP_MS = 30_000;

const json = (cookie?: string) => ({ 'content-type': 'application/json', ...(cookie ? { cookie } : {}) });
const totpOf = (secret: string) => new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 });

async function post(server: BenchServer, path: string, body: unknown, cookie?: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method: 'POST', headers: json(cookie), body: JSON.stringify(body) });
}

interface TotpAccount {
  email: string;
  totp: TOTP;
  lastStep: number;
}

async function enrolTotp(server: BenchServer, email: string): Promise<TotpAccount> {
  const cookie = await signUp(server, email, APP);
  const { secret } = (await (await post(server, '/api/me/totp', {}, cookie)).json()) as { secret: string };
  const totp = totpOf(secret);
  // Confirmed with the previous step's code, so this step and the next are left for sign-ins.
  const step = Math.floor(Date.now() / STEP_MS) - 1;
  const res = await post(server, '/api/me/totp/confirm', { code: totp.generate({ timestamp: step * STEP_MS }) }, cookie);
  if (res.status !== 200) throw new Error(`enrolling ${email}: HTTP ${res.status} ${await res.text()}`);
  return { email, totp, lastStep: step };
}

interface Load {
  latencies: number[];
  failed: number;
  seconds: number;
}

/** CONNECTIONS workers repeat `one` for SECONDS, adding every latency (ms) and failure to `into`. */
async function load(one: () => Promise<boolean | undefined>, into: Load): Promise<void> {
  const { latencies } = into;
  let failed = 0;
  const until = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        const ok = await one();
        if (ok === undefined) return; // nothing left to sign in with
        if (ok) latencies.push(performance.now() - t0);
        else failed++;
      }
    }),
  );
  into.failed += failed;
  into.seconds += (performance.now() - started) / 1000;
}

function mainThreadMs(): number {
  return cpuSample(process.pid)?.mainMs ?? Number.NaN;
}

/** Main-thread CPU per verification of one passkey's assertions, in this process, through the server's code. */
async function passkeyVerificationCpu(): Promise<number> {
  const issuer = 'http://localhost:8787';
  const config = testConfig({ issuer });
  const person = { id: 'usr_bench', email: 'passkey@example.com', name: 'Bench' } as Person;
  const authenticator = new SoftAuthenticator(issuer, 'localhost');
  const options = await registrationOptions(config, person, []);
  const stored = await verifyRegistration(config, person.id, 'bench', authenticator.register(options), options.challenge);
  const passkey: Passkey = { ...stored, id: 'pky_bench', createdAt: new Date(), lastUsedAt: null };
  const userHandle = Buffer.from(person.id).toString('base64url');
  const answers = Array.from({ length: PASSKEY_VERIFICATIONS + 50 }, (_, i) => {
    const challenge = Buffer.from(`challenge-${i}-0123456789abcdef`).toString('base64url');
    return { challenge, response: authenticator.assert(challenge, userHandle) };
  });
  for (const a of answers.slice(0, 50)) {
    passkey.counter = (await verifyAssertion(config, passkey, a.response, a.challenge)).counter; // warm-up
  }
  const before = mainThreadMs();
  for (const a of answers.slice(50)) {
    passkey.counter = (await verifyAssertion(config, passkey, a.response, a.challenge)).counter;
  }
  return (mainThreadMs() - before) / PASSKEY_VERIFICATIONS;
}

async function run(): Promise<BenchResult[]> {
  const port = await freePort();
  const server = await startBenchServer(
    'sign-in-mfa',
    { GATEHOUSE_SIGN_IN_RATE_LIMIT: '1000000', GATEHOUSE_SIGN_UP_RATE_LIMIT: '1000000', GATEHOUSE_ISSUER: `http://localhost:${port}` },
    port,
  );
  try {
    await createApplication(server, APP);
    const plain = Array.from({ length: PASSWORD_ACCOUNTS }, (_, i) => `plain${i}@example.com`);
    for (const email of plain) await signUp(server, email, APP);
    const accounts: TotpAccount[] = [];
    for (let i = 0; i < TOTP_ACCOUNTS; i += 8) {
      accounts.push(...(await Promise.all(Array.from({ length: 8 }, (_, j) => enrolTotp(server, `totp${i + j}@example.com`)))));
    }

    let next = 0;
    const passwordOnly = async () => {
      const res = await post(server, '/api/auth/sign-in/email', { email: plain[next++ % plain.length], password: BENCH_PASSWORD, applicationId: APP });
      await res.arrayBuffer();
      return res.status === 200;
    };
    let cursor = 0;
    /** The next account with a step of the window not used yet, and that step. */
    const nextAccount = (): { account: TotpAccount; step: number } | undefined => {
      for (let tries = 0; tries < accounts.length; tries++) {
        const account = accounts[cursor++ % accounts.length]!;
        const now = Math.floor(Date.now() / STEP_MS);
        const step = Math.max(account.lastStep + 1, now - 1);
        if (step <= now + 1) {
          account.lastStep = step;
          return { account, step };
        }
      }
      return undefined;
    };
    const withTotp = async () => {
      const picked = nextAccount();
      if (!picked) return undefined;
      const first = await post(server, '/api/auth/sign-in/email', { email: picked.account.email, password: BENCH_PASSWORD, applicationId: APP });
      const cookie = first.headers.getSetCookie().find((c) => c.startsWith('gatehouse_mfa='))?.split(';')[0];
      await first.arrayBuffer();
      if (first.status !== 200 || !cookie) return false;
      const second = await post(server, '/api/auth/second-factor/totp', { code: picked.account.totp.generate({ timestamp: picked.step * STEP_MS }) }, cookie);
      await second.arrayBuffer();
      return second.status === 200;
    };

    for (let i = 0; i < 8; i++) await passwordOnly(); // warm-up
    const base: Load = { latencies: [], failed: 0, seconds: 0 };
    const mfa: Load = { latencies: [], failed: 0, seconds: 0 };
    let baseCpuMs = { totalMs: 0, mainMs: 0 };
    let mfaCpuMs = { totalMs: 0, mainMs: 0 };
    const addCpu = (sum: typeof baseCpuMs, from: ReturnType<BenchServer['cpu']>, to: ReturnType<BenchServer['cpu']>) => {
      const used = cpuPerOp(from, to, 1);
      return used ? { totalMs: sum.totalMs + used.totalMs, mainMs: sum.mainMs + used.mainMs } : sum;
    };
    for (let round = 0; round < ROUNDS; round++) {
      const cpu0 = server.cpu();
      await load(passwordOnly, base);
      const cpu1 = server.cpu();
      await load(withTotp, mfa);
      const cpu2 = server.cpu();
      baseCpuMs = addCpu(baseCpuMs, cpu0, cpu1);
      mfaCpuMs = addCpu(mfaCpuMs, cpu1, cpu2);
    }
    base.latencies.sort((a, b) => a - b);
    mfa.latencies.sort((a, b) => a - b);
    const baseRate = base.latencies.length / base.seconds;
    const mfaRate = mfa.latencies.length / mfa.seconds;
    const baseP99 = percentile(base.latencies, 99);
    const mfaP99 = percentile(mfa.latencies, 99);
    const perOp = (sum: typeof baseCpuMs, ops: number) => (sum.totalMs > 0 && ops > 0 ? { totalMs: sum.totalMs / ops, mainMs: sum.mainMs / ops } : undefined);
    const baseCpu = perOp(baseCpuMs, base.latencies.length);
    const mfaCpu = perOp(mfaCpuMs, mfa.latencies.length);

    // Passkey-first sign-ins over HTTP, sequential: the server's main-thread CPU per sign-in.
    const cookie = await signUp(server, 'passkey@example.com', APP);
    const authenticator = new SoftAuthenticator(server.url, 'localhost');
    const creation = (await (await post(server, '/api/me/passkeys/options', {}, cookie)).json()) as { challenge: string; user: { id: string } };
    const registered = await post(server, '/api/me/passkeys', { name: 'bench', response: authenticator.register(creation) }, cookie);
    if (registered.status !== 201) throw new Error(`registering the passkey: HTTP ${registered.status} ${await registered.text()}`);
    let passkeyFailures = 0;
    const passkeySignIn = async () => {
      const options = (await (await post(server, '/api/auth/passkey/options', {})).json()) as { challenge: string };
      const res = await post(server, '/api/auth/passkey', { response: authenticator.assert(options.challenge, creation.user.id), applicationId: APP });
      await res.arrayBuffer();
      if (res.status !== 200) passkeyFailures++;
    };
    for (let i = 0; i < 20; i++) await passkeySignIn();
    const cpu3 = server.cpu();
    for (let i = 0; i < PASSKEY_SIGN_INS; i++) await passkeySignIn();
    const passkeyHttp = cpuPerOp(cpu3, server.cpu(), PASSKEY_SIGN_INS);
    const verifyMs = await passkeyVerificationCpu();

    const ratio = mfaRate / baseRate;
    const p99Ratio = mfaP99 / baseP99;
    return [
      {
        scenario: 'password sign-in, reference for MFA',
        throughput: baseRate,
        p50Ms: percentile(base.latencies, 50),
        p99Ms: baseP99,
        ...(baseCpu ? { cpuSecondsPer1k: baseCpu.totalMs } : {}),
        measured: `${base.latencies.length} sign-ins${base.failed ? `, ${base.failed} failed` : ''}`,
        extra: { connections: CONNECTIONS, 'main-thread ms/op': baseCpu ? Number(baseCpu.mainMs.toFixed(3)) : 'n/a', 'load avg': loadAverage() },
        target: 'reference',
        met: base.failed === 0,
      },
      {
        scenario: 'password + TOTP sign-in',
        throughput: mfaRate,
        p50Ms: percentile(mfa.latencies, 50),
        p99Ms: mfaP99,
        ...(mfaCpu ? { cpuSecondsPer1k: mfaCpu.totalMs } : {}),
        measured: `${(ratio * 100).toFixed(0)} % of password-only rate, p99 ${(p99Ratio * 100).toFixed(0)} %${mfa.failed ? `, ${mfa.failed} failed` : ''}`,
        extra: {
          'sign-ins': mfa.latencies.length,
          'failed sign-ins': mfa.failed,
          'accounts with TOTP': TOTP_ACCOUNTS,
          'main-thread ms/op': mfaCpu ? Number(mfaCpu.mainMs.toFixed(3)) : 'n/a',
          'load avg': loadAverage(),
        },
        target: '≥ 90 % of password-only sign-ins/s, p99 ≤ 110 %',
        met: mfa.failed === 0 && ratio >= 0.9 && p99Ratio <= 1.1,
      },
      {
        scenario: 'passkey assertion verification',
        throughput: 0,
        p50Ms: 0,
        p99Ms: 0,
        measured: `${verifyMs.toFixed(2)} ms main-thread CPU per verification`,
        extra: {
          verifications: PASSKEY_VERIFICATIONS,
          'passkey-first sign-in over HTTP, server main-thread ms/op': passkeyHttp ? Number(passkeyHttp.mainMs.toFixed(3)) : 'n/a',
          'passkey-first sign-in over HTTP, server CPU ms/op': passkeyHttp ? Number(passkeyHttp.totalMs.toFixed(3)) : 'n/a',
          'passkey sign-ins failed': passkeyFailures,
          'load avg': loadAverage(),
        },
        target: '≤ 2 ms main-thread CPU',
        met: passkeyFailures === 0 && verifyMs <= 2,
      },
    ];
  } finally {
    await server.stop();
  }
}

export const scenario: Scenario = {
  name: 'sign-in-mfa',
  description: `password + TOTP sign-ins against password-only over ${CONNECTIONS} workers, and passkey assertion verification CPU`,
  run,
};
