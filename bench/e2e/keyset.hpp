// The keys and the value every case of the end-to-end benchmark works on: `count` keys
// "key:000000".."key:<count-1>" (10 bytes each), every one holding the same `value_size`-byte
// value. Views and C arrays of the keys are prepared once, so no case builds a key while timed.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::bench {

struct KeySet {
    KeySet(std::size_t count, std::size_t value_size) {
        storage.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
            char buf[32];
            std::snprintf(buf, sizeof buf, "key:%06zu", i);
            storage.emplace_back(buf);
        }
        for (const auto& k : storage) {
            views.emplace_back(k);
            c_keys.push_back(k.data());
            c_lengths.push_back(k.size());
        }
        value.resize(value_size);
        for (std::size_t j = 0; j < value_size; ++j)
            value[j] = static_cast<char>('a' + j % 26);
    }

    std::size_t size() const noexcept { return storage.size(); }
    /// Start of the i-th run of `n` consecutive keys (wrapping over the key set).
    std::size_t run_start(std::size_t i, std::size_t n) const noexcept {
        return (i % (size() / n)) * n;
    }

    std::vector<std::string> storage;
    std::vector<std::string_view> views;
    std::vector<const char*> c_keys;  // for libmemcached
    std::vector<std::size_t> c_lengths;
    std::string value;
};

}  // namespace folsom::bench
