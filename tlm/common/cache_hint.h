#pragma once
// A cache hint that the compiler keeps. GCC 12 drops __builtin_prefetch from a small member
// function whose only effect is the hint: it finds the function free of side effects and removes
// the call before inlining it. An asm statement marked volatile is never removed. It loads
// nothing the program reads, so no result depends on it.
namespace kvtier {

inline void cache_hint(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 (%0)" : : "r"(p));
#elif defined(__aarch64__)
  asm volatile("prfm pldl1keep, [%0]" : : "r"(p));
#else
  __builtin_prefetch(p);
#endif
}

}  // namespace kvtier
