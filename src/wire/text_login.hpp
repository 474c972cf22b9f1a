// Text-protocol authentication (memcached -Y <auth file>, memcached >= 1.5.15): before any
// request, a connection logs in with a `set` whose data is "<username> <password>".
//
// The login runs as the driver's handshake, on every connect and reconnect:
//   1. `version`. A server that asks for a login answers "CLIENT_ERROR unauthenticated"; one
//      that does not answers VERSION, and the connect fails with errc::unsupported, so that the
//      password is never sent to a server that did not ask for it (nor stored there: a server
//      without -Y would store the login's `set` as an item).
//   2. `set` with the credentials (the key, flags and expiry are ignored by a -Y server).
//      STORED: connected. A refusal: errc::auth_failed, and the connection retries with the
//      usual growing backoff, as a refused SASL login does.
// No message names the password.
#pragma once

#include "wire/protocol_driver.hpp"

#include <memory>
#include <string>

namespace folsom::detail {

/// Why `username`/`password` cannot be used for a text login (memcached reads "user pass" and
/// its auth file "user:pass" lines), or "" when they can: each 1..250 bytes, no space or
/// control character, no ':' in the user. Never quotes the password.
std::string text_login_refusal(const std::string& username, const std::string& password);

/// `inner` (an ascii or meta driver) with the text login as its handshake. Every other call
/// goes to `inner` unchanged.
std::unique_ptr<ProtocolDriver> with_text_login(std::unique_ptr<ProtocolDriver> inner,
                                                std::string username, std::string password);

}  // namespace folsom::detail
