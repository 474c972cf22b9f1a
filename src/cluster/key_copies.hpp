// KeyCopies: a request's keys copied for an operation that stands in for the caller's while the
// request is in flight, and may send it again after the caller's views have died: a RetryShim
// retries a lost request, a PrefixShim sends the keys with the core's prefix in front. The
// copies live in one block: inline up to InlineBytes (one key, the common case), else on the
// heap.
#pragma once

#include <cstddef>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace folsom::detail {

template <std::size_t InlineBytes>
class KeyCopies {
  public:
    KeyCopies() = default;
    KeyCopies(const KeyCopies&) = delete;
    KeyCopies& operator=(const KeyCopies&) = delete;

    /// Makes room for `bytes` of copies (prefixes included). Once, before the first copy.
    void reserve(std::size_t bytes) {
        next_ = bytes <= InlineBytes ? inline_ : (heap_ = std::make_unique<char[]>(bytes)).get();
    }

    /// `prefix` followed by `key`, copied into the room.
    std::string_view copy(std::string_view key, std::string_view prefix = {}) noexcept {
        char* const start = next_;
        if (!prefix.empty()) std::memcpy(next_, prefix.data(), prefix.size());
        next_ += prefix.size();
        if (!key.empty()) std::memcpy(next_, key.data(), key.size());
        next_ += key.size();
        return {start, prefix.size() + key.size()};
    }

    /// The list of copies of `keys`, each behind `prefix`.
    std::span<const std::string_view> copy_list(std::span<const std::string_view> keys,
                                                std::string_view prefix = {}) {
        if (keys.size() == 1) return list_of(copy(keys.front(), prefix));
        many_.reserve(keys.size());
        for (std::string_view k : keys)
            many_.push_back(copy(k, prefix));
        return many_;
    }

    /// A list of the one key `copied` (a view copy() returned).
    std::span<const std::string_view> list_of(std::string_view copied) noexcept {
        single_ = copied;
        return {&single_, 1};
    }

  private:
    char* next_ = nullptr;
    std::string_view single_;
    std::vector<std::string_view> many_;
    std::unique_ptr<char[]> heap_;
    char inline_[InlineBytes];
};

}  // namespace folsom::detail
