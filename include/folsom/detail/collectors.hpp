// Collectors: how each kind of operation turns reply events into its result (internal).
//
// A collector receives the events of every part of one operation (see operation.hpp) and, once
// all parts have completed, hands over the completion arguments with `result()`. Collectors
// know nothing about handlers or executors; AsyncOp (async_op.hpp) joins the two.
//
// Thread-safety: parts of a fan-out operation may complete on different connections' strands
// concurrently, so a collector only ever writes per-part (or per-key) state from part events.
#pragma once

#include "folsom/detail/operation.hpp"
#include "folsom/detail/request_memory.hpp"
#include "folsom/detail/shared_buffer.hpp"
#include "folsom/meta.hpp"
#include "folsom/results.hpp"
#include "folsom/status.hpp"
#include "folsom/value.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <vector>

namespace folsom::detail {

/// get / gets / gat / gats of one key: void(error_code, std::optional<Value>).
class GetCollector {
  public:
    void on_value(std::uint32_t, std::uint32_t, const ValueView& v) {
        if (!value_) value_ = v.to_value();
    }
    void on_stat(std::uint32_t, std::string_view, std::string_view) {}
    void on_complete(std::uint32_t, const Completion& c) { ec_ = c.ec; }
    std::tuple<std::error_code, std::optional<Value>> result() {
        if (ec_) return {ec_, std::nullopt};
        return {ec_, std::move(value_)};
    }

  private:
    std::error_code ec_;
    std::optional<Value> value_;
};

/// meta_get: void(error_code, MetaGetResult), from the reply the driver hands on_complete.
class MetaGetCollector {
  public:
    void on_value(std::uint32_t, std::uint32_t, const ValueView&) {}
    void on_stat(std::uint32_t, std::string_view, std::string_view) {}
    void on_complete(std::uint32_t, const Completion& c) {
        ec_ = c.ec;
        if (ec_ || !c.meta) return;
        const protocol::meta::Reply& r = *c.meta;
        result_.cas = r.cas.value_or(0);
        result_.flags = r.client_flags.value_or(0);
        if (r.kind == protocol::meta::ReplyKind::value)
            result_.value = Value{std::string(r.data), result_.flags, result_.cas};
        result_.win = r.win;
        result_.stale = r.stale;
        result_.win_sent = r.win_sent;
        result_.ttl = r.ttl;
        result_.hit_before = r.hit_before;
        result_.last_access = r.last_access;
    }
    std::tuple<std::error_code, MetaGetResult> result() {
        if (ec_) return {ec_, MetaGetResult{}};
        return {ec_, std::move(result_)};
    }

  private:
    std::error_code ec_;
    MetaGetResult result_;
};

/// Stores, delete, touch, flush on one server: void(error_code, Status).
class StatusCollector {
  public:
    void on_value(std::uint32_t, std::uint32_t, const ValueView&) {}
    void on_stat(std::uint32_t, std::string_view, std::string_view) {}
    void on_complete(std::uint32_t, const Completion& c) {
        ec_ = c.ec;
        status_ = c.status;
    }
    std::tuple<std::error_code, Status> result() { return {ec_, status_}; }

  private:
    std::error_code ec_;
    Status status_ = Status::ok;
};

/// A multi-key write: part i is key i's write. void(error_code, MultiWriteResult); the error
/// is set only when every key failed (with the first key's error), as a multi-get's is.
class MultiWriteCollector {
  public:
    explicit MultiWriteCollector(std::size_t keys) { result_.results.resize(keys); }
    void on_value(std::uint32_t, std::uint32_t, const ValueView&) {}
    void on_stat(std::uint32_t, std::string_view, std::string_view) {}
    void on_complete(std::uint32_t part, const Completion& c) {
        // Each part completes once, on one connection's strand; parts write disjoint slots.
        result_.results[part] = WriteResult{c.ec, c.ec ? Status::ok : c.status};
    }
    std::tuple<std::error_code, MultiWriteResult> result() {
        std::error_code ec;
        if (!result_.results.empty() && result_.errors() == result_.results.size())
            ec = result_.results.front().error;
        return {ec, std::move(result_)};
    }

