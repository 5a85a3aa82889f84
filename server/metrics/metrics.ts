/**
 * Prometheus metrics (spec presets-and-operations.md, "Metrics"; docs/monitoring.md): what
 * features count, in one typed place, so no feature imports prom-client or names a metric itself.
 * Built once per app (`ctx.metrics`); `GET /metrics` (metrics/route.ts) renders the registry in the
 * Prometheus text format.
 *
 * - Counters and the request-duration histogram are counted where things happen (a label lookup
 *   and an addition, well under a microsecond: bench `refresh` measures it against a grant).
 * - Gauges that read state (backlogs, sessions, database size, schedules, keys, certificates) are
 *   read only when scraped, through readers the features register (`readState`), never on a
 *   request path.
 * - The process metrics of prom-client (CPU, memory, file descriptors, GC, event-loop lag) and
 *   `gatehouse_event_loop_delay_seconds` start with the first scrape: a server nobody scrapes pays
 *   for none of them.
 *
 * prom-client is the Prometheus client most Node services use (text format, standard process
 * metrics under the names Prometheus' own clients use), so dashboards and alerts written for
 * them work here unchanged.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import processCpuTotal from 'prom-client/lib/metrics/processCpuTotal.js';
import processStartTime from 'prom-client/lib/metrics/processStartTime.js';
import osMemoryHeap from 'prom-client/lib/metrics/osMemoryHeap.js';
import processOpenFileDescriptors from 'prom-client/lib/metrics/processOpenFileDescriptors.js';
import processMaxFileDescriptors from 'prom-client/lib/metrics/processMaxFileDescriptors.js';
import processResources from 'prom-client/lib/metrics/processResources.js';
import processHandles from 'prom-client/lib/metrics/processHandles.js';
import processRequests from 'prom-client/lib/metrics/processRequests.js';
import heapSizeAndUsed from 'prom-client/lib/metrics/heapSizeAndUsed.js';
import heapSpacesSizeAndUsed from 'prom-client/lib/metrics/heapSpacesSizeAndUsed.js';
import version from 'prom-client/lib/metrics/version.js';
import gc from 'prom-client/lib/metrics/gc.js';
import type { Metrics as MetricsPort, PluginCounter, SignInMethod, SignInResult, StateGauge, StateReader } from '../plugin-api/metrics.js';

export type { SignInMethod, SignInResult, StateGauge, StateReader };

const STATE_GAUGES: Record<StateGauge, { name: string; help: string }> = {
  webhookBacklog: { name: 'gatehouse_webhook_backlog', help: 'Webhook deliveries waiting to be sent or retried.' },
  backchannelLogoutBacklog: { name: 'gatehouse_backchannel_logout_backlog', help: 'Back-channel logout tokens waiting to be sent or retried.' },
  sessionsActive: { name: 'gatehouse_sessions_active', help: 'Browser sessions neither ended nor expired.' },
  databaseSize: { name: 'gatehouse_database_size_bytes', help: 'Size of the database (SQLite file with its write-ahead log, or the PostgreSQL database).' },
  sweeperLastRun: { name: 'gatehouse_sweeper_last_run_timestamp_seconds', help: 'When the retention sweeper last finished a pass (Unix time).' },
  backupLastSuccess: { name: 'gatehouse_backup_last_success_timestamp_seconds', help: 'When the newest backup in <data>/backups was written (Unix time); absent in PostgreSQL mode.' },
  signingKeyAge: { name: 'gatehouse_signing_key_age_seconds', help: 'Age of the oldest of the keys that sign tokens now (one per algorithm; they rotate together).' },
  tlsCertificateExpiry: { name: 'gatehouse_tls_certificate_expiry_timestamp_seconds', help: 'When the served TLS certificate expires (Unix time); absent without HTTPS.' },
  tlsCaExpiry: { name: 'gatehouse_tls_ca_expiry_timestamp_seconds', help: "When the local CA expires (Unix time); absent unless GATEHOUSE_TLS is auto." },
};

/** Seconds; the token endpoint answers in about a millisecond, so the low buckets are fine-grained. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'];
const statusClass = (status: number) => STATUS_CLASSES[Math.floor(status / 100) - 1] ?? 'other';

/** prom-client default metrics that break Prometheus' naming rules (see `startProcessMetrics`). */
const MISNAMED_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/**
 * prom-client's default metrics (its `collectDefaultMetrics`, 15.x, in its order) but its
 * event-loop lag: that one keeps a second perf_hooks histogram (~0.37 MB of native memory,
 * sampling every 10 ms for good) beside `gatehouse_event_loop_delay_seconds`' own; its gauges are
 * read from that one instead, registered where prom-client registers them, between these two
 * lists (issue 45, docs/decisions/0345-one-loop-histogram.md). They are imported by prom-client's
 * internal paths: test/integration/metrics.test.ts checks that each is there and registers its
 * metrics by name, so an upgrade that moves or changes one fails a test.
 */
