#pragma once
// An allocator for the model's few very large arrays: the host's block tables (the flat maps'
// slots and the stable maps' record chunks), the reference string's chunks and the offline
// bound's arrays. (The device's SRAM index image and the LRU's nodes on huge pages measured no
// faster on the per-layer workload, and stay on the plain allocator.) On a per-layer run these
// hold hundreds of MiB. Those read at random land on a different 4 KiB page at every look-up, so
// the cost of a look-up is the address translation as much as the cache miss (a page walk, twice as
// long under a hypervisor's nested paging); and every fresh 4 KiB page costs a fault when first
// written. Such arrays are placed on 2 MiB boundaries and offered to the kernel's transparent huge
// pages (madvise MADV_HUGEPAGE, which the default "madvise" THP setting honours), so that one
// translation and one fault cover 512 times the memory. Below kMinBytes, or where the call is
// not available, it is the plain allocator. Only where the memory lies changes, never a value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>

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
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    // Straight from the kernel, not from malloc: a 2 MiB-aligned block carved from the heap
    // leaves holes beside it and splits the heap's mapping at every madvise, and the run's peak
    // RSS grew by 6 % on the per-layer workload that way. Map a huge page more than needed and
    // unmap the misaligned head and the tail.
    const size_t mapped = rounded + kHugePage;
    void* m = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    const uintptr_t start = reinterpret_cast<uintptr_t>(m);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    if (aligned > start) munmap(m, aligned - start);
    if (const size_t tail = start + mapped - (aligned + rounded); tail > 0)
      munmap(reinterpret_cast<void*>(aligned + rounded), tail);
    void* p = reinterpret_cast<void*>(aligned);
    madvise(p, rounded, MADV_HUGEPAGE);  // a hint: refused, the pages stay small
#else
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMinBytes) return ::operator delete(p);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    munmap(p, (bytes + kHugePage - 1) / kHugePage * kHugePage);
#else
    std::free(p);
#endif
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

// Uninitialised storage for `n` objects of T from the allocator above, freed with it: the fixed
// chunks of the model's append-only arrays (the reference string, the block tables' records),
// which the owner fills and, for a T that needs it, constructs and destroys itself. Chunks of
// kMinBytes or more lie on huge pages; the pages of a chunk's tail that nothing has written yet
// are not faulted in (with THP, at most the 2 MiB page holding the last write).
template <typename T>
class HugeBuffer {
 public:
  HugeBuffer() = default;
  explicit HugeBuffer(size_t n) : data_(HugePageAllocator<T>().allocate(n)), n_(n) {}
  HugeBuffer(HugeBuffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), n_(o.n_) {}
  HugeBuffer& operator=(HugeBuffer&& o) noexcept {
    if (this != &o) {
      release();
      data_ = std::exchange(o.data_, nullptr);
      n_ = o.n_;
    }
    return *this;
  }
  HugeBuffer(const HugeBuffer&) = delete;
  HugeBuffer& operator=(const HugeBuffer&) = delete;
  ~HugeBuffer() { release(); }

  T* get() const { return data_; }
  T& operator[](size_t i) const { return data_[i]; }

 private:
  void release() {
    if (data_) HugePageAllocator<T>().deallocate(data_, n_);
    data_ = nullptr;
  }
  T* data_ = nullptr;
  size_t n_ = 0;
};

}  // namespace kvtier
