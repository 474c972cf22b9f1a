// The routes that pick one child per request: PrefixSelectorRoute (the longest matching key
// prefix), OperationSelectorRoute (by operation) and HashRoute (by a hash of the key). A
// request nothing selects gets ErrorRoute's reply.
#pragma once

#include "routing/route.hpp"

#include <array>
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

class HashRoute final : public Route {
  public:
    enum class Function : std::uint8_t { crc32, md5 };
    HashRoute(RouteCounters& counters, std::vector<Route*> children, Function f, std::string salt);

    void send(detail::Operation& op, std::uint32_t part, const detail::Request& r) override {
        count_request();
        children_[pick(r.key)]->send(op, part, r);
    }
    std::size_t server_for(std::string_view key, detail::OpCode code) const noexcept override {
        return children_[pick(key)]->server_for(key, code);
    }

  private:
    std::size_t pick(std::string_view key) const noexcept;

    const std::vector<Route*> children_;
    const Function function_;
    const std::string salt_;
};

}  // namespace folsom::routing
