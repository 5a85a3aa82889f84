/** V8's low-memory collection, then glibc's malloc_trim (where glibc is the allocator). Blocks: tens of ms. */
export function reclaim(): void;
