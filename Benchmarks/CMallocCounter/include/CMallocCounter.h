#ifndef PADGATE_MALLOC_COUNTER_H
#define PADGATE_MALLOC_COUNTER_H
/// Number of malloc-family calls (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign)
/// made by the whole process since start. Linking this library into an executable interposes those
/// functions, so every heap allocation (Swift runtime included) is counted.
unsigned long long padgate_allocation_count(void);
/// Benchmark diagnostics: print the stack of every allocation to stderr while on.
void padgate_allocation_trace(int on);
/// The CPU's time-stamp counter: a clock read cheap enough (~10 ns) to time one stage of one
/// report; the caller converts ticks to ns against a wall clock over the whole run.
static inline unsigned long long padgate_ticks(void) {
#if defined(__x86_64__)
    unsigned int lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((unsigned long long)hi << 32) | lo;
#else
    unsigned long long value;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(value));
    return value;
#endif
}
#endif
