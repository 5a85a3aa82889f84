/**
 * The documentation stays true (issue 39): every relative link resolves (files and #anchors),
 * every `npm run …` a page names exists, docs/configuration.md lists exactly the environment
 * variables the code reads with the code's defaults, every page says what it is for, and the
 * README stays at most 12 KB, docs/architecture.md names every server folder, and every decision record has its fields and is in the generated index.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULTS, RETENTION_ENV, loadConfig, TSIG_ALGORITHMS } from '../../server/config.js';
import { DEFAULT_SETTINGS, RETRY_SCHEDULE_MS } from '../../server/webhooks/settings.js';
import { postgresOptions } from '../../server/db/postgres-options.js';
import { DEFAULT_ACTIVATION_HOURS } from '../../server/saml/keys.js';
import { threadPoolSize } from '../../server/cli/thread-priority.js';
import { providerName } from '../../server/applications/providers.js';
// @ts-expect-error -- a plain ES module script, no declarations
import { decisionsIndex } from '../../scripts/decisions-index.mjs';
import packageJson from '../../package.json' with { type: 'json' };
import {
  ROOT, anchorsOf, sourceFiles, environmentReads, inlineDefault, linksOf, markdownPages, npmRunsOf, read, settingRows,
} from '../helpers/docs-source.js';

const pages = markdownPages();

describe('links', () => {
  it('every relative link names a file that exists, and an anchor that its page has', () => {
    const broken: string[] = [];
    for (const page of pages) {
      for (const { target, line } of linksOf(read(page))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, …
        const [path, anchor] = target.split('#') as [string, string | undefined];
        const file = path === '' ? page : normalize(join(dirname(page), decodeURIComponent(path)));
        if (!existsSync(join(ROOT, file))) {
          broken.push(`${page}:${line}: ${target} (no file ${file})`);
          continue;
        }
        if (anchor === undefined || statSync(join(ROOT, file)).isDirectory() || !file.endsWith('.md')) continue;
        if (!anchorsOf(read(file)).has(anchor)) broken.push(`${page}:${line}: ${target} (no heading #${anchor} in ${file})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('every code block is closed: fences come in pairs (an odd one turns the rest of the page into code)', () => {
    const odd = pages.filter((page) => read(page).split('\n').filter((line) => /^\s*(```|~~~)/.test(line)).length % 2 !== 0);
    expect(odd).toEqual([]);
  });

  it('every `npm run` script a page names is in package.json', () => {
    const scripts = Object.keys(packageJson.scripts);
    const unknown = pages.flatMap((page) => npmRunsOf(read(page)).filter((s) => !scripts.includes(s)).map((s) => `${page}: npm run ${s}`));
    expect(unknown).toEqual([]);
  });

  it('every page opens with its title and then a line saying what it is for', () => {
    const bad = pages.filter((page) => !RECORD.test(page)).filter((page) => {
      const lines = read(page).split('\n');
      return !/^# \S/.test(lines[0] ?? '') || lines[1] !== '' || !/^\S.{20,}$/.test(lines[2] ?? '');
    });
    expect(bad).toEqual([]);
  });

  it('every page is listed: in docs/README.md, or in the README.md of its folder', () => {
    const linkedFrom = (index: string) =>
      new Set(linksOf(read(index)).map(({ target }) => normalize(join(dirname(index), target.split('#')[0]!))));
    const top = linkedFrom('docs/README.md');
    const unlisted = pages
      .filter((page) => page.startsWith('docs/') && !page.endsWith('/README.md') && !RECORD.test(page))
      .filter((page) => {
        const folderIndex = join(dirname(page), 'README.md');
        return !top.has(page) && !(existsSync(join(ROOT, folderIndex)) && linkedFrom(folderIndex).has(page));
      });
    expect(unlisted).toEqual([]);
  });

  it('docs/architecture.md names every folder of server/', () => {
    const text = read('docs/architecture.md');
    const folders = readdirSync(join(ROOT, 'server'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `server/${e.name}/`);
    expect(folders.filter((folder) => !text.includes(folder))).toEqual([]);
  });

  it('every docs/… page the code, tests and scripts cite exists (comments included)', () => {
    // The coverage script reads the old pages from git on purpose; NNNN-subject.md is a pattern.
    const skip = /^scripts\/docs-coverage\./;
    const cited = sourceFiles()
      .filter((file) => !skip.test(file))
      .flatMap((file) => [...read(file).matchAll(/\bdocs\/[\w./-]+?\.md\b/g)].map((m) => ({ file, path: m[0] })))
      .filter(({ path }) => !path.includes('NNNN') && !existsSync(join(ROOT, path)));
    expect(cited.map(({ file, path }) => `${file}: ${path}`)).toEqual([]);
  });

  it('the README stays the front door: at most 12 KB', () => {
    expect(Buffer.byteLength(read('README.md'))).toBeLessThanOrEqual(12 * 1024);
  });
});

describe('the tree', () => {
  // Parallel branches are merged often; a conflict left in a file once reached main (docs/architecture.md).
  it('holds no conflict markers a merge left', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    const marked = files.filter((file) => {
      if (!existsSync(join(ROOT, file)) || statSync(join(ROOT, file)).size > 2_000_000) return false;
      return /^(<{7}|>{7}) |^={7}$/m.test(read(file));
    });
    expect(files.length).toBeGreaterThan(500);
    expect(marked).toEqual([]);
  });
});

const RECORD = /^docs\/decisions\/\d{4}-[a-z0-9-]+\.md$/;

describe('decision records', () => {
  const records = pages.filter((page) => RECORD.test(page));

  it('each has a title, a subject, a status and its three sections', () => {
    const numbers = records.map((page) => page.slice('docs/decisions/'.length, 'docs/decisions/'.length + 4));
    const bad = records.filter((page) => {
      const text = read(page);
      const status = /^status: (.+)$/m.exec(text)?.[1];
      const successor = /^superseded by (\d{4})$/.exec(status ?? '')?.[1];
      return (
        !/^# \S/.test(text) ||
        !/^subject: \S/m.test(text) ||
        !(status === 'accepted' || (successor !== undefined && numbers.includes(successor))) ||
        !['## Context', '## Decision', '## Consequences'].every((heading) => text.includes(`\n${heading}\n`))
      );
    });
    expect(records.length).toBeGreaterThan(0);
    expect(bad).toEqual([]);
    expect(numbers.filter((n, i) => numbers.indexOf(n) !== i)).toEqual([]);
  });

  it('the index is the one scripts/decisions-index.mjs generates', () => {
    expect(read('docs/decisions/README.md')).toBe(decisionsIndex());
  });
});

describe('docs/configuration.md', () => {
  const rows = settingRows(read('docs/configuration.md'));
  const reads = environmentReads();

  it('lists every environment variable the code reads', () => {
    const documented = new Set(rows.map((row) => row.name));
    const missing = [...reads].filter(([name]) => !documented.has(name)).map(([name, file]) => `${name} (read in ${file})`);
    expect(missing).toEqual([]);
  });

  it('lists no variable the code does not read, and each once', () => {
    expect(rows.map((row) => row.name).filter((name) => !reads.has(name))).toEqual([]);
    const names = rows.map((row) => row.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });

  it('names no stale variable anywhere in the docs', () => {
    const stale = pages.flatMap((page) =>
      [...read(page).matchAll(/\b(GATEHOUSE_[A-Z0-9_]*[A-Z0-9])\b/g)]
        .map((m) => m[1]!)
        .filter((name) => !reads.has(name) && !name.startsWith('GATEHOUSE_TEST_') && !name.startsWith('GATEHOUSE_BENCH_'))
        .map((name) => `${page}: ${name}`),
    );
    expect([...new Set(stale)]).toEqual([]);
  });

  it('gives the defaults the code has', () => {
    const config = loadConfig({});
    const pg = postgresOptions({ GATEHOUSE_DATABASE_URL: 'postgres://localhost/x' })!;
    const onOff = (value: boolean) => (value ? '1' : '0');
    // Defaults decided in one object of the code; the others are found where the variable is read.
    const known: Record<string, unknown> = {
      GATEHOUSE_DATA_DIR: DEFAULTS.dataDir,
      PORT: config.port,
      HOST: config.host,
      GATEHOUSE_ACCESS_TOKEN_TTL: config.accessTokenTtl,
      GATEHOUSE_LOCALE: config.locale,
      SMTP_FROM: config.smtpFrom,
      GATEHOUSE_TLS: config.tls.mode,
      GATEHOUSE_IDLE_RECLAIM: onOff(config.idleReclaim),
      GATEHOUSE_LOW_MEMORY: onOff(config.lowMemory),
      GATEHOUSE_WEBHOOK_ALLOW_LOOPBACK: onOff(config.webhookAllowLoopback),
      GATEHOUSE_LDAP_ALLOW_PLAIN: onOff(config.ldap.allowPlain),
      GATEHOUSE_BACKUP_INTERVAL: config.backupInterval,
      GATEHOUSE_KEY_ROTATION_DAYS: config.keyRotationDays,
      GATEHOUSE_SWEEP_INTERVAL: config.sweepInterval,
      GATEHOUSE_METRICS_ALLOW: config.metrics.allow.join(','),
      ...Object.fromEntries(Object.entries(RETENTION_ENV).map(([key, { name }]) => [name, config.retention[key as keyof typeof config.retention]])),
      GATEHOUSE_WEBHOOK_TIMEOUT_MS: DEFAULT_SETTINGS.timeoutMs,
      GATEHOUSE_SAML_KEY_ACTIVATION_HOURS: DEFAULT_ACTIVATION_HOURS,
      GATEHOUSE_WEBHOOK_RETRY_SCHEDULE_MS: RETRY_SCHEDULE_MS.join(','),
      GATEHOUSE_DATABASE_POOL: pg.max,
      GATEHOUSE_DATABASE_STATEMENT_TIMEOUT_MS: pg.statementTimeoutMs,
      UV_THREADPOOL_SIZE: threadPoolSize(undefined),
      OIDC_NAME: providerName('oidc', {}),
      // GATEHOUSE_TLS=acme's (server/config.ts parseAcme): only read in that mode.
      GATEHOUSE_ACME_DNS: 'rfc2136',
      GATEHOUSE_ACME_RFC2136_TSIG_ALGORITHM: TSIG_ALGORITHMS[0],
    };
    const wrong: string[] = [];
    for (const row of rows) {
      const written = /^`([^`]*)`$/.exec(row.defaultCell)?.[1];
      if (written === undefined) continue; // words: unset, generated, from HOST and PORT, …
      const code = row.name in known ? String(known[row.name]) : inlineDefault(row.name);
      if (code === undefined) wrong.push(`${row.name}: the test cannot find the code's default; add it to "known" in test/unit/docs.test.ts`);
      else if (code !== written) wrong.push(`${row.name}: docs/configuration.md:${row.line} says ${written}, the code ${code}`);
    }
    expect(wrong).toEqual([]);
  });

  it('finds the reads it is meant to find (the extractor itself)', () => {
    for (const name of ['PORT', 'HOST', 'ADMIN_TOKEN', 'LOG_LEVEL', 'SMTP_URL', 'GOOGLE_CLIENT_ID', 'GATEHOUSE_RETENTION_AUDIT_DAYS', 'GATEHOUSE_DEVICE_CODE_FAILURE_LIMIT']) {
      expect(reads.has(name), name).toBe(true);
    }
    expect(inlineDefault('GATEHOUSE_TOKEN_FAILURE_LIMIT')).toBe('60');
    expect(inlineDefault('GATEHOUSE_WEBHOOK_CONCURRENCY')).toBe(String(DEFAULT_SETTINGS.concurrency));
    expect(inlineDefault('MICROSOFT_TENANT')).toBe('common');
  });
});