  private:
    MultiWriteResult result_;
};

/// incr / decr: void(error_code, std::optional<std::uint64_t>); empty when the key is missing.
class CounterCollector {
  public:
    void on_value(std::uint32_t, std::uint32_t, const ValueView&) {}
    void on_stat(std::uint32_t, std::string_view, std::string_view) {}
    void on_complete(std::uint32_t, const Completion& c) {
        ec_ = c.ec;
        if (!ec_ && c.status != Status::not_found) value_ = c.number;
    }
    std::tuple<std::error_code, std::optional<std::uint64_t>> result() { return {ec_, value_}; }

  private:
    std::error_code ec_;
    std::optional<std::uint64_t> value_;
};

/// The key bookkeeping of a multi-get: the caller's keys grouped into parts (one or more per
/// server), and each reply matched back to the key it answers. Shared by the owning and the
/// view multi-get collectors.
class MultiGetPlan {
  public:
    static constexpr std::uint32_t no_key = 0xffffffffu;

    /// Copies `keys` (ASCII replies name keys, so they must outlive the call) into one block.
    explicit MultiGetPlan(std::span<const std::string_view> keys);
    MultiGetPlan(const MultiGetPlan&) = delete;
    MultiGetPlan& operator=(const MultiGetPlan&) = delete;

    /// `n` indices of scratch space, zeroed, that live as long as the plan (for the caller's
    /// server_of table).
    std::span<std::uint32_t> scratch(std::size_t n);

    /// Plans the parts (once): `server_of[i]` is the server of keys[i]; a part holds at most
    /// `max_part_bytes` of key bytes, counting `key_overhead` more for each key (the key
    /// prefix the core adds on the wire). Returns the number of parts.
    std::uint32_t plan(std::span<const std::uint32_t> server_of, std::size_t max_part_bytes,
                       std::size_t key_overhead = 0);

    std::uint32_t part_count() const noexcept {
        return static_cast<std::uint32_t>(part_server_.size());
    }
    std::uint32_t part_server(std::uint32_t part) const noexcept { return part_server_[part]; }
    /// The keys of a part, in the order they are sent.
    std::span<const std::string_view> part_keys(std::uint32_t part) const noexcept {
        return {grouped_keys_ + part_begin_[part], part_begin_[part + 1] - part_begin_[part]};
    }
    std::span<const std::string_view> keys() const noexcept { return keys_; }

    /// The index (in the caller's key list) of the key a value of `part` answers: by
    /// `position` when the protocol gives it, else by the reply's key. no_key for a key the
    /// part did not ask for.
    std::uint32_t locate(std::uint32_t part, std::uint32_t position, std::string_view key) {
        const std::uint32_t i = locate_in_order(part, position, key);
        return i == not_in_order ? find_in_part(part, key) : i;
    }

    void on_stat(std::uint32_t, std::string_view, std::string_view) {}
    void on_complete(std::uint32_t part, const Completion& c) { part_error_[part] = c.ec; }
    /// A key of `part` failed alone (Operation::on_key_error). Rare (routes only): its table
    /// is made at the first such error.
    void on_key_error(std::uint32_t part, std::uint32_t position, std::error_code ec);

    /// Why each key went unanswered: empty when every part was answered, else one entry per
    /// key ({} for the answered ones). `ec` is the first part's error when every part failed
    /// (the operation's error), {} otherwise.
    std::vector<std::error_code> key_errors(std::error_code& ec) const;

  protected:
    /// locate() without its out-of-line search: not_in_order when the key is not where the
    /// in-order path looks, for the caller to search (find_in_part) off its own fast path.
    static constexpr std::uint32_t not_in_order = no_key - 1;
    std::uint32_t locate_in_order(std::uint32_t part, std::uint32_t position,
                                  std::string_view key) {
        const std::uint32_t begin = part_begin_[part];
        const std::uint32_t size = part_begin_[part + 1] - begin;
        if (position != Operation::unknown_position)
            return position < size ? key_index(begin + position) : no_key;
        // Text protocol: replies come in request order (hits only), so the key after the last
        // match is nearly always the one; anything else is searched for out of line.
        const std::uint32_t next = cursor_[part];
        if (next < size && same_key(grouped_keys_[begin + next], key)) [[likely]] {
            cursor_[part] = next + 1;
            return key_index(begin + next);
        }
        return not_in_order;
    }
    std::uint32_t find_in_part(std::uint32_t part, std::string_view key);

