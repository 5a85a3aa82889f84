// Calls Node does not expose to JavaScript (Node 20): V8's low-memory collection, and glibc's
// malloc_trim, mallopt and mallinfo2. `gc()` from --expose-gc collects but keeps the emptied pages,
// and its options object cannot ask for the memory-reducing collection; the heap only shrinks when
// V8's own memory reducer happens to run, which in a server is 8-15 s after the last request, or
// never. glibc reads its tunables from the environment when the process starts; mallopt sets the
// same ones from inside, so `gatehouse serve` needs no second process to set them
// (server/cli/launch.ts).
#include <node.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace {

// A full, compacting collection that also shrinks the young generation and returns the freed
// pages (Isolate::LowMemoryNotification), then glibc's free lists above the top of each arena
// (malloc_trim), which glibc otherwise keeps for reuse. Blocks the calling thread: tens of ms.
//
// reclaim(agingCollections): first that many memory-reducing collections V8 does not count as
// forced (MemoryPressureNotification(kCritical), then back to kNone so V8 does not stay in its
// memory-saving mode). V8 ages a function's bytecode only in collections that are not forced, and
// flushes bytecode that has not run for --bytecode-old-age (5) of them; the low-memory
// notification's collections are forced, so an idle server never aged, and kept the bytecode,
// feedback and optimised code of everything its last burst of requests ran.
void Reclaim(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  int aging = 0;
  if (info.Length() > 0 && info[0]->IsNumber()) {
    double n = info[0].As<v8::Number>()->Value();
    if (n > 0 && n <= 8) aging = static_cast<int>(n);
  }
  if (aging > 0) {
    for (int i = 0; i < aging; i++) isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kCritical);
    isolate->MemoryPressureNotification(v8::MemoryPressureLevel::kNone);
  }
  isolate->LowMemoryNotification();
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

// mallopt(M_MMAP_THRESHOLD, bytes): allocations of `bytes` and more are mmapped and unmapped on
// free, in every arena, as MALLOC_MMAP_THRESHOLD_ in the environment at start would make them
// (and, like it, glibc's dynamic threshold stops rising). True when glibc took it; false where
// glibc is not the allocator.
void SetMmapThreshold(const v8::FunctionCallbackInfo<v8::Value>& info) {
  bool done = false;
#if defined(__GLIBC__)
  if (info.Length() > 0 && info[0]->IsNumber()) {
    double bytes = info[0].As<v8::Number>()->Value();
    if (bytes >= 0 && bytes <= 32 * 1024 * 1024) done = mallopt(M_MMAP_THRESHOLD, static_cast<int>(bytes)) == 1;
  }
#endif
  info.GetReturnValue().Set(done);
}

// mallopt(M_ARENA_MAX, n): at most n malloc arenas, as MALLOC_ARENA_MAX in the environment at
// start would allow. glibc otherwise gives each thread that meets a locked arena one of its own,
// up to 8 per core: V8's compiler and collector threads and libuv's pool each kept one, with the
// free fragments malloc_trim cannot return. Threads that already have an arena keep it, so it is
// set first thing. True when glibc took it.
void SetArenaMax(const v8::FunctionCallbackInfo<v8::Value>& info) {
  bool done = false;
#if defined(__GLIBC__)
  if (info.Length() > 0 && info[0]->IsNumber()) {
    double n = info[0].As<v8::Number>()->Value();
    if (n >= 1 && n <= 64) done = mallopt(M_ARENA_MAX, static_cast<int>(n)) == 1;
  }
#endif
  info.GetReturnValue().Set(done);
}

// mallinfo2's totals in bytes, for the memory benchmark: { arena (heap bytes from brk and the
// thread arenas), inUse, free (in the arenas, not returned), mmapped (large blocks), releasable
// (free at the top, what malloc_trim returns at the least) }; undefined without glibc 2.33.
void MallocInfo(const v8::FunctionCallbackInfo<v8::Value>& info) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  struct mallinfo2 m = mallinfo2();
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  auto set = [&](const char* key, size_t value) {
    out->Set(context, v8::String::NewFromUtf8(isolate, key).ToLocalChecked(), v8::Number::New(isolate, static_cast<double>(value))).Check();
  };
  set("arena", m.arena);
  set("inUse", m.uordblks);
  set("free", m.fordblks);
  set("mmapped", m.hblkhd);
  set("releasable", m.keepcost);
  info.GetReturnValue().Set(out);
#endif
}

}  // namespace

NODE_MODULE_INIT(/* exports, module, context */) {
  NODE_SET_METHOD(exports, "reclaim", Reclaim);
  NODE_SET_METHOD(exports, "setMmapThreshold", SetMmapThreshold);
  NODE_SET_METHOD(exports, "setArenaMax", SetArenaMax);
  NODE_SET_METHOD(exports, "mallocInfo", MallocInfo);
}
