// CompletionLedger: proves "every request completes exactly once" under load. Each request of
// a test has an id; its handler calls complete(id) from whatever thread runs it; at the end no
// id may be missing (never()) or seen twice (twice()).
#pragma once

#include <atomic>
#include <cstddef>
#include <vector>

namespace folsom::test {

/// Counts completions per request id: each must be exactly 1.
class CompletionLedger {
  public:
    explicit CompletionLedger(std::size_t n) : counts_(n) {}
    void complete(std::size_t id) { counts_[id].fetch_add(1, std::memory_order_relaxed); }
    std::size_t never() const {
        std::size_t k = 0;
        for (auto& c : counts_)
            k += c.load() == 0;
        return k;
    }
    std::size_t twice() const {
        std::size_t k = 0;
        for (auto& c : counts_)
            k += c.load() > 1;
        return k;
    }
    bool all_done() const { return never() == 0; }

  private:
    std::vector<std::atomic<int>> counts_;
};

}  // namespace folsom::test
