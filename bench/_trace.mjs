// Bench-only diagnostics, loaded into the server with `--import` when the bench runs with
// BENCH_TRACE=FILE (off by default; bench/_trace-summary.ts loads it and sums it up, for
// bench/radius.ts). Appends JSON lines to FILE:
// - one per password sign-in (POST /api/auth/sign-in/email): its arrival, the password hash's
//   asked/started/ended times (diagnostics channel `gatehouse:password-hash`, ended = its result
//   back on the event loop), the response's finish; and the scheduler's figures (run and
//   runqueue-wait nanoseconds, /proc/self/task/*/schedstat) of the main thread, the niced pool
//   threads (nicer than the main thread) and V8's helper threads at each of those points;
// - one per 250 ms: the event loop's delay (max, p99), GC pauses (count, sum, max) and the same
//   scheduler figures.
// Times are performance.timeOrigin + now() (ms since the epoch, fractional). No request body, no
// header, no secret is read.
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { subscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, performance, PerformanceObserver } from 'node:perf_hooks';

const file = process.env.BENCH_TRACE;
const wall = () => performance.timeOrigin + performance.now();
const out = (record) => appendFileSync(file, `${JSON.stringify(record)}\n`);

/** Run/wait ns summed per kind of thread: main, pool (niced), v8 (other nice-0 threads). */
function sched() {
  const figures = { main: [0, 0], pool: [0, 0], other: [0, 0] };
  const niceOf = (stat) => Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  const mainNice = niceOf(readFileSync('/proc/self/stat', 'latin1'));
  for (const tid of readdirSync('/proc/self/task')) {
    let stat;
    let ss;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, 'latin1');
      ss = readFileSync(`/proc/self/task/${tid}/schedstat`, 'latin1').split(' ');
    } catch {
      continue;
    }
    const kind = Number(tid) === process.pid ? 'main' : niceOf(stat) > mainNice ? 'pool' : 'other';
    figures[kind][0] += Number(ss[0]);
    figures[kind][1] += Number(ss[1]);
  }
  return figures;
}

if (file) {
  let current;
  subscribe('http.server.request.start', ({ request }) => {
    if (request.method !== 'POST' || !request.url.startsWith('/api/auth/sign-in/email')) return;
    current = { kind: 'sign-in', arrived: wall(), s0: sched(), hashes: [] };
    request.__trace = current;
  });
  subscribe('gatehouse:password-hash', (event) => {
    if (!current) return;
    const at = (t) => performance.timeOrigin + t;
    if (event.phase === 'start') current.hashes.push({ asked: at(event.asked), started: at(event.started), s1: sched() });
    else {
      const hash = current.hashes.find((h) => h.started === at(event.started));
      if (hash) Object.assign(hash, { ended: at(event.ended), s2: sched() });
    }
  });
  subscribe('http.server.response.finish', ({ request }) => {
    const trace = request.__trace;
    if (!trace) return;
    trace.finished = wall();
    trace.s3 = sched();
    out(trace);
    if (current === trace) current = undefined;
  });

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let gc = { count: 0, sum: 0, max: 0 };
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gc.count += 1;
      gc.sum += entry.duration;
      gc.max = Math.max(gc.max, entry.duration);
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(() => {
    out({ kind: 'tick', at: wall(), loopMaxMs: delay.max / 1e6, loopP99Ms: delay.percentile(99) / 1e6, loopMeanMs: delay.mean / 1e6, gc, s: sched() });
    delay.reset();
    gc = { count: 0, sum: 0, max: 0 };
  }, 250).unref();
}