    /// Where a part's keys start among all keys grouped by part.
    std::uint32_t part_begin(std::uint32_t part) const noexcept { return part_begin_[part]; }
    /// Where the tables of the plan (and of the collectors built on it) live. Allocate only
    /// while initiating: it is not thread-safe.
    std::pmr::memory_resource* pool() noexcept { return &pool_; }

  private:
    /// The caller's index of the key at grouped position j.
    std::uint32_t key_index(std::uint32_t j) const noexcept {
        return part_index_.empty() ? j : part_index_[j];
    }
    /// Key equality, inline for the few words a key is (memcmp is a call per reply).
    static bool same_key(std::string_view a, std::string_view b) noexcept {
        const std::size_t n = a.size();
        if (n != b.size()) return false;
        const char* x = a.data();
        const char* y = b.data();
        if (n < 8) {
            for (std::size_t i = 0; i < n; ++i)
                if (x[i] != y[i]) return false;
            return true;
        }
        std::uint64_t u, v;
        for (std::size_t i = 0; i + 8 < n; i += 8) {
            std::memcpy(&u, x + i, 8);
            std::memcpy(&v, y + i, 8);
            if (u != v) return false;
        }
        std::memcpy(&u, x + n - 8, 8);  // the last (overlapping) eight bytes
        std::memcpy(&v, y + n - 8, 8);
        return u == v;
    }

    // Every table is sized once and comes from a monotonic pool whose first block is an 8 KiB
    // block of the request memory (request_memory.hpp), recycled per thread and across
    // threads: a multi-get of up to ~100 short keys allocates nothing for its bookkeeping in
    // steady state, also when made on one thread and completed on another, and a larger one
    // a few blocks more.
    struct Block {
        Block() : bytes(static_cast<std::byte*>(allocate_request_memory(large_request_block))) {}
        ~Block() { deallocate_request_memory(bytes, large_request_block); }
        Block(const Block&) = delete;
        Block& operator=(const Block&) = delete;
        std::byte* bytes;
    };
    Block block_;  // first member: released last, after every table
    // Beyond the first block, the pool grows from the default resource.
    std::pmr::monotonic_buffer_resource pool_{block_.bytes, large_request_block};
    std::pmr::vector<std::string_view> keys_{&pool_};  // caller's order (own copies)
    // The keys grouped by part: keys_ itself when the caller's keys already come grouped by
    // server (one server, say), else part_keys_, with part_keys_[j] == keys_[part_index_[j]].
    const std::string_view* grouped_keys_ = nullptr;
    std::pmr::vector<std::string_view> part_keys_{&pool_};
    std::pmr::vector<std::uint32_t> part_index_{&pool_};
    std::pmr::vector<std::uint32_t> part_begin_{&pool_};  // part p: [begin[p], begin[p+1])
    std::pmr::vector<std::uint32_t> part_server_{&pool_};
    std::pmr::vector<std::uint32_t> cursor_{&pool_};  // per part: where the next reply matches
    std::pmr::vector<std::error_code> part_error_{&pool_};
    // Errors of single keys, by grouped position (on_key_error); null until the first.
    std::unique_ptr<std::error_code[]> key_error_;
    std::mutex key_error_mutex_;  // parts may complete on different threads
};

/// Multi-get: void(error_code, MultiGetResult), the values in the caller's key order.
///
/// The values are copied into one SharedBuffer the result keeps, not into a Value each: at the
/// first hit (whichever part it comes from) a block of `keys × that hit's size` bytes is
/// allocated (at least min_bytes_per_key a key, at most first_block_cap in all) and cut into
/// one region per part, in proportion to its keys. A part copies its hits into its own region
/// without synchronisation (parts on different connections run concurrently); a hit that
/// does not fit (values of different sizes) goes to a block of the part's own, chained to the
/// first when the result is built. With values of one size, a call of any key count makes two
/// allocations: the table of values and the buffer, and the buffer is recycled (request
/// memory, no malloc once warm) when it fits 8 KiB, a hundred values of 64 bytes say.
class MultiGetCollector : public MultiGetPlan {
  public:
    /// Per key, at least this much of the first block (small values of varying sizes).
    static constexpr std::size_t min_bytes_per_key = 16;
    /// The first block's size at most (beyond it, blocks double per part).
    static constexpr std::size_t first_block_cap = std::size_t{1} << 20;

