/**
 * A worker thread for work that must not run on the event loop (zxcvbn's estimates, parsing a
 * configuration file), asked one message at a time and answered by id. It starts on the first
 * call (most processes never need it) and ends after `idleMs` without one, giving its memory
 * back (and asking the idle reclaim to return the freed pages: util/memory-freed.ts). While a call waits, the worker keeps the process alive (a CLI command must get its
 * answer); otherwise it does not. If it fails or stops, every waiting call is refused with
 * `name`'s error and the next call starts a new one.
 *
 * The body is plain CommonJS evaluated in the worker (`eval: true`), so it needs no file of its
 * own beside the bundled server: it gets `workerData` and answers each `{ id, ...message }` on
 * `parentPort` with `{ id, result }` or `{ id, error }`.
 *
 * The thread is background work, like the hashes: it runs at the thread pool's lowered priority
 * (cli/thread-priority.ts), so the event loop wins a core when both have work (per thread on Linux).
 */
import { Worker } from 'node:worker_threads';
import { backgroundNice } from './background-nice.js';
import { memoryFreed } from './memory-freed.js';

interface Pending {
  resolve: (result: unknown) => void;
  reject: (error: Error) => void;
}

export class IdleWorker<Message extends object, Result> {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();
  private idle: NodeJS.Timeout | undefined;

  constructor(
    private readonly name: string,
    private readonly source: string,
    private readonly workerData: () => unknown,
    private readonly idleMs: number,
  ) {}

  call(message: Message): Promise<Result> {
    clearTimeout(this.idle);
    const w = (this.worker ??= this.start());
    const id = this.nextId++;
    return new Promise<Result>((resolve, reject) => {
      w.ref();
      const done = () => (this.pending.size === 0 ? w.unref() : undefined);
      this.pending.set(id, { resolve: (r) => (resolve(r as Result), done()), reject: (e) => (reject(e), done()) });
      w.postMessage({ id, ...message });
    });
  }

  private start(): Worker {
    const nice = process.platform === 'linux' ? `try { require('node:os').setPriority(${backgroundNice()}); } catch {}\n` : '';
    const w = new Worker(nice + this.source, { eval: true, workerData: this.workerData() });
    w.unref();
    w.on('message', (message: { id: number; result?: unknown; error?: string }) => {
      const waiting = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (!waiting) return;
      if (message.error === undefined) waiting.resolve(message.result);
      else waiting.reject(new Error(`${this.name}: ${message.error}`));
      if (this.pending.size === 0) this.scheduleStop();
    });
    const fail = (error: Error) => {
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
      if (this.worker === w) this.worker = undefined;
    };
    w.on('error', fail);
    w.on('exit', () => fail(new Error(`${this.name}: the worker stopped`)));
    return w;
  }

  private scheduleStop(): void {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => {
      if (this.pending.size || !this.worker) return;
      const w = this.worker;
      this.worker = undefined;
      void w.terminate().then(memoryFreed);
    }, this.idleMs);
    this.idle.unref();
  }
}
