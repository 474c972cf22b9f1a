// The request memory's caches (see folsom/detail/request_memory.hpp): a singly linked free
// list per size in each thread, and a mutex-guarded depot of batches per size (32 blocks a
// batch for the small sizes, 4 for the 8 KiB plan blocks).
//
// A thread's list that grows to two batches hands one batch to the depot; an empty one takes a
// batch from it. So a thread that only frees (the I/O thread freeing requests made elsewhere)
// and one that only allocates meet in the depot once per batch, and a thread that does both
// (a pipeline run from completions) never touches the mutex.
#include "folsom/detail/request_memory.hpp"

#include <cstdint>
#include <mutex>
#include <pthread.h>

namespace folsom::detail {
namespace {

constexpr std::size_t granule = 64;                 // small block sizes are multiples of this
constexpr std::size_t small_classes = 16;           // 64 .. 1024 bytes
constexpr std::size_t large_class = small_classes;  // exactly large_request_block bytes
constexpr std::size_t size_classes = small_classes + 1;
constexpr std::size_t no_class = size_classes;  // any other size: straight to the heap
static_assert(small_classes * granule == small_request_limit);

/// Blocks moved to or from the depot at once, and batches the depot keeps, per size: 2048
/// blocks of each small size (2 MiB for the largest), 64 plan blocks (512 KiB).
constexpr std::uint32_t batch_size(std::size_t c) noexcept {
    return c < small_classes ? 32 : 4;
}
constexpr std::uint32_t depot_batches(std::size_t c) noexcept {
    return c < small_classes ? 64 : 16;
}

/// A free block. The first block of a batch in the depot also links the next batch.
struct Block {
    Block* next;
    Block* next_batch;
};
static_assert(sizeof(Block) <= granule);

std::size_t class_of(std::size_t size) noexcept {
    if (size <= small_classes * granule) return (size - 1) / granule;  // size > 0
    return size == large_request_block ? large_class : no_class;
}

std::size_t block_bytes(std::size_t c) noexcept {
    return c < small_classes ? (c + 1) * granule : large_request_block;
}

/// Detaches what follows the first `keep` blocks of the list at `head` (which holds more) and
/// returns it.
Block* cut_after(Block* head, std::uint32_t keep) noexcept {
    Block* last_kept = head;
    for (std::uint32_t i = 1; i < keep; ++i)
        last_kept = last_kept->next;
    Block* rest = last_kept->next;
    last_kept->next = nullptr;
    return rest;
}

void free_chain(Block* b) noexcept {
    while (b) {
        Block* next = b->next;
        ::operator delete(b);
        b = next;
    }
}

class Depot {
  public:
    /// A chain of batch_size(c) blocks, or null.
    Block* take(std::size_t c) noexcept {
        std::lock_guard lk(mu_);
        Block* b = batches_[c];
        if (b) {
            batches_[c] = b->next_batch;
            --count_[c];
        }
        return b;
    }
    /// Keeps a chain of batch_size(c) blocks, or frees it when the depot holds enough.
    void give(std::size_t c, Block* chain) noexcept {
        {
            std::lock_guard lk(mu_);
            if (count_[c] < depot_batches(c)) {
                chain->next_batch = batches_[c];
                batches_[c] = chain;
                ++count_[c];
                return;
            }
        }
        free_chain(chain);
    }

    // Held across fork() (pthread_atfork, see depot()): a thread of the parent that held it
    // at the fork does not exist in the child, which would otherwise wait for it forever.
    void lock_for_fork() { mu_.lock(); }
    void unlock_after_fork() { mu_.unlock(); }

  private:
    std::mutex mu_;
    Block* batches_[size_classes] = {};
    std::uint32_t count_[size_classes] = {};
};

Depot& depot() noexcept {
    // Never destroyed: threads may still free requests while the program exits.
    static Depot* d = [] {
        auto* made = new Depot;
        ::pthread_atfork([] { depot().lock_for_fork(); }, [] { depot().unlock_after_fork(); },
                         [] { depot().unlock_after_fork(); });
        return made;
    }();
    return *d;
}

struct ThreadCache {
    Block* head[size_classes] = {};
    std::uint32_t count[size_classes] = {};

    ~ThreadCache();
};

// This thread's cache, once made. Plain pointers, so that the common case is one
// thread-local load with no guard: the cache itself (which has a destructor) is reached only
// the first time, and when the thread exits.
thread_local ThreadCache* t_cache = nullptr;
thread_local bool t_cache_gone = false;  // destroyed: later blocks go to the heap

[[gnu::noinline]] ThreadCache* make_thread_cache() noexcept {
    if (t_cache_gone) return nullptr;
    thread_local ThreadCache cache;
    t_cache = &cache;
    return t_cache;
}

ThreadCache* thread_cache() noexcept {
    if (ThreadCache* t = t_cache) [[likely]]
        return t;
    return make_thread_cache();
}

ThreadCache::~ThreadCache() {
    t_cache = nullptr;
    t_cache_gone = true;
    for (std::size_t c = 0; c < size_classes; ++c) {
        // Whole batches to the depot; the rest, fewer than a batch, to the heap.
        while (count[c] >= batch_size(c)) {
            Block* batch = head[c];
            head[c] = cut_after(batch, batch_size(c));
            count[c] -= batch_size(c);
            depot().give(c, batch);
        }
        free_chain(head[c]);
    }
}

}  // namespace

void* allocate_request_memory(std::size_t size) {
    const std::size_t c = class_of(size);
    if (c == no_class) return ::operator new(size);
    if (ThreadCache* t = thread_cache()) {
        if (Block* b = t->head[c]) {
            t->head[c] = b->next;
            --t->count[c];
            return b;
        }
        if (Block* b = depot().take(c)) {
            t->head[c] = b->next;
            t->count[c] = batch_size(c) - 1;
            return b;
        }
    }
    return ::operator new(block_bytes(c));
}

void deallocate_request_memory(void* p, std::size_t size) noexcept {
    const std::size_t c = class_of(size);
    if (c == no_class) {
        ::operator delete(p);
        return;
    }
    ThreadCache* t = thread_cache();
    if (!t) {
        ::operator delete(p);
        return;
    }
    auto* b = static_cast<Block*>(p);
    b->next = t->head[c];
    t->head[c] = b;
    if (++t->count[c] < 2 * batch_size(c)) return;
    // Two batches here: the older one (at the back of the list) goes to the depot, so the
    // blocks most recently touched stay in this thread.
    Block* batch = cut_after(t->head[c], batch_size(c));
    t->count[c] = batch_size(c);
    depot().give(c, batch);
}

}  // namespace folsom::detail
