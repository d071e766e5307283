// Exact solver (solver.hpp), the transposition table: bounds keyed by the canonical drawn-edge set in
// two-entry buckets, grown on demand, shared under bucket locks by the threads of a search, and written to
// a file and read back.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "engine.hpp"

namespace dnb {
namespace exact {

constexpr EdgeIndex kNoMove = std::numeric_limits<EdgeIndex>::max();

// A bound on a value (a margin of the boxes left): 8 bits hold every margin of a board of at most 127
// boxes (the compact build, up to 9x9); the wide build (up to 12x12, 144 boxes) needs 16.
using Bound = std::conditional_t<(kMaxBoxes <= 127), int8_t, int16_t>;

struct TTEntry {
  uint64_t key[kEdgeWords];  // canonical drawn-edge set
  Bound lo, hi;              // lo <= v <= hi
  EdgeIndex move;            // best move in canonical orientation (kNoMove: none)
  uint8_t work;              // 1 + log2(nodes of the search that stored it); 0 = empty slot
  uint8_t pad[7 - 2 * sizeof(Bound) - sizeof(EdgeIndex)];  // zeroed padding to a whole word (files hold the raw entries)
};
static_assert(kEdgeWords > 3 || sizeof(TTEntry) == 32, "TTEntry is 32 bytes up to 9x9");

// The table index of a canonical edge set: its words mixed (multiply-xorshift).
inline uint64_t key_hash(const uint64_t* key) {
  static constexpr uint64_t kMix[] = {0x9E3779B97F4A7C15ull, 0xC2B2AE3D27D4EB4Full, 0x165667B19E3779F9ull,
                                      0xD6E8FEB86659FD93ull, 0xA0761D6478BD642Full, 0xE7037ED1A0B428DBull};
  static_assert(kEdgeWords <= 6, "key_hash mixes at most six words");
  uint64_t h = 0;
  for (int w = 0; w < kEdgeWords; ++w) h ^= key[w] * kMix[w];
  h ^= h >> 29;
  h *= 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 32);
}

// Memory for the table aligned to 64 bytes, so that a two-entry bucket is one cache line (a plain vector
// starts 16 bytes into a line, and every bucket then straddles two lines). A table of 2 MB or more is
// aligned to 2 MB and, on Linux, asks for transparent huge pages: a probe is a random access into
// hundreds of MB, and with 4 KB pages nearly every one also misses the TLB.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t(2) << 20;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  static size_t alignment(size_t bytes) { return bytes >= kHuge ? kHuge : 64; }
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    void* p = ::operator new(bytes, std::align_val_t(alignment(bytes)));
#ifdef MADV_HUGEPAGE
    if (bytes >= kHuge) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: its failure changes nothing
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) { ::operator delete(p, std::align_val_t(alignment(n * sizeof(T)))); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};

// Two-entry buckets indexed by the canonical hash. The table starts small and grows (x4, rehashing every
// entry from its stored key) while it is more than half full, up to `limit` entries, so a small problem
// does not pay for clearing a large table.
class TranspositionTable {
 public:
  explicit TranspositionTable(size_t limit) {
    limit_ = 2;
    while (limit_ * 2 <= std::max<size_t>(limit, 2)) limit_ <<= 1;
    allocate(std::min<size_t>(limit_, size_t(1) << 12));
  }
  void clear() {
    std::fill(table_.begin(), table_.end(), TTEntry{});
    used_ = 0;
    stale_ = false;
  }
  size_t size() const { return table_.size(); }
  size_t used() const {
    if (stale_) {  // counted again after a concurrent phase
      used_ = 0;
      for (const TTEntry& e : table_) used_ += e.work != 0;
      stale_ = false;
    }
    return used_;
  }

