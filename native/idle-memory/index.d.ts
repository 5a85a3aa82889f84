/**
 * V8's low-memory collection, then glibc's malloc_trim (where glibc is the allocator). Blocks: tens
 * of ms. With `agingCollections` (1–8), first that many memory-reducing collections that V8 does
 * not count as forced, so bytecode not run for 5 of them is flushed (helpers built before this
 * ignore the argument).
 */
export function reclaim(agingCollections?: number): void;
/**
 * glibc's mallopt(M_MMAP_THRESHOLD, bytes), as MALLOC_MMAP_THRESHOLD_ at start would set it; true
 * when taken, false where glibc is not the allocator. Absent from helpers built before it.
 */
export const setMmapThreshold: ((bytes: number) => boolean) | undefined;
/**
 * glibc's mallopt(M_ARENA_MAX, n), as MALLOC_ARENA_MAX at start would set it; true when taken.
 * Absent from helpers built before it.
 */
export const setArenaMax: ((n: number) => boolean) | undefined;
/** glibc's mallinfo2 totals in bytes; undefined without glibc ≥ 2.33. Absent from helpers built before it. */
export const mallocInfo: (() => MallocInfo | undefined) | undefined;
export interface MallocInfo {
  arena: number;
  inUse: number;
  free: number;
  mmapped: number;
  releasable: number;
}