const DEFAULTS_BEFORE_LOOP_LAG = [processCpuTotal, processStartTime, osMemoryHeap, processOpenFileDescriptors, processMaxFileDescriptors];
const DEFAULTS_AFTER_LOOP_LAG = [
  ...(typeof process.getActiveResourcesInfo === 'function' ? [processResources] : []),
  processHandles, processRequests, heapSizeAndUsed, heapSpacesSizeAndUsed, version, gc,
];

export class Metrics implements MetricsPort {
  readonly registry = new Registry();
  /**
   * Counting on or off (the bench's switch, bench/refresh.ts: the same server measured with and
   * without, window by window). Always on in service.
   */
  counting = true;
  private readonly signIns: Counter<'result' | 'method'>;
  private readonly tokens: Counter<'grant_type'>;
  private readonly tokenErrors: Counter<'error'>;
  private readonly pluginCounters = new Map<string, PluginCounter<string>>();
  private readonly durations: Histogram<'route' | 'status_class'>;
  private readonly readers = new Map<StateGauge, StateReader>();
  private loop: EventLoopDelay | undefined;
  private started = false;

  /** `onReadError`: told when a state reader fails (its gauge is left out of that scrape). */
  constructor(private readonly onReadError: (gauge: string, error: unknown) => void = () => {}) {
    const registers = [this.registry];
    this.signIns = new Counter({ name: 'gatehouse_sign_ins_total', help: 'Sign-in attempts by result and by the method checked.', labelNames: ['result', 'method'], registers });
    this.tokens = new Counter({ name: 'gatehouse_tokens_issued_total', help: 'Token endpoint answers that issued tokens, by grant type.', labelNames: ['grant_type'], registers });
    this.tokenErrors = new Counter({ name: 'gatehouse_token_errors_total', help: 'Token endpoint error answers, by OAuth error code.', labelNames: ['error'], registers });
    this.durations = new Histogram({
      name: 'gatehouse_http_request_duration_seconds',
      help: 'HTTP request durations by route (the path pattern) and status class.',
      labelNames: ['route', 'status_class'],
      buckets: DURATION_BUCKETS,
      registers,
    });
    for (const [key, { name, help }] of Object.entries(STATE_GAUGES) as [StateGauge, { name: string; help: string }][]) {
      const metrics = this;
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const value = await metrics.read(key);
          if (value === undefined) this.remove();
          else this.set(value);
        },
      });
    }
  }

  signIn(result: SignInResult, method: SignInMethod): void {
    if (this.counting) this.signIns.inc({ result, method });
  }

  tokenIssued(grantType: string): void {
    if (this.counting) this.tokens.inc({ grant_type: grantType });
  }

  /** `error`: the RFC 6749 §5.2 (or RFC 8628 §3.5) error code of the answer. */
  tokenError(error: string): void {
    if (this.counting) this.tokenErrors.inc({ error });
  }

  /** A plugin's own counter (plugin-api/metrics.ts); the same one again for the same name. */
  counter<L extends string>(definition: { name: string; help: string; labelNames: readonly L[] }): PluginCounter<L> {
    const known = this.pluginCounters.get(definition.name);
    if (known) return known as PluginCounter<L>;
    const counter = new Counter({ ...definition, labelNames: [...definition.labelNames], registers: [this.registry] });
    const metrics = this;
    const made: PluginCounter<L> = {
      inc(labels) {
        if (metrics.counting) counter.inc(labels);
      },
    };
    this.pluginCounters.set(definition.name, made as PluginCounter<string>);
    return made;
  }

  /** A plugin's own gauge, read at scrape time by `reader` (left out of a scrape where it answers undefined or fails). */
  gauge(definition: { name: string; help: string }, reader: StateReader): void {
    const metrics = this;
    new Gauge({
      ...definition,
      registers: [this.registry],
      async collect() {
        let value: number | undefined;
        try {
          value = await reader();
        } catch (error) {
          metrics.onReadError(definition.name, error);
        }
        if (value === undefined) this.remove();
        else this.set(value);
      },
    });
  }

  /** One answered request: `route` is the path pattern (`/api/admin/applications/:id`), not the path. */
  requestDone(route: string, status: number, seconds: number): void {
    if (this.counting) this.durations.observe({ route, status_class: statusClass(status) }, seconds);
  }

  /** Registers the reader of a state gauge (one per gauge; a later one replaces it). */
  readState(gauge: StateGauge, reader: StateReader): void {
    this.readers.set(gauge, reader);
  }

  /** The Prometheus text exposition of every metric. */
  async render(): Promise<string> {
    this.startProcessMetrics();
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops the event-loop monitor (the app is closing). */
  stop(): void {
    this.loop?.stop();
  }

  private async read(gauge: StateGauge): Promise<number | undefined> {
    const reader = this.readers.get(gauge);
    if (!reader) return undefined;
    try {
      return await reader();
    } catch (error) {
      this.onReadError(STATE_GAUGES[gauge].name, error);
      return undefined;
    }
  }

  private startProcessMetrics(): void {
    if (this.started) return;
    this.started = true;
    this.loop = new EventLoopDelay();
    for (const register of DEFAULTS_BEFORE_LOOP_LAG) register(this.registry, {});
    this.loop.registerLagGauges(this.registry);
    for (const register of DEFAULTS_AFTER_LOOP_LAG) register(this.registry, {});
    // Gauges named like counters, which `promtool check metrics` rejects; the per-type
    // `nodejs_active_handles` and `nodejs_active_resources` beside them say the same.
    for (const name of MISNAMED_DEFAULTS) this.registry.removeSingleMetric(name);
    this.registry.registerMetric(this.loop as unknown as Metric);
  }
}