  // Several searching threads at once (Solver::set_threads): the table is grown first to room for 32
  // times its entries (at least 2^20, at most its limit; it cannot grow while shared) and each bucket is
  // read and written under one of kLocks spin locks.
  void set_concurrent(bool on) {
    if (on) {
      const size_t want = std::min(limit_, std::max(size_t(1) << 20, 32 * used()));
      while (table_.size() < want) grow();
      if (!locks_) locks_.reset(new std::atomic<uint8_t>[kLocks]());
      stale_ = true;
    }
    concurrent_ = on;
  }
  struct Guard {  // holds the lock of a bucket while concurrent
    Guard(const TranspositionTable& t, uint64_t hash) : lock_(t.concurrent_ ? &t.locks_[(hash >> 1) & (kLocks - 1)] : nullptr) {
      if (lock_) {
        while (lock_->exchange(1, std::memory_order_acquire)) {
          while (lock_->load(std::memory_order_relaxed)) {}
        }
      }
    }
    ~Guard() {
      if (lock_) lock_->store(0, std::memory_order_release);
    }
    std::atomic<uint8_t>* lock_;
  };

  // The entries as raw bytes (the Solver writes the header), and back: `n` entries replace the table.
  bool write(std::FILE* f) const {
    return std::fwrite(table_.data(), sizeof(TTEntry), table_.size(), f) == table_.size();
  }
  bool read(std::FILE* f, size_t n) {
    if (n < 2 || (n & (n - 1))) return false;
    Entries fresh(n);
    if (std::fread(fresh.data(), sizeof(TTEntry), n, f) != n) return false;
    table_.swap(fresh);
    mask_ = n - 2;
    limit_ = std::max(limit_, n);
    used_ = 0;
    for (const TTEntry& e : table_) used_ += e.work != 0;
    stale_ = false;
    return true;
  }

  TTEntry* probe(uint64_t hash, const uint64_t* key) {
    TTEntry* b = &table_[hash & mask_];
    for (int i = 0; i < 2; ++i) {
      if (b[i].work && same_key(b[i].key, key)) return &b[i];
    }
    return nullptr;
  }

  // Slot for a new entry of `key` (not in the table): bucket slot 0 keeps the entry with the most work,
  // slot 1 takes the rest. The slot is returned emptied (work 0) with its key set.
  TTEntry* insert(uint64_t hash, const uint64_t* key, uint8_t work) {
    if (!concurrent_ && 2 * used_ > table_.size() && table_.size() < limit_) grow();
    TTEntry* b = &table_[hash & mask_];
    if (!concurrent_) used_ += b[1].work == 0;  // slot 1 is the one overwritten in both cases
    TTEntry* e;
    if (b[0].work <= work) {
      b[1] = b[0];
      e = &b[0];
    } else {
      e = &b[1];
    }
    *e = TTEntry{};
    for (int w = 0; w < kEdgeWords; ++w) e->key[w] = key[w];
    return e;
  }

 private:
  static bool same_key(const uint64_t* a, const uint64_t* b) {
    for (int w = 0; w < kEdgeWords; ++w) {
      if (a[w] != b[w]) return false;
    }
    return true;
  }
  void allocate(size_t n) {
    table_.assign(n, TTEntry{});
    mask_ = n - 2;
    used_ = 0;
  }

  void grow() {
    Entries old;
    old.swap(table_);
    allocate(std::min(limit_, old.size() * 4));
    for (const TTEntry& e : old) {
      if (!e.work) continue;
      const uint64_t h = key_hash(e.key);
      TTEntry* b = &table_[h & mask_];
      TTEntry* slot = !b[0].work ? &b[0] : !b[1].work ? &b[1] : (b[1].work < e.work ? &b[1] : nullptr);
      if (!slot) continue;
      used_ += slot->work == 0;
      *slot = e;
    }
  }

  static constexpr size_t kLocks = size_t(1) << 14;
  using Entries = std::vector<TTEntry, CacheLineAllocator<TTEntry>>;
  Entries table_;
  size_t mask_ = 0, limit_ = 2;
  mutable size_t used_ = 0;     // filled slots (not counted while concurrent: recounted on demand)
  mutable bool stale_ = false;
  bool concurrent_ = false;
  std::unique_ptr<std::atomic<uint8_t>[]> locks_;
};

}  // namespace exact
}  // namespace dnb
