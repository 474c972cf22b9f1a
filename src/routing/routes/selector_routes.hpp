// The routes that pick one child per request: PrefixSelectorRoute (the longest matching key
// prefix), OperationSelectorRoute (by operation) and HashRoute (by a hash of the key, with
// mcrouter's hash functions so that a key reaches the child it reaches through mcrouter). A
// request nothing selects gets ErrorRoute's reply.
#pragma once

#include "routing/route.hpp"

#include <array>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace folsom::routing {

class PrefixSelectorRoute final : public Route {
  public:
    /// `policies`: {prefix, child}; `wildcard` may be null.
    PrefixSelectorRoute(RouteCounters& counters,
                        std::vector<std::pair<std::string, Route*>> policies, Route* wildcard,
                        Route& no_match);

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override {
        count_request();
        select(r.key).send(op, part, r);
    }
    std::size_t server_for(std::string_view key, detail::OpCode code) const noexcept override {
        return select(key).server_for(key, code);
    }

  private:
    Route& select(std::string_view key) const noexcept {
        // Longest first (sorted at load): the first prefix of the key is the longest.
        for (const auto& [prefix, child] : policies_)
            if (key.starts_with(prefix)) return *child;
        return *wildcard_;
    }

    std::vector<std::pair<std::string, Route*>> policies_;
    Route* wildcard_;
};

class OperationSelectorRoute final : public Route {
  public:
    /// `policies`: {mcrouter operation name, child}, names already validated;
    /// `default_policy` may be null.
    OperationSelectorRoute(RouteCounters& counters,
                           const std::vector<std::pair<std::string, Route*>>& policies,
                           Route* default_policy, Route& no_match);

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override {
        count_request();
        by_code_[static_cast<std::size_t>(r.code)]->send(op, part, r);
    }
    std::size_t server_for(std::string_view key, detail::OpCode code) const noexcept override {
        return by_code_[static_cast<std::size_t>(code)]->server_for(key, code);
    }

  private:
    static constexpr std::size_t op_codes =
        static_cast<std::size_t>(detail::OpCode::meta_delete) + 1;
    std::array<Route*, op_codes> by_code_{};
};

/// The hash functions of HashRoute's hash_func: mcrouter's Ch3 (its default), WeightedCh3 and
/// Crc32, bit for bit, and folsom's Md5.
enum class HashFunction : std::uint8_t { ch3, weighted_ch3, crc32, md5 };

/// The child, in [0, n), that HashRoute sends `key` to: the hash of key + salt, as mcrouter's
/// HashSelector computes it. `weights`: WeightedCh3's, one per child (unused otherwise).
std::size_t hash_route_child(HashFunction f, std::string_view key, std::string_view salt,
                             std::size_t n, std::span<const double> weights) noexcept;

class HashRoute final : public Route {
  public:
    using Function = HashFunction;
    /// `weights`: for WeightedCh3, one per child, each in [0, 1] (checked at load).
    HashRoute(RouteCounters& counters, std::vector<Route*> children, Function f, std::string salt,
              std::vector<double> weights = {});

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override {
        count_request();
        children_[pick(r.key)]->send(op, part, r);
    }
    std::size_t server_for(std::string_view key, detail::OpCode code) const noexcept override {
        return children_[pick(key)]->server_for(key, code);
    }

  private:
    std::size_t pick(std::string_view key) const noexcept {
        return hash_route_child(function_, key, salt_, children_.size(), weights_);
    }

    const std::vector<Route*> children_;
    const Function function_;
    const std::string salt_;
    const std::vector<double> weights_;
};

}  // namespace folsom::routing
