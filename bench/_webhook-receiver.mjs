// Benchmark receiver for bench/webhooks.ts, run in its own process so it does not share the
// server's event loop: verifies every Standard Webhooks signature with the key given in
// WEBHOOK_KEY_BASE64 and answers 204. The parent asks for counts over IPC.
import { createServer } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';

const key = Buffer.from(process.env.WEBHOOK_KEY_BASE64 ?? '', 'base64');
let verified = 0;
let rejected = 0;

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const expected = Buffer.from(
      createHmac('sha256', key).update(`${req.headers['webhook-id']}.${req.headers['webhook-timestamp']}.${body}`).digest('base64'),
    );
    const ok = String(req.headers['webhook-signature'] ?? '')
      .split(' ')
      .some((entry) => {
        const sig = Buffer.from(entry.slice(3));
        return entry.startsWith('v1,') && sig.length === expected.length && timingSafeEqual(sig, expected);
      });
    if (ok) verified++;
    else rejected++;
    res.writeHead(204);
    res.end();
  });
});

server.listen(0, '127.0.0.1', () => process.send?.({ type: 'ready', port: server.address().port }));
process.on('message', (msg) => {
  if (msg === 'stats') process.send?.({ type: 'stats', verified, rejected });
  if (msg === 'stop') server.close(() => process.exit(0));
});
// Never outlive the benchmark (an orphan would keep its output pipe open).
process.on('disconnect', () => process.exit(0));
