// CommandQueue: the FIFO of commands sent (or about to be sent) on one connection, answered
// in order. A ring buffer that only grows, so steady-state pipelining allocates nothing.
//
// It can also keep a copy of a command's key (Command::keep_key), for drivers that must match
// a reply to its request by key: a text-protocol get of several keys is answered only with
// the hits, each naming its key. Keys live in one arena that is trimmed from the front as
// commands leave, so that too allocates nothing once it has grown to the pipeline's size.
#pragma once

#include "folsom/detail/operation.hpp"

#include "wire/request_meter.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>
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
    /// Set by the driver's encode/join: the queue keeps a copy of the request's key (key()).
    bool keep_key = false;
    /// Lost with its connection, this command is retried (Request::retryable): metrics count
    /// it as a retry, not as a completed request.
    bool retryable = false;
    /// Sent quiet (meta q, binary ...Q): the server answers it only when it fails. A later
    /// reply that passes over it means it succeeded; the connection ends every run of quiet
    /// commands with a barrier, so that one always comes (Connection::end_quiet_run).
    bool quiet = false;
    /// Sent with ascii noreply: the server never answers it. It completes with Status::sent
    /// once written (when it reaches the front of the queue).
    bool unanswered = false;
    /// The barrier (meta mn, binary NOOP) that closes a run of quiet commands; it belongs to
    /// no request (its op is the connection's own, and metrics do not count it).
    bool barrier = false;
    /// Meta: a multi-key get/gets sent as one classic text line ("get k1 k2 ..."), answered in
    /// the text protocol (the driver decodes its replies with the text decoder).
    bool classic = false;
    std::uint32_t opaque = 0;     ///< binary/meta: matches replies; ascii: unused
    std::uint32_t key_count = 0;  ///< retrievals: keys in this command
    /// Retrievals: values delivered so far (drivers count them, for metrics' hits and misses).
    std::uint32_t hits = 0;
    /// The kept key's position in the queue's key arena (modulo 2^32, like the arena's base).
    std::uint32_t key_at = 0;
    std::uint8_t key_length = 0;  ///< of the kept key (keys are at most 250 bytes)
    /// ASCII: how many commands before this one share its wire command (0: it starts one).
    /// Adjacent single-key gets are sent as one "get k1 k2 ...": the first has joined == 0,
    /// the others 1, 2, ... (see ProtocolDriver::join).
    std::uint16_t joined = 0;
    /// ASCII: the key bytes of the wire command so far, up to and including this command's
    /// (keys and the spaces between them), which bounds how many gets join it.
    std::uint16_t line_key_bytes = 0;
    /// When the command was queued (steady clock, ns); set only when metrics are on.
    std::int64_t queued_ns = 0;
};

class CommandQueue {
  public:
    bool empty() const noexcept { return size_ == 0; }
    std::size_t size() const noexcept { return size_; }
    Command& front() noexcept { return slots_[head_]; }
    /// The i-th command from the front (i < size()).
    Command& at(std::size_t i) noexcept { return slots_[(head_ + i) & (slots_.size() - 1)]; }
    /// The last command (!empty()).
    Command& back() noexcept { return at(size_ - 1); }

    /// Appends `c`; when c.keep_key, a copy of `key` is kept for key(c).
    void push_back(Command c, std::string_view key = {}) {
        if (size_ == slots_.size()) grow();
        if (c.keep_key) {
            c.key_at = keys_base_ + static_cast<std::uint32_t>(keys_.size());
            c.key_length = static_cast<std::uint8_t>(key.size());
            keys_.insert(keys_.end(), key.begin(), key.end());
        }
        slots_[(head_ + size_) & (slots_.size() - 1)] = c;
        ++size_;
    }
    /// The kept key of a queued command (empty when it keeps none). Valid until the next
    /// pop_front, complete_front or push_back.
    std::string_view key(const Command& c) const noexcept {
        if (!c.keep_key) return {};
        return {keys_.data() + static_cast<std::uint32_t>(c.key_at - keys_base_), c.key_length};
    }
    Command pop_front() noexcept {
        Command c = slots_[head_];
        head_ = (head_ + 1) & (slots_.size() - 1);
        --size_;
        if (size_ == 0) {
            keys_base_ += static_cast<std::uint32_t>(keys_.size());
            keys_.clear();  // keeps the capacity
        } else if (c.keep_key) {
            // Everything up to the end of this key is dead (FIFO); trim it once it is more
            // than half the arena, so each byte is moved at most once on average.
            const std::uint32_t dead = c.key_at + c.key_length - keys_base_;
            if (dead > 4096 && std::size_t{dead} * 2 > keys_.size()) {
                keys_.erase(keys_.begin(), keys_.begin() + dead);
                keys_base_ += dead;
            }
        }
        return c;
    }
    /// Pops the front command and completes its part with `done`, recording it with the
    /// meter (when one is set) first, so that the record is visible before the caller's
    /// result is.
    void complete_front(const detail::Completion& done) {
        const Command c = pop_front();
        if (meter_) meter_->completed(c, done);
        c.op->on_complete(c.part, done);
    }
    /// Set once, before use: the meter that records completions (null: none), owned by the
    /// queue's connection. Only a meter with a sink is set, so that an unmetered completion
    /// costs one check.
    void set_meter(const RequestMeter* m) noexcept { meter_ = m; }

    /// Moves every command of `other` to the back of this queue, leaving `other` empty.
    /// Runs once per write with the whole batch, so it copies in bulk: the slots in at most
    /// two runs, the kept keys as one block (rebasing each command's key_at).
    void splice_back(CommandQueue& other) {
        if (other.empty()) return;
        if (empty() && keys_.empty() && slots_.size() <= other.slots_.size()) {
            // The common case of a connection that writes as fast as it is fed: take over.
            std::swap(slots_, other.slots_);
            std::swap(keys_, other.keys_);
            std::swap(keys_base_, other.keys_base_);
            std::swap(head_, other.head_);
            std::swap(size_, other.size_);
            return;
        }
        while (slots_.size() < size_ + other.size_)
            grow();
        // Everything of other.keys_ is appended (a dead prefix, if any, is a few bytes), so a
        // kept key moves from arena position p to p + shift.
        const std::uint32_t shift =
            keys_base_ + static_cast<std::uint32_t>(keys_.size()) - other.keys_base_;
        keys_.insert(keys_.end(), other.keys_.begin(), other.keys_.end());
        const std::size_t mask = slots_.size() - 1;
        const std::size_t other_mask = other.slots_.size() - 1;
        for (std::size_t i = 0; i < other.size_; ++i) {
            Command c = other.slots_[(other.head_ + i) & other_mask];
            c.key_at += shift;  // meaningless (and harmless) when !c.keep_key
            slots_[(head_ + size_ + i) & mask] = c;
        }
        size_ += other.size_;
        other.keys_base_ += static_cast<std::uint32_t>(other.keys_.size());
        other.keys_.clear();
        other.head_ = 0;
        other.size_ = 0;
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
    // A vector rather than a std::string: splice_back swaps it once per write, and a string's
    // swap (small-string case analysis) cost more than the rest of the splice.
    std::vector<char> keys_;
    std::uint32_t keys_base_ = 0;  // arena position of keys_[0], modulo 2^32
    const RequestMeter* meter_ = nullptr;
};

}  // namespace folsom::net
