//===- BufferPool.cpp - Reused heap buffers for compiled programs ---------===//
//
// A compiled program allocates the same intermediate buffers, of the same
// sizes, on every call. Through malloc, every buffer above glibc's mmap
// threshold was a fresh mmap: each call paid a page fault and a page clear per
// 4 KiB and an munmap on free (ResNet-18 and MobileNet at batch 8 spent more
// than a third of their time in the kernel doing that). The pool keeps freed
// large buffers, keyed by their rounded size, and hands out the smallest one
// that fits (up to half as large again as asked).
//
// Every block carries a small header in front of the returned pointer: its
// size class (0 for a small block that goes straight back to free()) and the
// header's length, so that _mlir_memref_to_llvm_free needs only the pointer.
//
//===----------------------------------------------------------------------===//

#include "BufferPool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <vector>

namespace poptorch_bridge {
namespace {

/// Blocks below this go to malloc/free: glibc serves them from its arenas
/// without system calls.
constexpr size_t kPooledMin = 128 * 1024;
/// Pooled sizes are rounded up to whole pages, so that near sizes share.
constexpr size_t kGranule = 4096;
/// The pool holds at most this many free bytes: a quarter of the host's
/// memory, and at least 2 GiB. A block freed beyond it makes room by returning
/// the least recently freed blocks to the system: those of programs that no
/// longer run (a process that compiled several models filled the pool with
/// the first ones' sizes, and the later ones then allocated from the system
/// on every call: BERT at batch 8 ran 2x slower). A training step of GPT-2
/// small at batch 8 frees more than 2 GiB of activations and gradients per
/// call: a fixed 2 GiB cap had it clear fresh pages for a fifth of its time.
size_t maxCached() {
  static const size_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    size_t quarter =
        pages > 0 && page > 0 ? size_t(pages) * size_t(page) / 4 : 0;
    return std::max(quarter, size_t(2) << 30);
  }();
  return bytes;
}
constexpr size_t kMinHeader = 64;
/// Blocks of at least this size are aligned to it and backed by transparent
/// huge pages: a contraction reading an im2col matrix or a weight column by
/// column touches a new 4 KiB page per row, and its TLB misses cost more
/// than the arithmetic.
constexpr size_t kHugePage = size_t(2) << 20;

struct Header {
  uint64_t sizeClass; // 0: not pooled
  uint64_t headerBytes;
};

struct Block {
  size_t total; // header + size class
  void *base;
};

struct Pool {
  std::mutex mutex;
  /// Free blocks, most recently freed first.
  std::list<Block> lru;
  /// The free blocks of each total size, as positions in `lru` (no empty
  /// entries: lower_bound finds the smallest free block that fits).
  std::map<size_t, std::vector<std::list<Block>::iterator>> bySize;
  size_t cached = 0;
};

Pool &pool() {
  // Never destroyed: compiled programs may run during interpreter exit.
  static Pool *p = new Pool();
  return *p;
}

void *allocate(size_t alignment, size_t size) {
  size_t headerBytes = alignment > kMinHeader ? alignment : kMinHeader;
  size_t sizeClass = 0;
  size_t total = headerBytes + size;
  void *base = nullptr;
  // Free blocks are found by their total size, which says which alignment
  // they were made for only when every pooled block has the same header:
  // larger alignments (none that memref lowering asks for) are not pooled.
  if (size >= kPooledMin && headerBytes == kMinHeader) {
    sizeClass = (size + kGranule - 1) / kGranule * kGranule;
    total = headerBytes + sizeClass;
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    // The smallest free block of at least this size and at most half as
    // large again: a call reuses the memory of buffers it is done with even
    // when their sizes differ a little (BERT-base's training step: a pool of
    // 0.91 GiB where blocks of exactly the size needed 1.22 GiB, for 0.71
    // GiB live at the peak; every new block is a first touch of fresh pages).
    auto it = p.bySize.lower_bound(total);
    if (it != p.bySize.end() && it->first - total <= total / 2) {
      total = it->first;
      sizeClass = total - headerBytes;
      base = it->second.back()->base;
      p.lru.erase(it->second.back());
      it->second.pop_back();
      if (it->second.empty())
        p.bySize.erase(it);
      p.cached -= total;
    }
  }
  if (!base) {
    // Huge pages for the whole 2 MiB extents of the block only: its tail
    // stays on small pages instead of rounding the block up to a multiple of
    // 2 MiB (a 768 x 768 f32 matrix, 2.25 MiB, touched 4 MiB).
    size_t align = sizeClass >= kHugePage ? kHugePage : headerBytes;
    size_t bytes = (total + kGranule - 1) / kGranule * kGranule;
    base = std::aligned_alloc(align, (bytes + align - 1) / align * align);
    if (!base)
      return nullptr;
    if (align == kHugePage && bytes >= kHugePage)
      (void)madvise(base, bytes / kHugePage * kHugePage, MADV_HUGEPAGE);
  }
  char *user = static_cast<char *>(base) + headerBytes;
  Header *h = reinterpret_cast<Header *>(user) - 1;
  h->sizeClass = sizeClass;
  h->headerBytes = headerBytes;
  return user;
}

extern "C" void *poolAlloc(size_t size) { return allocate(kMinHeader, size); }

extern "C" void *poolAlignedAlloc(size_t alignment, size_t size) {
  return allocate(alignment, size);
}

extern "C" void poolFree(void *ptr) {
  if (!ptr)
    return;
  Header *h = static_cast<Header *>(ptr) - 1;
  void *base = static_cast<char *>(ptr) - h->headerBytes;
  if (!h->sizeClass || h->headerBytes + h->sizeClass > maxCached()) {
    std::free(base);
    return;
  }
  size_t total = h->headerBytes + h->sizeClass;
  std::vector<void *> evicted;
  {
    Pool &p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    while (p.cached + total > maxCached()) {
      Block old = p.lru.back();
      auto same = p.bySize.find(old.total);
      same->second.erase(std::find(same->second.begin(), same->second.end(),
                                   std::prev(p.lru.end())));
      if (same->second.empty())
        p.bySize.erase(same);
      p.lru.pop_back();
      p.cached -= old.total;
      evicted.push_back(old.base);
    }
    p.lru.push_front({total, base});
    p.bySize[total].push_back(p.lru.begin());
    p.cached += total;
  }
  for (void *e : evicted)
    std::free(e);
}

} // namespace

void addBufferPoolSymbols(llvm::StringMap<void *> &map) {
  map["_mlir_memref_to_llvm_alloc"] = reinterpret_cast<void *>(&poolAlloc);
  map["_mlir_memref_to_llvm_aligned_alloc"] =
      reinterpret_cast<void *>(&poolAlignedAlloc);
  map["_mlir_memref_to_llvm_free"] = reinterpret_cast<void *>(&poolFree);
}

size_t bufferPoolCachedBytes() {
  Pool &p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  return p.cached;
}

} // namespace poptorch_bridge
