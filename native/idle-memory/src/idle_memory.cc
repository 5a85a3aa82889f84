// Two calls Node does not expose to JavaScript (Node 20): V8's low-memory collection and glibc's
// malloc_trim. `gc()` from --expose-gc collects but keeps the emptied pages, and its options
// object cannot ask for the memory-reducing collection; the heap only shrinks when V8's own memory
// reducer happens to run, which in a server is 8-15 s after the last request, or never.
#include <node.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

// A full, compacting collection that also shrinks the young generation and returns the freed
// pages (Isolate::LowMemoryNotification), then glibc's free lists above the top of each arena
// (malloc_trim), which glibc otherwise keeps for reuse. Blocks the calling thread: tens of ms.
void Reclaim(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetIsolate()->LowMemoryNotification();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  NODE_SET_METHOD(exports, "reclaim", Reclaim);
}
