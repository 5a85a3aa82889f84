// Benchmark receiver for bench/logout-fanout.ts, in its own process so it does not share the
// server's or the load generator's event loop: answers every back-channel logout POST with 200
// and counts the logout tokens it got. The parent asks for the count over IPC.
import { createServer } from 'node:http';

let received = 0;
const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (new URLSearchParams(Buffer.concat(chunks).toString('utf8')).get('logout_token')) received++;
    res.writeHead(200);
    res.end();
  });
});

server.listen(0, '127.0.0.1', () => process.send?.({ type: 'ready', port: server.address().port }));
process.on('message', (msg) => {
  if (msg === 'stats') process.send?.({ type: 'stats', received });
});
process.on('disconnect', () => process.exit(0));
