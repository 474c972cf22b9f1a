#include "support/tls_terminator.hpp"

#include <asio/connect.hpp>
#include <asio/ssl/stream.hpp>
#include <asio/write.hpp>

#include <array>
#include <memory>

namespace folsom::test {
namespace {

/// One client: TLS on one side, plain TCP to the upstream on the other, bytes copied both
/// ways until either side closes.
class Relay : public std::enable_shared_from_this<Relay> {
  public:
    Relay(asio::ip::tcp::socket client, asio::ssl::context& ctx, std::uint16_t upstream,
          std::atomic<std::size_t>& handshakes)
        : tls_(std::move(client), ctx),
          upstream_(tls_.get_executor()),
          port_(upstream),
          handshakes_(handshakes) {}

    void start() {
        tls_.async_handshake(asio::ssl::stream_base::server,
                             [self = shared_from_this()](const std::error_code& ec) {
                                 if (ec) return self->close();
                                 self->handshakes_.fetch_add(1);
                                 self->connect();
                             });
    }

  private:
    void connect() {
        const asio::ip::tcp::endpoint to(asio::ip::make_address("127.0.0.1"), port_);
        upstream_.async_connect(to, [self = shared_from_this()](const std::error_code& ec) {
            if (ec) return self->close();
            self->from_client();
            self->from_upstream();
        });
    }
    void from_client() {
        tls_.async_read_some(asio::buffer(in_), [self = shared_from_this()](
                                                    const std::error_code& ec, std::size_t n) {
            if (ec) return self->close();
            asio::async_write(self->upstream_, asio::buffer(self->in_.data(), n),
                              [self](const std::error_code& wec, std::size_t) {
                                  if (wec) return self->close();
                                  self->from_client();
                              });
        });
    }
    void from_upstream() {
        upstream_.async_read_some(
            asio::buffer(out_),
            [self = shared_from_this()](const std::error_code& ec, std::size_t n) {
                if (ec) return self->close();
                asio::async_write(self->tls_, asio::buffer(self->out_.data(), n),
                                  [self](const std::error_code& wec, std::size_t) {
                                      if (wec) return self->close();
                                      self->from_upstream();
                                  });
            });
    }
    void close() {
        std::error_code ignored;
        tls_.lowest_layer().close(ignored);
        upstream_.close(ignored);
    }

    asio::ssl::stream<asio::ip::tcp::socket> tls_;
    asio::ip::tcp::socket upstream_;
    const std::uint16_t port_;
    std::atomic<std::size_t>& handshakes_;
    std::array<char, 4096> in_{};
    std::array<char, 4096> out_{};
};

}  // namespace

TlsTerminator::TlsTerminator(std::uint16_t upstream_port, const std::string& cert_file,
                             const std::string& key_file)
    : upstream_(upstream_port) {
    ctx_.use_certificate_chain_file(cert_file);
    ctx_.use_private_key_file(key_file, asio::ssl::context::pem);
    const asio::ip::tcp::endpoint at(asio::ip::make_address("127.0.0.1"), 0);
    acceptor_.open(at.protocol());
    acceptor_.bind(at);
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    accept();
    thread_ = std::thread([this] { io_.run(); });
}

TlsTerminator::~TlsTerminator() {
    io_.stop();
    thread_.join();
}

void TlsTerminator::accept() {
    acceptor_.async_accept([this](const std::error_code& ec, asio::ip::tcp::socket s) {
        if (ec) return;
        std::make_shared<Relay>(std::move(s), ctx_, upstream_, handshakes_)->start();
        accept();
    });
}

}  // namespace folsom::test
