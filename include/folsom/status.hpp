/// @file
/// Status: the outcome of an operation that completed without error.
///
/// Mirrors Folsom's MemcacheStatus. A get miss is not a Status: it is an empty optional.
///
/// Thread-safety: plain values. Lifetime: to_string() returns a view of a static string, valid
/// forever. Errors: a Status is never an error; failures are std::error_codes (error.hpp).
#pragma once

#include <cstdint>
#include <string_view>

namespace folsom {

/// How an operation ended when it did not fail (memcached's reply word).
enum class Status : std::uint8_t {
    ok,          ///< OK (flush_all, verbosity), or a successful arithmetic/get reply
    stored,      ///< STORED
    not_stored,  ///< NOT_STORED: add on an existing key, replace/append/prepend on a missing one
    exists,      ///< EXISTS: cas mismatch
    not_found,   ///< NOT_FOUND
    deleted,     ///< DELETED
    touched,     ///< TOUCHED
    value_too_large,  ///< SERVER_ERROR object too large for cache
    out_of_memory,    ///< SERVER_ERROR out of memory storing object
    /// A quiet write over the ascii protocol (noreply): it was written to the server, which
    /// never answers one, so its outcome is unknown. Only QuietClient writes over ascii end
    /// so; over meta and binary they end with their true outcome (quiet_client.hpp).
    sent,
};

/// The protocol's word for a status ("STORED", "NOT_FOUND", ...), as the command line prints.
constexpr std::string_view to_string(Status s) noexcept {
    switch (s) {
        case Status::ok:
            return "OK";
        case Status::stored:
            return "STORED";
        case Status::not_stored:
            return "NOT_STORED";
        case Status::exists:
            return "EXISTS";
        case Status::not_found:
            return "NOT_FOUND";
        case Status::deleted:
            return "DELETED";
        case Status::touched:
            return "TOUCHED";
        case Status::value_too_large:
            return "VALUE_TOO_LARGE";
        case Status::out_of_memory:
            return "OUT_OF_MEMORY";
        case Status::sent:
            return "SENT";
    }
    return "UNKNOWN";
}

}  // namespace folsom
