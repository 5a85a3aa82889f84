/** `gatehouse serve`: run the server in the foreground until SIGINT/SIGTERM. */
import { ConfigError, loadConfig } from '../config.js';
import { readyLine, start } from '../main.js';
import { dataDirHelp, dataDirOption, type Command } from './command.js';
import { serveBenchMetrics } from './bench-metrics.js';
import { deprioritiseThreadPool } from './thread-priority.js';
import { RECLAIM_POLICY, startIdleReclaim } from '../ops/idle-memory.js';
import { COMPILED_IDLE_MS, dropCompiledUnusedFor } from '../http/lazy-compile.js';

export const serveCommand: Command = {
  options: {
    ...dataDirOption,
    port: { type: 'string' },
    host: { type: 'string' },
    issuer: { type: 'string' },
    // Declared so that it is refused with a reason, not as an unknown option.
    'admin-token': { type: 'string' },
    'admin-token-file': { type: 'string' },
    'access-token-ttl': { type: 'string' },
    pretty: { type: 'boolean' },
    tls: { type: 'string' },
    ldap: { type: 'boolean' },
    radius: { type: 'boolean' },
  },
  help: [
    dataDirHelp,
    ['--port N', 'listen port, 0 picks a free one (PORT, default 8787)'],
    ['--host ADDR', 'listen address, 0.0.0.0 for the LAN (HOST, default 127.0.0.1)'],
    ['--issuer URL', 'public base URL and token issuer (GATEHOUSE_ISSUER)'],
    ['--admin-token-file FILE', 'file holding the admin bearer token (ADMIN_TOKEN_FILE, or the token itself in ADMIN_TOKEN; generated into <data>/admin-token when neither is set)'],
    ['--access-token-ttl S', 'access-token lifetime in seconds (GATEHOUSE_ACCESS_TOKEN_TTL, default 900)'],
    ['--pretty', 'human-readable logs instead of JSON lines'],
    ['--tls MODE', 'auto: HTTPS with a local CA in <data>/tls/ (GATEHOUSE_TLS; own files via GATEHOUSE_TLS_CERT/KEY)'],
    ['--ldap', 'also serve the read-only LDAP directory (GATEHOUSE_LDAP=on; port GATEHOUSE_LDAP_PORT, default 3890)'],
    ['--radius', 'also serve RADIUS for Wi-Fi, VPN and network gear (GATEHOUSE_RADIUS=on; UDP GATEHOUSE_RADIUS_PORT 1812, GATEHOUSE_RADIUS_ACCT_PORT 1813)'],
  ],
  async run(values) {
    if (values['admin-token'] !== undefined) {
      // Every user of the machine can read a process's arguments (ps, /proc/<pid>/cmdline).
      throw new ConfigError('--admin-token would show the token to every user of this machine (ps); use --admin-token-file FILE or the ADMIN_TOKEN environment variable.');
    }
    const config = loadConfig(process.env, {
      dataDir: values['data-dir'] as string | undefined,
      port: values.port as string | undefined,
      host: values.host as string | undefined,
      issuer: values.issuer as string | undefined,
      adminTokenFile: values['admin-token-file'] as string | undefined,
      accessTokenTtl: values['access-token-ttl'] as string | undefined,
      pretty: values.pretty as boolean | undefined,
      tls: values.tls as string | undefined,
      ldap: values.ldap as boolean | undefined,
      radius: values.radius as boolean | undefined,
    });
    const running = await start(config);
    await deprioritiseThreadPool();
    console.log(readyLine(running));
    const ready = { type: 'ready', url: running.url, issuer: running.config.issuer };
    process.send?.(ready);
    const reclaim = config.idleReclaim ? startIdleReclaim(running.app.log, RECLAIM_POLICY, dropCompiledUnusedFor(COMPILED_IDLE_MS)) : undefined;
    serveBenchMetrics(process.env, reclaim, running.app.ctx.metrics);
    // Under Electron's utilityProcess (packaged desktop app) the channel is process.parentPort.
    (process as { parentPort?: { postMessage(message: unknown): void } }).parentPort?.postMessage(ready);
    const shutdown = () => {
      // In-flight requests get a few seconds to finish; a stop that hangs or fails still exits.
      setTimeout(() => process.exit(1), 10_000).unref();
      reclaim?.stop();
      running.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(`gatehouse: stopping failed: ${(error as Error)?.message ?? String(error)}`);
          process.exit(1);
        },
      );
    };
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
    process.once('disconnect', shutdown); // the Electron supervisor went away
    return new Promise<never>(() => {});
  },
};
