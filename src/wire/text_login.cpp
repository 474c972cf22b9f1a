#include "wire/text_login.hpp"

#include "folsom/error.hpp"

#include <cstddef>
#include <string_view>
#include <utility>

namespace folsom::detail {
namespace {

constexpr std::size_t max_credential = 250;

// The key of the login's `set`: a -Y server ignores it. Kept short and unlikely.
constexpr std::string_view login_key = "folsom_login";

bool clean(std::string_view s) noexcept {
    for (unsigned char c : s)
        if (c <= ' ' || c == 0x7f) return false;
    return true;
}

class TextLoginDriver final : public ProtocolDriver {
  public:
    TextLoginDriver(std::unique_ptr<ProtocolDriver> inner, std::string username,
                    std::string password)
        : inner_(std::move(inner)),
          username_(std::move(username)),
          password_(std::move(password)) {}

    std::error_code encode(const Request& r, protocol::OutputBuffer& out,
                           net::Command& cmd) override {
        return inner_->encode(r, out, cmd);
    }
    bool join(const Request& r, protocol::OutputBuffer& out, const net::Command& last,
              net::Command& cmd) override {
        return inner_->join(r, out, last, cmd);
    }
    bool sends_quietly(const Request& r) const noexcept override {
        return inner_->sends_quietly(r);
    }
    DecodeStep decode(std::string_view input, net::CommandQueue& inflight) override {
        return inner_->decode(input, inflight);
    }
    void reset() noexcept override { inner_->reset(); }

    bool handshake_request(protocol::OutputBuffer& out) override {
        logging_in_ = false;
        out.append("version\r\n");
        return true;
    }

    HandshakeStep handshake_reply(std::string_view input, protocol::OutputBuffer& out) override {
        HandshakeStep step;
        const auto eol = input.find("\r\n");
        if (eol == std::string_view::npos) {
            if (input.size() > 1024) {
                step.ec = errc::protocol_error;
                step.message = "text login: reply line too long";
            } else {
                step.needed = input.size() + 1;
            }
            return step;
        }
        const std::string_view line = input.substr(0, eol);
        step.consumed = eol + 2;
        if (!logging_in_) {
            if (line.starts_with("VERSION ")) {
                step.ec = errc::unsupported;
                step.message =
                    "the server does not ask for a text login (start it with -Y <auth file>); "
                    "the credentials were not sent";
                return step;
            }
            if (line != "CLIENT_ERROR unauthenticated") {
                step.ec = errc::protocol_error;
                step.message = "text login: unexpected reply to version";
                return step;
            }
            logging_in_ = true;
            const std::size_t data = username_.size() + 1 + password_.size();
            out.append("set ");
            out.append(login_key);
            out.append(" 0 0 ");
            out.append_decimal(data);
            out.append("\r\n");
            out.append(username_);
            out.append(" ");
            out.append(password_);
            out.append("\r\n");
            return step;
        }
        if (line == "STORED") {
            step.done = true;
            return step;
        }
        if (line.starts_with("CLIENT_ERROR")) {
            step.ec = errc::auth_failed;
            // The server does not say which: memcached answers the same for both.
            step.message = "text login refused for user '" + username_ +
                           "': the server's auth file has no such user, or the password "
                           "differs";
            return step;
        }
        step.ec = errc::protocol_error;
        step.message = "text login: unexpected reply to the login";
        return step;
    }

  private:
    std::unique_ptr<ProtocolDriver> inner_;
    const std::string username_;
    const std::string password_;
    bool logging_in_ = false;  // the credentials went out: the next reply answers them
};

}  // namespace

std::string text_login_refusal(const std::string& username, const std::string& password) {
    if (username.empty() || username.size() > max_credential)
        return "the username must be 1 to 250 bytes long";
    if (!clean(username) || username.find(':') != std::string::npos)
        return "the username must not contain a space, a control character or ':' "
               "(memcached's auth file separates user and password with ':')";
    if (password.empty() || password.size() > max_credential)
        return "the password must be 1 to 250 bytes long";
    if (!clean(password))
        return "the password must not contain a space or a control character (memcached's "
               "text login separates user and password with a space)";
    return {};
}

std::unique_ptr<ProtocolDriver> with_text_login(std::unique_ptr<ProtocolDriver> inner,
                                                std::string username, std::string password) {
    return std::make_unique<TextLoginDriver>(std::move(inner), std::move(username),
                                             std::move(password));
}

}  // namespace folsom::detail
