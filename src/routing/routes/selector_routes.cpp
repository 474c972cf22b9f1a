#include "routing/routes/selector_routes.hpp"

#include "cluster/md5.hpp"

#include <algorithm>
#include <cstring>
#include <zlib.h>

namespace folsom::routing {

PrefixSelectorRoute::PrefixSelectorRoute(RouteCounters& counters,
                                         std::vector<std::pair<std::string, Route*>> policies,
                                         Route* wildcard, Route& no_match)
    : Route(counters), policies_(std::move(policies)), wildcard_(wildcard ? wildcard : &no_match) {
    std::stable_sort(policies_.begin(), policies_.end(),
                     [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

OperationSelectorRoute::OperationSelectorRoute(
    RouteCounters& counters, const std::vector<std::pair<std::string, Route*>>& policies,
    Route* default_policy, Route& no_match)
    : Route(counters) {
    using detail::OpCode;
    by_code_.fill(default_policy ? default_policy : &no_match);
    auto set = [&](OpCode c, Route* r) { by_code_[static_cast<std::size_t>(c)] = r; };
    for (const auto& [name, child] : policies) {
        if (name == "get") {
            set(OpCode::get, child);
            set(OpCode::meta_get, child);  // mg is a get with flags
        } else if (name == "gets") {
            set(OpCode::gets, child);
        } else if (name == "gat") {
            set(OpCode::gat, child);
        } else if (name == "gats") {
            set(OpCode::gats, child);
        } else if (name == "set") {
            set(OpCode::set, child);
            set(OpCode::meta_set, child);
        } else if (name == "add") {
            set(OpCode::add, child);
        } else if (name == "replace") {
            set(OpCode::replace, child);
        } else if (name == "append") {
            set(OpCode::append, child);
        } else if (name == "prepend") {
            set(OpCode::prepend, child);
        } else if (name == "cas") {
            set(OpCode::cas, child);
        } else if (name == "delete") {
            set(OpCode::del, child);
            set(OpCode::meta_delete, child);
        } else if (name == "incr") {
            set(OpCode::incr, child);
        } else if (name == "decr") {
            set(OpCode::decr, child);
        } else if (name == "touch") {
            set(OpCode::touch, child);
        }
    }
}

HashRoute::HashRoute(RouteCounters& counters, std::vector<Route*> children, Function f,
                     std::string salt)
    : Route(counters), children_(std::move(children)), function_(f), salt_(std::move(salt)) {}

std::size_t HashRoute::pick(std::string_view key) const noexcept {
    std::uint32_t h = 0;
    if (function_ == Function::crc32 || key.size() + salt_.size() > 512) {
        // (An over-long key is refused by the pool it reaches; any child will do for it.)
        uLong c =
            crc32(0L, reinterpret_cast<const Bytef*>(key.data()), static_cast<uInt>(key.size()));
        if (!salt_.empty())
            c = crc32(c, reinterpret_cast<const Bytef*>(salt_.data()),
                      static_cast<uInt>(salt_.size()));
        h = static_cast<std::uint32_t>(c);
    } else {
        // key + salt, on the stack: keys are at most 250 bytes and salts 256 (checked at load).
        char buf[512];
        std::memcpy(buf, key.data(), key.size());
        std::memcpy(buf + key.size(), salt_.data(), salt_.size());
        h = cluster::md5_word(cluster::md5(std::string_view(buf, key.size() + salt_.size())), 0);
    }
    return h % children_.size();
}

}  // namespace folsom::routing
