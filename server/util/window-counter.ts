/**
 * Fixed-window counters per key (an address, a person), in memory: the building block of the
 * small abuse limits that count only some requests (wrong device codes) or must answer in a
 * protocol's own error shape (the device authorization endpoint). A window starts at a key's
 * first hit; at most `maxKeys` keys are kept, the oldest forgotten first, so made-up keys cannot
 * grow it without bound.
 */
export class WindowCounter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

  constructor(
    private readonly max: number,
    private readonly windowMs: number,
    private readonly maxKeys = 50_000,
  ) {}

  /** Seconds until `key` may try again when it has used its budget; undefined while it may. */
  blocked(key: string, nowMs: number): number | undefined {
    const window = this.windows.get(key);
    if (!window) return undefined;
    if (window.resetAt <= nowMs) {
      this.windows.delete(key);
      return undefined;
    }
    return window.count >= this.max ? Math.ceil((window.resetAt - nowMs) / 1000) : undefined;
  }

  /** Counts one hit against `key`. */
  hit(key: string, nowMs: number): void {
    const window = this.windows.get(key);
    if (window && window.resetAt > nowMs) {
      window.count += 1;
      return;
    }
    this.windows.delete(key);
    this.windows.set(key, { count: 1, resetAt: nowMs + this.windowMs });
    for (const k of this.windows.keys()) {
      if (this.windows.size <= this.maxKeys) break;
      this.windows.delete(k);
    }
  }
}
