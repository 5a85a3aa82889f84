// The floor the memory bench (bench/memory.ts) reports beside Gatehouse, measured in the same run:
// a bare Node process with the three libraries every Gatehouse request path rests on loaded and
// in use, and nothing else — Fastify listening on loopback with one route, better-sqlite3 with a
// WAL database file open and a prepared statement, jose with an RS256 key imported and one token
// signed and verified. Started as plain `node _memory-floor.mjs <data dir>` (no launch flags:
// what Node itself costs), it says `{type: 'ready', url}` over IPC.
import { createRequire } from 'node:module';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const Fastify = require('fastify');
const Database = require('better-sqlite3');
const jose = await import('jose');

const db = new Database(join(process.argv[2], 'floor.db'));
db.pragma('journal_mode = WAL');
db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
const count = db.prepare('SELECT count(*) AS n FROM t');

const { privateKey, publicKey } = await jose.generateKeyPair('RS256');
const token = await new jose.SignJWT({ sub: 'floor' }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
await jose.jwtVerify(token, publicKey);

const app = Fastify();
app.get('/', async () => {
  insert.run('x');
  return { rows: count.get().n };
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
process.send?.({ type: 'ready', url });
process.on('disconnect', () => process.exit(0));
