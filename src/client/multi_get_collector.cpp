#include "folsom/detail/collectors.hpp"

#include <algorithm>
#include <cstring>

namespace folsom::detail {

MultiGetPlan::MultiGetPlan(std::span<const std::string_view> keys) {
    std::size_t total = 0;
    for (auto k : keys)
        total += k.size();
    // All keys back to back in one block of the pool (freed with it).
    char* out = static_cast<char*>(pool_.allocate(total == 0 ? 1 : total, 1));
    keys_.reserve(keys.size());
    for (auto k : keys) {
        if (!k.empty()) std::memcpy(out, k.data(), k.size());
        keys_.emplace_back(out, k.size());
        out += k.size();
    }
}

std::span<std::uint32_t> MultiGetPlan::scratch(std::size_t n) {
    auto* p = static_cast<std::uint32_t*>(pool_.allocate(
        std::max<std::size_t>(n, 1) * sizeof(std::uint32_t), alignof(std::uint32_t)));
    std::fill_n(p, n, 0u);
    return {p, n};
}

std::uint32_t MultiGetPlan::plan(std::span<const std::uint32_t> server_of,
                                 std::size_t max_part_bytes, std::size_t key_overhead) {
    const auto n = static_cast<std::uint32_t>(keys_.size());
    // One pass: how many servers, how many keys and bytes each, and whether the keys already
    // come grouped by server (always so with one server).
    std::uint32_t servers = 0;
    bool grouped = true;
    for (std::uint32_t i = 0; i < n; ++i) {
        grouped = grouped && (i == 0 || server_of[i] >= server_of[i - 1]);
        servers = std::max(servers, server_of[i] + 1);
    }
    std::pmr::vector<std::uint32_t> start(servers + 1, 0, &pool_);
    std::pmr::vector<std::size_t> bytes(servers, 0, &pool_);
    for (std::uint32_t i = 0; i < n; ++i) {
        ++start[server_of[i] + 1];
        bytes[server_of[i]] += keys_[i].size() + 1 + key_overhead;
    }
    for (std::uint32_t s = 0; s < servers; ++s)
        start[s + 1] += start[s];

    if (grouped) {
        // The counting sort below would be the identity: the parts are runs of keys_ itself.
        grouped_keys_ = keys_.data();
    } else {
        // Counting sort of key indices by server keeps each server's keys in caller order.
        part_index_.resize(n);
        std::pmr::vector<std::uint32_t> fill(start.begin(), start.end() - 1, &pool_);
        for (std::uint32_t i = 0; i < n; ++i)
            part_index_[fill[server_of[i]]++] = i;
        part_keys_.resize(n);
        for (std::uint32_t j = 0; j < n; ++j)
            part_keys_[j] = keys_[part_index_[j]];
        grouped_keys_ = part_keys_.data();
    }

    // Cut each server's run into parts of at most max_part_bytes of keys (a server whose keys
    // fit is one part, without looking at its keys again): counted first, so that the part
    // tables are sized once.
    auto cut = [&](auto&& part_starts_at) {
        for (std::uint32_t s = 0; s < servers; ++s) {
            if (start[s] == start[s + 1]) continue;
            if (bytes[s] <= max_part_bytes) {
                part_starts_at(start[s], s);
                continue;
            }
            std::size_t run = 0;
            for (std::uint32_t j = start[s]; j < start[s + 1]; ++j) {
                const std::size_t k = grouped_keys_[j].size() + 1 + key_overhead;
                if (j == start[s] || run + k > max_part_bytes) {
                    part_starts_at(j, s);
                    run = 0;
                }
                run += k;
            }
        }
    };
    std::uint32_t parts = 0;
    cut([&parts](std::uint32_t, std::uint32_t) { ++parts; });
    part_begin_.reserve(parts + 1);
    part_server_.reserve(parts);
    cut([this](std::uint32_t j, std::uint32_t s) {
        part_begin_.push_back(j);
        part_server_.push_back(s);
    });
    part_begin_.push_back(n);
    cursor_.assign(parts, 0);
    part_error_.assign(parts, std::error_code{});
    return part_count();
}

std::uint32_t MultiGetPlan::find_in_part(std::uint32_t part, std::string_view key) {
    const std::uint32_t begin = part_begin_[part];
    const std::uint32_t size = part_begin_[part + 1] - begin;
    // Not where the in-order fast path looked: scan on from there, wrapping around once, for
    // servers (and proxies) that reorder.
    std::uint32_t p = cursor_[part] >= size ? 0 : cursor_[part];
    for (std::uint32_t step = 0; step < size; ++step) {
        if (same_key(grouped_keys_[begin + p], key)) {
            cursor_[part] = p + 1;
            return key_index(begin + p);
        }
        if (++p == size) p = 0;
    }
    return no_key;  // not asked for
}

void MultiGetPlan::on_key_error(std::uint32_t part, std::uint32_t position, std::error_code ec) {
    const std::uint32_t begin = part_begin_[part];
    if (position >= part_begin_[part + 1] - begin) return;
    std::lock_guard<std::mutex> lock(key_error_mutex_);
    if (!key_error_) key_error_ = std::make_unique<std::error_code[]>(keys_.size());
    key_error_[begin + position] = ec;
}

std::vector<std::error_code> MultiGetPlan::key_errors(std::error_code& ec) const {
    std::vector<std::error_code> errors;
    std::error_code first;
    bool all_failed = !part_error_.empty();
    bool any_failed = key_error_ != nullptr;
    for (const auto& e : part_error_) {
        all_failed = all_failed && e;
        if (e && !first) first = e;
        any_failed = any_failed || e;
    }
    ec = all_failed ? first : std::error_code{};
    if (!any_failed) return errors;
    errors.assign(keys_.size(), std::error_code{});
    for (std::uint32_t p = 0; p < part_count(); ++p) {
        for (std::uint32_t j = part_begin_[p]; j < part_begin_[p + 1]; ++j) {
            if (part_error_[p])
                errors[key_index(j)] = part_error_[p];
            else if (key_error_ && key_error_[j])
                errors[key_index(j)] = key_error_[j];
        }
    }
    return errors;
}

void MultiGetCollector::store(std::uint32_t part, std::uint32_t i, const ValueView& v) {
    auto& slot = values_[i];
    if (slot) return;
    Region& r = regions_[part];
    const std::size_t n = v.data.size();
    if (static_cast<std::size_t>(r.end - r.next) < n || !r.next) make_room(part, n);
    if (n != 0) std::memcpy(r.next, v.data.data(), n);
    slot.emplace(ValueRef{std::string_view(r.next, n), v.flags, v.cas});
    r.next += n;
}

void MultiGetCollector::search_and_store(std::uint32_t part, const ValueView& v) {
    const std::uint32_t i = find_in_part(part, v.key);
    if (i != no_key) store(part, i, v);
}

void MultiGetCollector::make_room(std::uint32_t part, std::size_t n) {
    Region& r = regions_[part];
    if (!r.next) {
        // The part's first hit: its region of the first block, which the first hit of the
        // whole call allocates, sized from that hit.
        SharedBuffer::Block* first = first_.load(std::memory_order_acquire);
        if (!first) {
            std::lock_guard<std::mutex> lock(first_mutex_);
            first = first_.load(std::memory_order_relaxed);
            if (!first) {
                const std::size_t keys = std::max<std::size_t>(this->keys().size(), 1);
                bytes_per_key_ = std::min(std::max(n, min_bytes_per_key), first_block_cap / keys);
                first = SharedBuffer::allocate(bytes_per_key_ * keys);
                first_.store(first, std::memory_order_release);
            }
        }
        const std::size_t begin = std::size_t{part_begin(part)} * bytes_per_key_;
        const std::size_t size = part_keys(part).size() * bytes_per_key_;
        r.next = first->bytes() + begin;
        r.end = r.next + size;
        if (size >= n) return;
    }
    // Out of room: a block of the part's own, twice the last (or the region) at least.
    const std::size_t last =
        r.own ? r.own->capacity : part_keys(part).size() * std::max(bytes_per_key_, std::size_t{1});
    SharedBuffer::Block* b = SharedBuffer::allocate(std::max({n, 2 * last, std::size_t{256}}));
    b->next = r.own;
    r.own = b;
    r.next = b->bytes();
    r.end = r.next + b->capacity;
}

SharedBuffer::Block* MultiGetCollector::chain_blocks() noexcept {
    SharedBuffer::Block* first = first_.exchange(nullptr, std::memory_order_acquire);
    for (Region& r : regions_) {
        SharedBuffer::Block* own = std::exchange(r.own, nullptr);
        while (own) {  // (first exists: a part's own blocks come after its region)
            SharedBuffer::Block* next = own->next;
            own->next = first->next;
            first->next = own;
            own = next;
        }
        r.next = r.end = nullptr;
    }
    return first;
}

}  // namespace folsom::detail
