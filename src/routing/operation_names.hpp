// The operations an OperationSelectorRoute's policies name (mcrouter's names) and the requests
// each selects. The route configuration checks names against this table and the route maps
// them through it, so that an operation is added in one place.
#pragma once

#include "folsom/detail/operation.hpp"

#include <array>
#include <string_view>

namespace folsom::routing {

struct OperationName {
    std::string_view name;
    detail::OpCode code;
    /// The meta command the name selects too (mg is a get with flags, ms a set, md a delete),
    /// or `code` again.
    detail::OpCode meta;
};

inline constexpr std::array<OperationName, 14> operation_names = {{
    {"get", detail::OpCode::get, detail::OpCode::meta_get},
    {"gets", detail::OpCode::gets, detail::OpCode::gets},
    {"gat", detail::OpCode::gat, detail::OpCode::gat},
    {"gats", detail::OpCode::gats, detail::OpCode::gats},
    {"set", detail::OpCode::set, detail::OpCode::meta_set},
    {"add", detail::OpCode::add, detail::OpCode::add},
    {"replace", detail::OpCode::replace, detail::OpCode::replace},
    {"append", detail::OpCode::append, detail::OpCode::append},
    {"prepend", detail::OpCode::prepend, detail::OpCode::prepend},
    {"cas", detail::OpCode::cas, detail::OpCode::cas},
    {"delete", detail::OpCode::del, detail::OpCode::meta_delete},
    {"incr", detail::OpCode::incr, detail::OpCode::incr},
    {"decr", detail::OpCode::decr, detail::OpCode::decr},
    {"touch", detail::OpCode::touch, detail::OpCode::touch},
}};

/// The operation called `name`, or null when there is none.
constexpr const OperationName* find_operation(std::string_view name) noexcept {
    for (const OperationName& op : operation_names)
        if (op.name == name) return &op;
    return nullptr;
}

}  // namespace folsom::routing
