#ifndef PADGATE_MALLOC_COUNTER_H
#define PADGATE_MALLOC_COUNTER_H
/// Number of malloc-family calls (malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign)
/// made by the whole process since start. Linking this library into an executable interposes those
/// functions, so every heap allocation (Swift runtime included) is counted.
unsigned long long padgate_allocation_count(void);
/// Benchmark diagnostics: print the stack of every allocation to stderr while on.
void padgate_allocation_trace(int on);
#endif
