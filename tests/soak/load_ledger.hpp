// LoadLedger: the soak's books. Every request is counted when issued and when completed, with
// its outcome; a Ticket travels with each request's handler and notices a second completion.
// After the drain, issued == completed means nothing was lost.
#pragma once

#include "folsom/error.hpp"
#include "folsom/metrics.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

namespace folsom::soak {

class LoadLedger {
  public:
    /// Error codes of the folsom category are counted each apart; anything else as "other".
    static constexpr std::size_t max_code = 32;

    /// One request: completing it twice is counted, not hidden.
    class Ticket {
      public:
        explicit Ticket(LoadLedger& l)
            : ledger_(&l), state_(std::make_shared<std::atomic<int>>(0)) {
            l.issued_.fetch_add(1, std::memory_order_relaxed);
        }
        /// Records the outcome (an empty error code is success). False when this request had
        /// already completed (counted as completed twice, and otherwise ignored).
        bool complete(std::error_code ec) const {
            if (state_->fetch_add(1, std::memory_order_acq_rel) != 0) {
                ledger_->twice_.fetch_add(1, std::memory_order_relaxed);
                return false;
            }
            ledger_->record(ec);
            return true;
        }

      private:
        LoadLedger* ledger_;
        std::shared_ptr<std::atomic<int>> state_;  // shared by copies of the handler
    };

    Ticket issue() { return Ticket(*this); }
    /// A reply that is not what was stored under the key (misrouted or corrupted).
    void wrong_value() { wrong_.fetch_add(1, std::memory_order_relaxed); }
    /// A multi-get that was answered for some keys only (its ticket completes with the error
    /// of the keys that were not: it is counted as failed, and here).
    void count_partial() { partial_.fetch_add(1, std::memory_order_relaxed); }

    std::uint64_t issued() const { return issued_.load(); }
    std::uint64_t completed() const { return completed_.load(); }
    std::uint64_t ok() const { return ok_.load(); }
    /// Completed with an error (ok() is read first: see record()).
    std::uint64_t failed() const {
        const auto good = ok();
        return completed() - good;
    }
    std::uint64_t twice() const { return twice_.load(); }
    std::uint64_t wrong() const { return wrong_.load(); }
    std::uint64_t partial() const { return partial_.load(); }
    /// Failures with `e`.
    std::uint64_t failed_with(errc e) const { return by_code_[static_cast<std::size_t>(e)].load(); }
    /// Failures whose code is not in the folsom category.
    std::uint64_t failed_other() const { return by_code_[0].load(); }

    /// "timeout 12, not_connected 40" (codes that occurred, by name), or "none".
    std::string failures_by_reason() const {
        std::string s;
        for (std::size_t i = 0; i < max_code; ++i) {
            const auto n = by_code_[i].load();
            if (n == 0) continue;
            if (!s.empty()) s += ", ";
            s += (i == 0 ? std::string("other") : name(static_cast<errc>(i))) + " " +
                 std::to_string(n);
        }
        return s.empty() ? "none" : s;
    }

    /// Whether a failure with `e` is what faults cause (a server killed, frozen or restarting,
    /// and the backpressure that a frozen server builds up) rather than a bug.
    static bool expected(errc e) {
        return e == errc::timeout || e == errc::not_connected || e == errc::connection_lost ||
               e == errc::connect_failed || e == errc::overloaded;
    }
    /// Failures with a code that faults do not explain.
    std::uint64_t unexpected() const {
        std::uint64_t n = by_code_[0].load();
        for (std::size_t i = 1; i < max_code; ++i)
            if (!expected(static_cast<errc>(i))) n += by_code_[i].load();
        return n;
    }

    /// The enumerator's name, as in error.hpp (the label metrics use).
    static std::string name(errc e) { return std::string(error_label(make_error_code(e))); }

  private:
    static std::size_t index(std::error_code ec) {
        if (ec.category() != category()) return 0;
        const auto v = static_cast<std::size_t>(ec.value());
        return v > 0 && v < max_code ? v : 0;
    }
    // Completed before its outcome, and failed() reads them the other way round, so that a
    // progress line never shows more successes than completions.
    void record(std::error_code ec) {
        completed_.fetch_add(1, std::memory_order_seq_cst);
        if (ec)
            by_code_[index(ec)].fetch_add(1, std::memory_order_relaxed);
        else
            ok_.fetch_add(1, std::memory_order_seq_cst);
    }

    std::atomic<std::uint64_t> issued_{0}, completed_{0}, ok_{0}, twice_{0}, wrong_{0}, partial_{0};
    std::array<std::atomic<std::uint64_t>, max_code> by_code_{};
};

}  // namespace folsom::soak