    explicit MultiGetCollector(std::span<const std::string_view> keys)
        : MultiGetPlan(keys), values_(keys.size()) {}
    MultiGetCollector(const MultiGetCollector&) = delete;
    MultiGetCollector& operator=(const MultiGetCollector&) = delete;
    ~MultiGetCollector() { release_blocks(); }

    std::uint32_t plan(std::span<const std::uint32_t> server_of, std::size_t max_part_bytes,
                       std::size_t key_overhead = 0) {
        const std::uint32_t parts = MultiGetPlan::plan(server_of, max_part_bytes, key_overhead);
        regions_.assign(parts, Region{});  // (from the pool: plan() runs while initiating)
        return parts;
    }

    /// The usual hit (in request order, a new key, up to 64 bytes that fit the part's region)
    /// is stored inline; anything else goes to a function of its own, called last, so that
    /// this path saves no registers around calls it does not make.
    void on_value(std::uint32_t part, std::uint32_t position, const ValueView& v) {
        const std::uint32_t i = locate_in_order(part, position, v.key);
        if (i >= not_in_order) [[unlikely]] {
            if (i == not_in_order) search_and_store(part, v);
            return;
        }
        // The first value of a key wins (a retried part may deliver it again).
        auto& slot = values_[i];
        if (slot) return;
        Region& r = regions_[part];
        const std::size_t n = v.data.size();
        // (A part's region is empty, both ends null, until its first hit: any value but an
        // empty one takes store(), which makes the region.)
        if (n > 64 || static_cast<std::size_t>(r.end - r.next) < n) [[unlikely]]
            return store(part, i, v);
        copy_small(r.next, v.data.data(), n);
        slot.emplace(ValueRef{std::string_view(r.next, n), v.flags, v.cas});
        r.next += n;
    }
    std::tuple<std::error_code, MultiGetResult> result() {
        std::error_code ec;
        MultiGetResult r;
        r.errors = key_errors(ec);
        r.values = std::move(values_);
        r.storage = SharedBuffer(chain_blocks());
        return {ec, std::move(r)};
    }

  private:
    /// Where a part copies its next hit: [next, end) of the first block or of its own.
    struct Region {
        char* next = nullptr;
        char* end = nullptr;
        SharedBuffer::Block* own = nullptr;  // the part's own blocks, newest first
    };
    /// Copies n <= 64 bytes inline: the usual value is small, and a call to memcpy costs
    /// on_value the registers it saves around every call, more than the copy itself.
    static void copy_small(char* to, const char* from, std::size_t n) noexcept {
        if (n >= 16) {  // 16-byte moves, the last one overlapping
            for (std::size_t i = 0; i + 16 < n; i += 16)
                std::memcpy(to + i, from + i, 16);
            std::memcpy(to + n - 16, from + n - 16, 16);
        } else if (n >= 8) {
            std::memcpy(to, from, 8);
            std::memcpy(to + n - 8, from + n - 8, 8);
        } else if (n >= 4) {
            std::memcpy(to, from, 4);
            std::memcpy(to + n - 4, from + n - 4, 4);
        } else {
            for (std::size_t i = 0; i < n; ++i)
                to[i] = from[i];
        }
    }
    /// Stores keys[i]'s value, whatever its size and wherever it fits (out of line).
    void store(std::uint32_t part, std::uint32_t i, const ValueView& v);
    /// A hit out of request order: finds its key, then stores it (out of line).
    void search_and_store(std::uint32_t part, const ValueView& v);
    /// Makes room for `n` more bytes in the part's region (out of line: once per part, and
    /// again only when hits differ in size).
    void make_room(std::uint32_t part, std::size_t n);
    /// Links every block to the first (nullptr when there was no hit); the caller owns them.
    SharedBuffer::Block* chain_blocks() noexcept;
    void release_blocks() noexcept { SharedBuffer::free_chain(chain_blocks()); }

