/**
 * Debian's Apache httpd started for one test file: its own configuration in a temporary directory
 * (never the system's), one process in the foreground (`-X`) on 127.0.0.1, stopped by the pid
 * started. Used by the interop tests of modules that put a site behind Gatehouse.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';

const MODULES = '/usr/lib/apache2/modules';

export interface Apache {
  errorLog(): string;
  /**
   * The access log once it holds `line`, or as it is after 5 s. Apache writes a request's line in
   * its logging phase, after the response has gone out, so a client can read the log first.
   */
  accessLogWith(line: string): Promise<string>;
  stop(): Promise<void>;
}

/** Starts Apache with `modules` loaded and `directives` after the server-wide settings; access log lines are "%u %r %>s". */
export async function startApache(dir: string, port: number, modules: string[], directives: string[]): Promise<Apache> {
  // Apache serves as www-data: it must be able to enter the (mkdtemp, 0700) directory.
  chmodSync(dir, 0o755);
  mkdirSync(join(dir, 'htdocs'), { recursive: true });
  writeFileSync(join(dir, 'htdocs', 'index.html'), 'the protected page\n');
  const conf = join(dir, 'httpd.conf');
  writeFileSync(conf, [
    `ServerRoot "${dir}"`,
    `Listen 127.0.0.1:${port}`,
    'ServerName localhost',
    `PidFile "${dir}/httpd.pid"`,
    `ErrorLog "${dir}/error.log"`,
    `LogLevel ${process.env.APACHE_LOG_LEVEL ?? 'warn'}`,
    `DefaultRuntimeDir "${dir}"`,
    `Mutex file:${dir} default`,
    'User www-data',
    'Group www-data',
    ...['mpm_event', 'authn_core', 'authz_core', 'authz_user', 'mime', 'dir', ...modules].map((m) => `LoadModule ${m}_module ${MODULES}/mod_${m}.so`),
    'TypesConfig /etc/mime.types',
    'DirectoryIndex index.html',
    'LogFormat "%u %r %>s" who',
    `CustomLog "${dir}/access.log" who`,
    `DocumentRoot "${dir}/htdocs"`,
    `<Directory "${dir}/htdocs">`,
    '  AllowOverride None',
    '  Require all granted',
    '</Directory>',
    ...directives,
    '',
  ].join('\n'));
  const child: ChildProcess = spawn('apache2', ['-X', '-f', conf], { stdio: 'ignore', env: { PATH: process.env.PATH ?? '' } });
  for (let i = 0; i < 100 && !existsSync(join(dir, 'httpd.pid')) && child.exitCode === null; i++) await new Promise((r) => setTimeout(r, 100));
  const read = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8') : '');
  expect(existsSync(join(dir, 'httpd.pid')), `apache started: ${read('error.log')}`).toBe(true);
  return {
    errorLog: () => read('error.log'),
    async accessLogWith(line) {
      for (const deadline = Date.now() + 5_000; !read('access.log').includes(line) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 20));
      return read('access.log');
    },
    async stop() {
      if (child.pid && child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(child.pid, 'SIGTERM');
        await exited;
      }
    },
  };
}
