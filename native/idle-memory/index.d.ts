/** V8's low-memory collection, then glibc's malloc_trim (where glibc is the allocator). Blocks: tens of ms. */
export function reclaim(): void;
/**
 * glibc's mallopt(M_MMAP_THRESHOLD, bytes), as MALLOC_MMAP_THRESHOLD_ at start would set it; true
 * when taken, false where glibc is not the allocator. Absent from helpers built before it.
 */
export const setMmapThreshold: ((bytes: number) => boolean) | undefined;
/** glibc's mallinfo2 totals in bytes; undefined without glibc ≥ 2.33. Absent from helpers built before it. */
export const mallocInfo: (() => MallocInfo | undefined) | undefined;
export interface MallocInfo {
  arena: number;
  inUse: number;
  free: number;
  mmapped: number;
  releasable: number;
}