/** What one scrape reads of the loop-delay histogram, in nanoseconds (then it starts again). */
interface LoopStats { count: number; min: number; max: number; mean: number; stddev: number; p50: number; p90: number; p99: number }

/**
 * `gatehouse_event_loop_delay_seconds`: a summary of how late the event loop ran its timers
 * (perf_hooks' monitor, sampling every 20 ms). The quantiles cover the time since the previous
 * scrape; `_sum` and `_count` add up since the first. The same histogram gives prom-client's
 * `nodejs_eventloop_lag_*` gauges (min, max, mean, standard deviation, p50, p90, p99 since the
 * previous scrape, as prom-client computes them, and `nodejs_eventloop_lag_seconds`, the delay of
 * a `setImmediate` at the scrape, set when it runs): one scrape reads it once and resets it.
 */
class EventLoopDelay {
  readonly name = 'gatehouse_event_loop_delay_seconds';
  readonly help = 'Event-loop delay; quantiles over the time since the previous scrape.';
  readonly type = 'summary';
  readonly aggregator = 'average';
  private readonly histogram: IntervalHistogram = monitorEventLoopDelay({ resolution: 20 });
  private sum = 0;
  private count = 0;
  /** This scrape's reading: the metrics of one scrape are read in one go, then it is dropped. */
  private taken: LoopStats | undefined;

  constructor() {
    this.histogram.enable();
  }

  /** The histogram since the previous scrape, read once per scrape (every metric of it sees the same). */
  private take(): LoopStats {
    if (this.taken) return this.taken;
    const h = this.histogram;
    this.taken = { count: h.count, min: h.min, max: h.max, mean: h.mean, stddev: h.stddev, p50: h.percentile(50), p90: h.percentile(90), p99: h.percentile(99) };
    h.reset();
    setImmediate(() => (this.taken = undefined)).unref();
    return this.taken;
  }

  /** prom-client's `nodejs_eventloop_lag_*` gauges (names, help and aggregators as its own), read from this histogram. */
  registerLagGauges(registry: Registry): void {
    const take = () => this.take();
    const gauge = (name: string, help: string, aggregator: 'min' | 'max' | 'average', read?: (s: LoopStats) => number) =>
      new Gauge({ name, help, registers: [registry], aggregator, ...(read ? { collect() { this.set(read(take()) / 1e9); } } : {}) });
    new Gauge({
      name: 'nodejs_eventloop_lag_seconds', help: 'Lag of event loop in seconds.', registers: [registry], aggregator: 'average',
      collect() {
        const start = process.hrtime.bigint();
        setImmediate(() => this.set(Number(process.hrtime.bigint() - start) / 1e9));
      },
    });
    gauge('nodejs_eventloop_lag_min_seconds', 'The minimum recorded event loop delay.', 'min', (s) => s.min);
    gauge('nodejs_eventloop_lag_max_seconds', 'The maximum recorded event loop delay.', 'max', (s) => s.max);
    gauge('nodejs_eventloop_lag_mean_seconds', 'The mean of the recorded event loop delays.', 'average', (s) => s.mean);
    gauge('nodejs_eventloop_lag_stddev_seconds', 'The standard deviation of the recorded event loop delays.', 'average', (s) => s.stddev);
    gauge('nodejs_eventloop_lag_p50_seconds', 'The 50th percentile of the recorded event loop delays.', 'average', (s) => s.p50);
    gauge('nodejs_eventloop_lag_p90_seconds', 'The 90th percentile of the recorded event loop delays.', 'average', (s) => s.p90);
    gauge('nodejs_eventloop_lag_p99_seconds', 'The 99th percentile of the recorded event loop delays.', 'average', (s) => s.p99);
  }

  get() {
    const s = this.take();
    const values: { labels?: Record<string, string | number>; value: number; metricName?: string }[] = [];
    if (s.count > 0) {
      values.push({ labels: { quantile: 0.5 }, value: s.p50 / 1e9 }, { labels: { quantile: 0.9 }, value: s.p90 / 1e9 }, { labels: { quantile: 0.99 }, value: s.p99 / 1e9 });
      this.sum += (s.mean * s.count) / 1e9;
      this.count += s.count;
    }
    values.push({ metricName: `${this.name}_sum`, value: this.sum }, { metricName: `${this.name}_count`, value: this.count });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  stop(): void {
    this.histogram.disable();
  }
}