    std::vector<std::optional<ValueRef>> values_;
    std::pmr::vector<Region> regions_{pool()};
    std::atomic<SharedBuffer::Block*> first_{nullptr};
    std::size_t bytes_per_key_ = 0;  // of the first block; written before first_ is published
    std::mutex first_mutex_;
};

/// Zero-copy multi-get: void(error_code, MultiGetViewResult). Each hit goes to
/// `on_hit(std::size_t index, const ValueView&)` as it is read, once per key.
template <class OnHit>
class MultiGetViewCollector : public MultiGetPlan {
  public:
    MultiGetViewCollector(std::span<const std::string_view> keys, OnHit on_hit)
        : MultiGetPlan(keys), on_hit_(std::move(on_hit)), seen_(keys.size(), 0, pool()) {}

    /// Parts on different connections may call this concurrently: only the key's own byte
    /// and the part's own counter are written.
    void on_value(std::uint32_t part, std::uint32_t position, const ValueView& v) {
        const std::uint32_t i = locate(part, position, v.key);
        if (i == no_key || seen_[i]) return;  // a retried part may deliver a key again
        seen_[i] = 1;
        ++part_hits_[part];
        on_hit_(std::size_t{i}, v);
    }
    std::uint32_t plan(std::span<const std::uint32_t> server_of, std::size_t max_part_bytes,
                       std::size_t key_overhead = 0) {
        const std::uint32_t parts = MultiGetPlan::plan(server_of, max_part_bytes, key_overhead);
        part_hits_.assign(parts, 0);  // (from the pool: plan() runs while initiating)
        return parts;
    }
    std::tuple<std::error_code, MultiGetViewResult> result() {
        std::error_code ec;
        MultiGetViewResult r;
        r.errors = key_errors(ec);
        for (auto h : part_hits_)
            r.hits += h;
        return {ec, std::move(r)};
    }

  private:
    OnHit on_hit_;
    std::pmr::vector<std::uint8_t> seen_;  // per key: its value was handed over
    std::pmr::vector<std::size_t> part_hits_{pool()};
};

/// A request to every server (stats, version, flush_all, delete_all): one part per server.
template <class T>
class NodeCollector {
  public:
    explicit NodeCollector(std::vector<std::string> servers) {
        results_.resize(servers.size());
        for (std::size_t i = 0; i < servers.size(); ++i)
            results_[i].server = std::move(servers[i]);
    }
    void on_value(std::uint32_t, std::uint32_t, const ValueView&) {}
    void on_stat(std::uint32_t part, std::string_view name, std::string_view value) {
        if constexpr (std::is_same_v<T, StatList>)
            results_[part].value.emplace_back(std::string(name), std::string(value));
    }
    void on_complete(std::uint32_t part, const Completion& c) {
        results_[part].error = c.ec;
        if constexpr (std::is_same_v<T, std::string>) results_[part].value = std::string(c.text);
        if constexpr (std::is_same_v<T, Status>) results_[part].value = c.status;
    }
    /// The whole request was refused before sending (bad input): result() reports `ec` even
    /// when there is no server.
    void refuse(std::error_code ec) { refused_ = ec; }
    /// The error is set only when every server failed (then it is the first server's error),
    /// or when the request was refused.
    std::tuple<std::error_code, std::vector<NodeResult<T>>> result() {
        if (refused_) return {refused_, std::move(results_)};
        std::error_code ec;
        bool all_failed = !results_.empty();
        for (auto& r : results_)
            all_failed = all_failed && r.error;
        if (all_failed) ec = results_.front().error;
        return {ec, std::move(results_)};
    }

  private:
    std::vector<NodeResult<T>> results_;
    std::error_code refused_;
};

}  // namespace folsom::detail
