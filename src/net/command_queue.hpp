// CommandQueue: the FIFO of commands sent (or about to be sent) on one connection, answered
// in order. A ring buffer that only grows, so steady-state pipelining allocates nothing.
#pragma once

#include "folsom/detail/operation.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace folsom::net {

/// One command on the wire: which part of which operation it answers.
struct Command {
    detail::Operation* op = nullptr;
    std::uint32_t part = 0;
    detail::OpCode code = detail::OpCode::get;
    /// Stores: sent with a cas. The binary protocol answers "add on an existing key" and "cas
    /// mismatch" with the same status, so the driver must remember which question it asked.
    bool with_cas = false;
    std::uint32_t opaque = 0;     ///< binary/meta: matches replies; ascii: unused
    std::uint32_t key_count = 0;  ///< retrievals: keys in this command
    /// Retrievals: values delivered so far (drivers count them, for metrics' hits and misses).
    std::uint32_t hits = 0;
    /// Lost with its connection, this command is retried (Request::retryable): metrics count
    /// it as a retry, not as a completed request.
    bool retryable = false;
    /// When the command was queued (steady clock, ns); set only when metrics are on.
    std::int64_t queued_ns = 0;
};

/// Told about every command that completes from a queue that has one (see
/// CommandQueue::set_observer); the connection uses it to report metrics.
class CompletionObserver {
  public:
    virtual void completed(const Command& c, const detail::Completion& done) noexcept = 0;

  protected:
    ~CompletionObserver() = default;
};

class CommandQueue {
  public:
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    Command& front() noexcept { return slots_[head_]; }
    void push_back(const Command& c) {
        if (size_ == slots_.size()) grow();
        slots_[(head_ + size_) & (slots_.size() - 1)] = c;
        ++size_;
    }
    Command pop_front() noexcept {
        Command c = slots_[head_];
        head_ = (head_ + 1) & (slots_.size() - 1);
        --size_;
        return c;
    }
    /// Pops the front command and completes its part with `done`, telling the observer (when
    /// one is set) first, so that what it records is visible before the caller's result is.
    void complete_front(const detail::Completion& done) {
        const Command c = pop_front();
        if (observer_) observer_->completed(c, done);
        c.op->on_complete(c.part, done);
    }
    /// Set once, before use: who hears about completions (null: nobody).
    void set_observer(CompletionObserver* o) noexcept { observer_ = o; }
    CompletionObserver* observer() const noexcept { return observer_; }

    /// Moves every command of `other` to the back of this queue, leaving `other` empty.
    void splice_back(CommandQueue& other) {
        while (!other.empty())
            push_back(other.pop_front());
    }

  private:
    void grow() {
        std::vector<Command> bigger(slots_.empty() ? 64 : slots_.size() * 2);
        for (std::size_t i = 0; i < size_; ++i)
            bigger[i] = slots_[(head_ + i) & (slots_.size() - 1)];
        slots_ = std::move(bigger);
        head_ = 0;
    }
    std::vector<Command> slots_;
    std::size_t head_ = 0;
    std::size_t size_ = 0;
    CompletionObserver* observer_ = nullptr;
};

}  // namespace folsom::net
