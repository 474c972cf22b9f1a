// Names of the observability vocabulary (metrics.hpp, tracing.hpp): the labels metrics carry
// and the names spans get.
#include "folsom/metrics.hpp"

#include "folsom/detail/async_op.hpp"
#include "folsom/detail/observe.hpp"
#include "folsom/error.hpp"

#include <array>

namespace folsom {

std::string_view to_string(MetricOp op) noexcept {
    static constexpr std::array<std::string_view, metric_op_count> names = {
        "get",     "gets",     "gat",       "gats",       "set",     "add",
        "replace", "append",   "prepend",   "cas",        "delete",  "incr",
        "decr",    "touch",    "flush_all", "stats",      "version", "verbosity",
        "noop",    "meta_get", "meta_set",  "meta_delete"};
    const auto i = static_cast<std::size_t>(op);
    return i < names.size() ? names[i] : std::string_view("unknown");
}

std::string_view to_string(Outcome o) noexcept {
    static constexpr std::array<std::string_view, outcome_count> names = {
        "hit",           "miss",      "ok",      "stored",  "not_stored",
        "exists",        "not_found", "deleted", "touched", "value_too_large",
        "out_of_memory", "error",     "sent"};
    const auto i = static_cast<std::size_t>(o);
    return i < names.size() ? names[i] : std::string_view("unknown");
}

std::string_view to_string(ConnectionEvent e) noexcept {
    static constexpr std::array<std::string_view, connection_event_count> names = {
        "connected", "disconnected", "reconnect_attempt", "connect_failed"};
    const auto i = static_cast<std::size_t>(e);
    return i < names.size() ? names[i] : std::string_view("unknown");
}

std::string_view error_label(std::error_code ec) noexcept {
    if (ec.category() != category()) return "other";
    switch (static_cast<errc>(ec.value())) {
        case errc::not_connected:
            return "not_connected";
        case errc::closed:
            return "closed";
        case errc::overloaded:
            return "overloaded";
        case errc::timeout:
            return "timeout";
        case errc::protocol_error:
            return "protocol_error";
        case errc::invalid_key:
            return "invalid_key";
        case errc::value_too_large:
            return "value_too_large";
        case errc::auth_failed:
            return "auth_failed";
        case errc::server_error:
            return "server_error";
        case errc::client_error:
            return "client_error";
        case errc::invalid_argument:
            return "invalid_argument";
        case errc::resolve_failed:
            return "resolve_failed";
        case errc::connect_failed:
            return "connect_failed";
        case errc::tls_error:
            return "tls_error";
        case errc::unsupported:
            return "unsupported";
        case errc::cancelled:
            return "cancelled";
        case errc::connection_lost:
            return "connection_lost";
        case errc::decode_failed:
            return "decode_failed";
        case errc::fill_failed:
            return "fill_failed";
        case errc::no_sasl_mechanism:
            return "no_sasl_mechanism";
    }
    return "other";
}

namespace detail {

std::string_view span_name(const TraceInfo& info) noexcept {
    if (info.multi) {
        switch (info.code) {
            case OpCode::set:
                return "set_multi";
            case OpCode::del:
                return "delete_multi";
            case OpCode::touch:
                return "touch_multi";
            case OpCode::gets:
                return "gets_multi";
            case OpCode::gat:
                return "gat_multi";
            case OpCode::gats:
                return "gats_multi";
            default:
                return "get_multi";
        }
    }
    return to_string(to_metric_op(info.code));
}

}  // namespace detail
}  // namespace folsom
