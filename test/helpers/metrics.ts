/**
 * Reading one counter straight from the app's prom-client registry. `ctx.metrics` is typed as what
 * the core counts through (server/plugin-api/metrics.ts, no registry); the composition makes it a
 * server/metrics/metrics.ts `Metrics`, whose registry `GET /metrics` renders.
 */
import { Metrics } from '../../server/metrics/metrics.js';
import type { TestApp } from './app.js';

/** The value of `name`'s sample with exactly these label values (0 before anything was counted). */
export async function counterValue(t: TestApp, name: string, labels: Record<string, string>): Promise<number> {
  const metrics = t.app.ctx.metrics;
  if (!(metrics instanceof Metrics)) throw new Error('ctx.metrics is not the prom-client Metrics of server/metrics/metrics.ts');
  const metric = metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name} in the registry`);
  const wanted = Object.entries(labels);
  const sample = (await metric.get()).values.find((s) => wanted.every(([label, value]) => s.labels[label] === value));
  return sample?.value ?? 0;
}
