// TlsTerminator: a TLS front for a plain loopback server, as a TLS-only endpoint (an
// ElastiCache configuration endpoint with in-transit encryption) looks to a client. Each TLS
// connection it accepts is relayed, decrypted, to 127.0.0.1:<upstream port>. Runs on a thread
// of its own; stops when destroyed.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl/context.hpp>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

namespace folsom::test {

class TlsTerminator {
  public:
    /// Listens on a free 127.0.0.1 port with the certificate and key (PEM files) given.
    TlsTerminator(std::uint16_t upstream_port, const std::string& cert_file,
                  const std::string& key_file);
    ~TlsTerminator();
    TlsTerminator(const TlsTerminator&) = delete;
    TlsTerminator& operator=(const TlsTerminator&) = delete;

    std::uint16_t port() const noexcept { return port_; }
    /// "127.0.0.1:<port>"
    std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
    /// TLS handshakes that completed (a plain client's attempt is not one).
    std::size_t handshakes() const noexcept { return handshakes_.load(); }

  private:
    void accept();

    const std::uint16_t upstream_;
    asio::io_context io_;
    asio::ssl::context ctx_{asio::ssl::context::tls_server};
    asio::ip::tcp::acceptor acceptor_{io_};
    std::uint16_t port_ = 0;
    std::atomic<std::size_t> handshakes_{0};
    std::thread thread_;
};

}  // namespace folsom::test
