/**
 * A small time-series chart drawn by uPlot (a canvas chart library: 50 kB, no dependencies).
 * Colours come from the panel's CSS variables, so the chart follows the light or dark scheme, and
 * it is redrawn when the scheme or the width changes. The canvas is an image to assistive
 * technology: `summary` is its text alternative, shown under it as well.
 */
import { createEffect, onCleanup, onMount } from 'solid-js';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: number[];
  /** CSS variable holding the colour, e.g. `--chart-1`. */
  color: string;
  fill?: boolean;
}

export function TimeChart(props: { title: string; summary: string; days: string[]; series: ChartSeries[]; height?: number }) {
  let box!: HTMLDivElement;
  let plot: uPlot | undefined;
  const css = (name: string) => getComputedStyle(box).getPropertyValue(name).trim() || '#888';

  const draw = () => {
    plot?.destroy();
    const width = Math.max(240, box.clientWidth);
    const text = css('--muted');
    const grid = css('--border');
    const xs = props.days.map((d) => Date.parse(`${d}T00:00:00Z`) / 1000);
    plot = new uPlot(
      {
        width,
        height: props.height ?? 180,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        cursor: { y: false },
        legend: { show: true, live: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
        axes: [
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid } },
          { stroke: text, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid }, size: 40, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000] },
        ],
        series: [
          {},
          ...props.series.map((s) => {
            const color = css(s.color);
            return { label: s.label, stroke: color, width: 2, fill: s.fill ? `${color}33` : undefined, points: { show: false } };
          }),
        ],
      },
      [xs, ...props.series.map((s) => s.values)],
      box,
    );
  };

  onMount(() => {
    draw();
    const scheme = matchMedia('(prefers-color-scheme: dark)');
    const redraw = () => draw();
    scheme.addEventListener('change', redraw);
    let lastWidth = box.clientWidth;
    const resize = new ResizeObserver(() => {
      if (Math.abs(box.clientWidth - lastWidth) < 8) return;
      lastWidth = box.clientWidth;
      draw();
    });
    resize.observe(box);
    onCleanup(() => {
      scheme.removeEventListener('change', redraw);
      resize.disconnect();
      plot?.destroy();
    });
  });
  // New data (another application, a refresh): draw again.
  createEffect(() => {
    void props.days;
    void props.series;
    if (plot) draw();
  });

  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} class="chart-canvas" role="img" aria-label={`${props.title}: ${props.summary}`} />
      <p class="hint">{props.summary}</p>
    </figure>
  );
}
