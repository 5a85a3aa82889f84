/**
 * Supervises the Gatehouse server as a child process: start it, wait for its
 * `{type: "ready", url}` IPC message (with a timeout), restart it with back-off when it dies,
 * stop it on quit. Deliberately free of any `electron` import so it is tested under plain Node;
 * Electron supplies a `utilityProcess.fork` spawner when packaged.
 */
import { fork } from 'node:child_process';
import { EventEmitter } from 'node:events';

/** The part of a child process the supervisor needs; Node's ChildProcess and Electron's UtilityProcess both fit via small adapters. */
export interface ServerChild {
  readonly pid: number | undefined;
  onMessage(listener: (message: unknown) => void): void;
  onExit(listener: (code: number | null) => void): void;
  /** Polite stop (SIGTERM or equivalent). */
  terminate(): void;
  /** Immediate stop (SIGKILL or equivalent). */
  kill(): void;
  /** The last non-empty line the child wrote to stderr, when its stderr is captured. */
  lastErrorLine?(): string | undefined;
}

export type Spawner = () => ServerChild;

export type SupervisorStatus = 'idle' | 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'failed';

export interface SupervisorOptions {
  spawn: Spawner;
  /** How long to wait for the ready message before treating the start as failed. */
  readyTimeoutMs?: number;
  /** Delays before successive restarts; the last one repeats. */
  backoffMs?: number[];
  /** After running this long, the next crash starts the back-off from the beginning again. */
  stableAfterMs?: number;
  /** Give up after this many consecutive failed starts (status `failed`). */
  maxRestarts?: number;
  /**
   * Give up sooner when this many children in a row exited with a non-zero code before they were
   * ready: the server refused to start (port in use, data directory locked, bad configuration),
   * which waiting will not fix. Crashes after ready and ready-timeout kills do not count.
   */
  maxStartupFailures?: number;
  /** Delay before retrying after such a start-up failure (short: another instance may just be quitting). */
  startupRetryMs?: number;
  /** How long `stop()` waits after the polite signal before killing. */
  stopTimeoutMs?: number;
}

export interface ReadyMessage {
  type: 'ready';
  url: string;
  issuer?: string;
}

function isReady(message: unknown): message is ReadyMessage {
  return (
    typeof message === 'object' &&
    message !== null &&
    (message as { type?: unknown }).type === 'ready' &&
    typeof (message as { url?: unknown }).url === 'string'
  );
}

export const DEFAULT_BACKOFF_MS = [500, 1000, 2000, 5000, 10000, 30000];

/** Why the server refused to start, in its own words (its last stderr line) when it said one. */
export class ServerStartError extends Error {
  override name = 'ServerStartError';
  constructor(
    readonly exitCode: number,
    /** The server's last stderr line without the `gatehouse: ` prefix, if any. */
    readonly reason: string | undefined,
  ) {
    super(reason ? `The server could not start: ${reason}` : `The server exited with code ${exitCode} before it was ready.`);
  }
}

/**
 * Events: `status` (status), `ready` (ReadyMessage, on every successful (re)start),
 * `exit` ({code, pid}), `restart-scheduled` ({delayMs, attempt}), `server-error` (Error, every
 * failure), `first-failure` (Error, when it gives up: status `failed`; a ServerStartError when the
 * server refused to start).
 */
export class ServerSupervisor extends EventEmitter {
  status: SupervisorStatus = 'idle';
  url: string | undefined;
  /** Consecutive failures since the last stable run. */
  failures = 0;
  /** Consecutive children that exited with a non-zero code before they were ready. */
  startupFailures = 0;
  private child: ServerChild | undefined;
  private restartTimer: NodeJS.Timeout | undefined;
  private readyTimer: NodeJS.Timeout | undefined;
  private stableTimer: NodeJS.Timeout | undefined;
  private stopping: Promise<void> | undefined;
  private readonly opts: Required<SupervisorOptions>;

