// Counts heap allocations by interposing glibc's allocator entry points and forwarding to the
// __libc_* implementations. Only linked into the benchmark executable, never into the product.
#include <stddef.h>
#include <stdatomic.h>
#include <errno.h>
#include <unistd.h>
#include <execinfo.h>
#include "CMallocCounter.h"

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Atomic unsigned long long allocations;

static _Atomic int tracing;
static _Thread_local int inTrace;

// With tracing on, each allocation's stack goes to stderr (backtrace_symbols_fd does not allocate;
// the guard keeps backtrace's own first-use allocation from recursing): which code allocated.
static inline void count(void) {
    atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
    if (atomic_load_explicit(&tracing, memory_order_relaxed) && !inTrace) {
        inTrace = 1;
        void *frames[24];
        int n = backtrace(frames, 24);
        backtrace_symbols_fd(frames, n, 2);
        static const char separator[] = "----\n";
        (void)!write(2, separator, sizeof separator - 1);
        inTrace = 0;
    }
}

void padgate_allocation_trace(int on) { atomic_store(&tracing, on); }

void *malloc(size_t size) { count(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(); return __libc_realloc(p, size); }
void *memalign(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
void free(void *p) { __libc_free(p); }

unsigned long long padgate_allocation_count(void) {
    return atomic_load_explicit(&allocations, memory_order_relaxed);
}
