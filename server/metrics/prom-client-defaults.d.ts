// prom-client's default process metrics, one module each (what its collectDefaultMetrics calls in
// turn): metrics.ts registers them one by one so that the event-loop lag gauges can be read from
// the one histogram the server already keeps (docs/decisions/0345-one-loop-histogram.md).
declare module 'prom-client/lib/metrics/*.js' {
  import type { Registry } from 'prom-client';
  const register: (registry: Registry, config?: Record<string, unknown>) => void;
  export default register;
}