  constructor(options: SupervisorOptions) {
    super();
    this.opts = {
      readyTimeoutMs: 20_000,
      backoffMs: DEFAULT_BACKOFF_MS,
      stableAfterMs: 60_000,
      maxRestarts: 20,
      maxStartupFailures: 3,
      startupRetryMs: 500,
      stopTimeoutMs: 5_000,
      ...options,
    };
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Starts the server; resolves with the first ready message, rejects only when restarts are exhausted. */
  start(): Promise<ReadyMessage> {
    if (this.status !== 'idle' && this.status !== 'stopped' && this.status !== 'failed') {
      return Promise.reject(new Error(`The server is already ${this.status}.`));
    }
    this.stopping = undefined;
    this.failures = 0;
    this.startupFailures = 0;
    return new Promise<ReadyMessage>((resolve, reject) => {
      const onReady = (m: ReadyMessage) => {
        this.off('first-failure', onFail);
        resolve(m);
      };
      const onFail = (error: Error) => {
        this.off('ready', onReady);
        reject(error);
      };
      this.once('ready', onReady);
      this.once('first-failure', onFail);
      this.launch(true);
    });
  }

  /** Stops the server and any pending restart; safe to call more than once. */
  stop(): Promise<void> {
    return (this.stopping ??= this.doStop());
  }

  private setStatus(status: SupervisorStatus) {
    if (this.status === status) return;
    this.status = status;
    this.emit('status', status);
  }

  private launch(first: boolean) {
    this.setStatus(first ? 'starting' : 'restarting');
    let child: ServerChild;
    try {
      child = this.opts.spawn();
    } catch (error) {
      this.failed(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    this.child = child;
    let ready = false;
    this.readyTimer = setTimeout(() => {
      // A server that never says it is ready is as good as dead: kill it; the exit handler restarts.
      this.emit('ready-timeout', { pid: child.pid });
      child.kill();
    }, this.opts.readyTimeoutMs);

    child.onMessage((message) => {
      if (ready || !isReady(message) || this.child !== child) return;
      ready = true;
      this.startupFailures = 0;
      clearTimeout(this.readyTimer);
      this.url = message.url;
      this.setStatus('running');
      this.stableTimer = setTimeout(() => {
        this.failures = 0;
      }, this.opts.stableAfterMs);
      this.emit('ready', message);
    });

    child.onExit((code) => {
      if (this.child !== child) return;
      clearTimeout(this.readyTimer);
      clearTimeout(this.stableTimer);
      this.child = undefined;
      this.emit('exit', { code, pid: child.pid });
      if (this.stopping) return;
      if (!ready && code !== null && code !== 0) {
        this.startupFailures += 1;
        this.failed(new ServerStartError(code, serverReason(child.lastErrorLine?.())), true);
        return;
      }
      this.startupFailures = 0;
      this.failed(new Error(`The server exited with code ${code ?? 'null'} ${ready ? 'while running' : 'before it was ready'}.`));
    });
  }

  private failed(error: Error, startup = false) {
    this.emit('server-error', error);
    if (this.stopping) return;
    this.failures += 1;
    if (this.failures > this.opts.maxRestarts || this.startupFailures >= this.opts.maxStartupFailures) {
      this.setStatus('failed');
      this.emit('first-failure', error);
      return;
    }
    const backoff = this.opts.backoffMs;
    const delayMs = startup ? this.opts.startupRetryMs : (backoff[Math.min(this.failures - 1, backoff.length - 1)] ?? 1000);
    this.setStatus('restarting');
    this.emit('restart-scheduled', { delayMs, attempt: this.failures });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.stopping) this.launch(false);
    }, delayMs);
  }

  private async doStop(): Promise<void> {
    clearTimeout(this.restartTimer);
    clearTimeout(this.readyTimer);
    clearTimeout(this.stableTimer);
    const child = this.child;
    if (!child) {
      this.setStatus('stopped');
      return;
    }
    this.setStatus('stopping');
    await new Promise<void>((resolve) => {
      const killTimer = setTimeout(() => child.kill(), this.opts.stopTimeoutMs);
      child.onExit(() => {
        clearTimeout(killTimer);
        resolve();
      });
      child.terminate();
    });
    this.child = undefined;
    this.setStatus('stopped');
  }
}

