#pragma once
// An allocator for the model's few very large arrays that are read at random: the host's block
// tables and the device's SRAM index image. On a per-layer run they hold hundreds of MiB and
// every look-up lands on a different 4 KiB page, so the cost of a look-up is the address
// translation as much as the cache miss (a page walk, twice as long under a hypervisor's nested
// paging). Such arrays are placed on 2 MiB boundaries and offered to the kernel's transparent
// huge pages (madvise MADV_HUGEPAGE, which the default "madvise" THP setting honours), so that
// one translation covers 512 times the memory. Below kMinBytes, or where the call is not
// available, it is the plain allocator. Only where the memory lies changes, never a value.
#include <cstddef>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace kvtier {

template <typename T>
class HugePageAllocator {
 public:
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kMinBytes = size_t{4} << 20;  // smaller arrays fit the TLB anyway

  HugePageAllocator() = default;
  template <typename U>
  HugePageAllocator(const HugePageAllocator<U>&) {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMinBytes) return static_cast<T*>(::operator new(bytes));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: refused, the pages stay small
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    if (n * sizeof(T) < kMinBytes) return ::operator delete(p);
    std::free(p);
  }

  template <typename U>
  bool operator==(const HugePageAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugePageAllocator<U>&) const {
    return false;
  }
};

}  // namespace kvtier
