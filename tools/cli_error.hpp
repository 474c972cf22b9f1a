// CliError: a failure the command line reports as one line on stderr and exit status 2 —
// and the wording of those lines for the library's error codes.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace folsom::cli {

/// Thrown anywhere below main(); main prints "folsom: <what>" and exits with 2.
class CliError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// Context for describing a failed request.
struct ErrorContext {
    std::string_view server;  ///< the server involved ("" when none is)
    std::string_view key;     ///< the key involved ("" when none is)
    std::size_t value_size = 0;
    std::size_t max_value_size = 0;
    int timeout_ms = 0;
    bool sasl = false;  ///< connections log in (--username): errc::unsupported is the login's
    bool binary_keys = false;  ///< --binary-keys: a key is 1 to 186 bytes of any value
};

/// One line (no trailing newline) saying what went wrong, naming the server where one is
/// involved: "cannot connect to 127.0.0.1:11211", "invalid key \"a b\": ...".
std::string describe(std::error_code ec, const ErrorContext& ctx);

/// One line for a client that could not be created (the std::system_error its constructor
/// threw): a protocol this build lacks, a TLS setup failure (unreadable CA, key that does not
/// match the certificate), a --config route configuration the client refused (its
/// RouteConfigError line, "<json path>: <why>"), anything else.
std::string describe_setup_failure(const std::system_error& e, std::string_view protocol_name);

/// `text` made safe for a one-line message: control and non-ASCII bytes as \xNN, and cut to
/// `max` bytes with "..." after.
std::string printable(std::string_view text, std::size_t max = 64);

}  // namespace folsom::cli
