// The floor the refresh grant is compared with (issue 27, bench/refresh.ts): the same work with
// nothing else — node:http, the form parsed by URLSearchParams, the client and the presented
// token read and the rotation written with prepared better-sqlite3 statements on the bench
// server's own database (same schema, same WAL mode), and one RS256 signature on libuv's pool
// with the server's key, answered with the same JSON fields and headers. No framework, no rate
// limit, no hooks, no logging, no second factor, no activity counters. What Gatehouse spends
// above this is what its structure costs; what this spends is the work itself.
//
// Run by bench/refresh.ts as `node <launch flags> _lean-refresh.mjs <data dir> <issuer>`; says
// `{type: 'ready', url}` over IPC.
import { createHash, createPrivateKey, randomFillSync, sign } from 'node:crypto';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const Database = require('better-sqlite3');

const [dataDir, issuer] = process.argv.slice(2);
const db = new Database(`${dataDir}/gatehouse.db`);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('busy_timeout = 5000');

const signing = db
  .prepare("SELECT kid, private_key_pem AS pem FROM signing_keys WHERE alg = 'RS256' AND (retired_at IS NULL OR retired_at > ?) ORDER BY created_at, kid LIMIT 1")
  .get(Date.now());
const key = createPrivateKey(signing.pem);
const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'at+jwt', kid: signing.kid })).toString('base64url');

const client = db.prepare('SELECT id, client_type AS clientType, grant_types AS grantTypes, audience FROM applications WHERE id = ?');
const presented = db.prepare(`
  SELECT t.rotated_at AS rotatedAt, t.expires_at AS expiresAt, f.id AS familyId, f.application_id AS applicationId,
         f.person_id AS personId, f.session_id AS sessionId, f.scope, f.resource, f.revoked_at AS revokedAt,
         m.id AS memberId, m.status AS memberStatus, m.role AS memberRole
  FROM refresh_tokens t JOIN refresh_token_families f ON f.id = t.family_id LEFT JOIN memberships m ON m.id = f.membership_id
  WHERE t.token_hash = ?`);
const markRotated = db.prepare('UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ? AND rotated_at IS NULL');
const insert = db.prepare('INSERT INTO refresh_tokens (token_hash, family_id, created_at, expires_at) VALUES (?, ?, ?, ?)');
const rotate = db.transaction((hash, successorHash, familyId, now, expiresAt) => {
  if (markRotated.run(now, hash).changes !== 1) return false;
  insert.run(successorHash, familyId, now, expiresAt);
  return true;
});

const pool = Buffer.alloc(4096);
let offset = pool.length;
function random(bytes) {
  if (offset + bytes > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const text = pool.toString('base64url', offset, offset + bytes);
  offset += bytes;
  return text;
}
const sha256 = (value) => createHash('sha256').update(value).digest('hex');

const HEADERS = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  pragma: 'no-cache',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'access-control-allow-origin': '*',
};

function answer(response, status, body) {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, { ...HEADERS, 'content-length': bytes.length });
  response.end(bytes);
}

function grant(form) {
  const app = form.get('grant_type') === 'refresh_token' ? client.get(form.get('client_id') ?? '') : undefined;
  const token = form.get('refresh_token');
  if (!app || app.clientType === 'web' || !token) return undefined;
  const hash = sha256(token);
  const row = presented.get(hash);
  const now = Date.now();
  if (!row || row.applicationId !== app.id || row.revokedAt !== null || row.rotatedAt !== null || row.expiresAt <= now) return undefined;
  if (row.memberStatus !== 'active' || row.resource !== app.audience) return undefined;
  const successor = `ghr_${random(32)}`;
  if (!rotate(hash, sha256(successor), row.familyId, now, row.expiresAt)) return undefined;
  const iat = Math.floor(now / 1000);
  const payload = {
    iss: issuer, sub: row.personId, aud: row.resource, azp: app.id, client_id: app.id, iat, exp: iat + 900,
    jti: `${row.familyId}.${random(12)}`, scope: row.scope, app_user: { id: row.memberId, status: row.memberStatus, role: row.memberRole },
  };
  if (row.sessionId) payload.sid = row.sessionId;
  return { input: `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`, scope: row.scope, successor };
}

const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/api/auth/oauth2/token') return answer(response, 404, { error: 'not_found' });
  let text = '';
  request.setEncoding('utf8');
  request.on('data', (chunk) => (text += chunk));
  request.on('end', () => {
    const issued = grant(new URLSearchParams(text));
    if (!issued) return answer(response, 400, { error: 'invalid_grant', error_description: 'The refresh token is not valid.' });
    sign('sha256', Buffer.from(issued.input), key, (error, signature) => {
      if (error) return answer(response, 500, { error: 'server_error' });
      answer(response, 200, {
        access_token: `${issued.input}.${signature.toString('base64url')}`, token_type: 'Bearer', expires_in: 900, scope: issued.scope,
        refresh_token: issued.successor,
      });
    });
  });
});

server.listen(0, '127.0.0.1', () => process.send?.({ type: 'ready', url: `http://127.0.0.1:${server.address().port}` }));
process.on('SIGTERM', () => server.close(() => {
  db.close();
  process.exit(0);
}));