/** The server's own sentence from its last stderr line: `gatehouse: ` is dropped, blank is nothing. */
export function serverReason(line: string | undefined): string | undefined {
  const reason = line?.replace(/^gatehouse:\s*/, '').trim();
  return reason || undefined;
}

/** Longest stderr line kept for the error message; a runaway line keeps its end. */
const MAX_LINE = 2000;

/**
 * Captures a child's piped stderr: forwards every chunk to `forward` (the parent's stderr, so the
 * log is unchanged) and remembers the last non-empty line. `drained` settles when the stream ends,
 * or after a second at most, so an exit handler can wait for the final line.
 */
export function captureStderr(stream: NodeJS.ReadableStream | null | undefined, forward?: (chunk: string) => void) {
  let last: string | undefined;
  let partial = '';
  const take = (text: string) => {
    const line = text.trim();
    if (line) last = line.slice(-MAX_LINE);
  };
  const drained = new Promise<void>((resolve) => {
    if (!stream) return resolve();
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      forward?.(chunk);
      const lines = (partial + chunk).split('\n');
      partial = (lines.pop() ?? '').slice(-MAX_LINE);
      for (const line of lines) take(line);
    });
    const done = () => {
      take(partial);
      partial = '';
      resolve();
    };
    stream.once('end', done);
    stream.once('close', done);
    stream.once('error', done);
  });
  return {
    lastLine: () => (partial.trim() ? partial.trim() : last),
    /** Resolves once the stream is drained, or after `timeoutMs` (a grandchild may hold the pipe). */
    drained: (timeoutMs = 1000) =>
      Promise.race([drained, new Promise<void>((resolve) => setTimeout(resolve, timeoutMs).unref())]),
  };
}

export interface NodeSpawnOptions {
  /** Path of the bundled server, dist/gatehouse.mjs (SERVER_BUNDLE). */
  cliPath: string;
  dataDir: string;
  /** Extra arguments after `serve` (e.g. ['--port', '0']). */
  args?: string[];
  env?: Record<string, string | undefined>;
  /** Node binary; `node` from PATH by default so native modules match the system Node. */
  execPath?: string;
  /**
   * Where the child's stdout goes: inherited by default. Its stderr is always piped so the
   * supervisor can quote the server's last line; it is forwarded to ours unless this is `ignore`.
   */
  stdio?: 'inherit' | 'ignore' | 'pipe';
}

/**
 * Spawns `node dist/gatehouse.mjs serve` with an IPC channel (development and tests): one process,
 * which applies its launch settings to itself (server/cli/launch.ts).
 */
export function nodeSpawner(options: NodeSpawnOptions): Spawner {
  return () => {
    const io = options.stdio ?? 'inherit';
    const child = fork(options.cliPath, ['serve', ...(options.args ?? [])], {
      execPath: options.execPath ?? 'node',
      execArgv: [],
      env: { ...process.env, ...options.env, GATEHOUSE_DATA_DIR: options.dataDir },
      stdio: [io, io, 'pipe', 'ipc'],
    });
    const stderr = captureStderr(child.stderr, io === 'ignore' ? undefined : (chunk) => void process.stderr.write(chunk));
    // A spawn failure (no such binary) surfaces as 'error' followed by no exit; report it as one.
    let exited = false;
    const exitListeners: ((code: number | null) => void)[] = [];
    const fire = (code: number | null) => {
      if (exited) return;
      exited = true;
      for (const l of exitListeners) l(code);
    };
    // Exit is reported once stderr is drained, so the last line is there when the supervisor asks.
    child.on('exit', (code) => void stderr.drained().then(() => fire(code)));
    child.on('error', () => fire(null));
    return {
      get pid() {
        return child.pid;
      },
      onMessage: (listener) => void child.on('message', listener),
      onExit: (listener) => {
        if (exited) listener(child.exitCode);
        else exitListeners.push(listener);
      },
      terminate: () => void child.kill('SIGTERM'),
      kill: () => void child.kill('SIGKILL'),
      lastErrorLine: stderr.lastLine,
    };
  };
}
