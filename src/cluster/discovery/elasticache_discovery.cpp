// ElastiCache auto-discovery: one short TCP (or TLS) exchange with the configuration endpoint
// per resolution. The reply is parsed by ElastiCacheConfigParser (sans-I/O); this file only
// moves bytes: look the endpoint up, connect, shake hands when TLS is on, write the request,
// read until the parser is done, all on one strand and under one deadline.
#include "folsom/cluster/discovery.hpp"
#include "folsom/error.hpp"

#include "cluster/discovery/elasticache_config.hpp"
#include "net/self_connection.hpp"
#include "net/tls_context.hpp"

#include <asio/connect.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/write.hpp>

#include <array>
#include <atomic>
#include <memory>

namespace folsom::cluster {
namespace {

/// What a resolution reports back to its discovery (outlives the discovery if need be).
struct VersionCell {
    std::atomic<bool> known{false};
    std::atomic<std::uint64_t> version{0};
};

class ConfigQuery : public std::enable_shared_from_this<ConfigQuery> {
  public:
    ConfigQuery(asio::any_io_executor ex, Discovery::Handler handler,
                const ElastiCacheOptions& options, std::optional<TlsOptions> tls,
                std::shared_ptr<VersionCell> version)
        : ex_(ex),
          strand_(asio::make_strand(ex)),
          resolver_(strand_),
          socket_(strand_),
          timer_(strand_),
          handler_(std::move(handler)),
          command_(options.legacy_get ? ElastiCacheCommand::legacy_get
                                      : ElastiCacheCommand::config_get),
          parser_(command_, options.max_reply_bytes),
          tls_options_(std::move(tls)),
          version_(std::move(version)) {}

    void start(const ServerAddress& endpoint, std::chrono::milliseconds timeout) {
        asio::post(strand_, [self = shared_from_this(), endpoint, timeout] {
            if (self->finished_) return;  // cancelled before it began
            self->timer_.expires_after(timeout);
            self->timer_.async_wait([self](const std::error_code& ec) {
                if (!ec) self->complete(make_error_code(errc::timeout));
            });
            if (self->tls_options_) {
                try {
                    self->tls_context_ = net::make_tls_context(*self->tls_options_);
                } catch (const std::system_error&) {  // a CA file or certificate unreadable
                    return self->complete(make_error_code(errc::tls_error));
                }
                self->tls_.emplace(self->socket_, *self->tls_context_);
                net::prepare_tls_stream(*self->tls_, *self->tls_options_, endpoint.host);
            }
            self->resolver_.async_resolve(
                endpoint.host, std::to_string(endpoint.port),
                [self](const std::error_code& ec, asio::ip::tcp::resolver::results_type r) {
                    if (self->finished_) return;
                    if (ec) return self->complete(make_error_code(errc::resolve_failed));
                    self->connect(r);
                });
        });
    }

    void cancel() {
        asio::post(strand_, [self = shared_from_this()] {
            self->complete(make_error_code(errc::cancelled));
        });
    }

  private:
    void connect(const asio::ip::tcp::resolver::results_type& endpoints) {
        asio::async_connect(
            socket_, endpoints,
            [self = shared_from_this()](const std::error_code& ec, const asio::ip::tcp::endpoint&) {
                if (self->finished_) return;
                if (ec || net::connected_to_itself(self->socket_))  // see self_connection.hpp
                    return self->complete(make_error_code(errc::connect_failed));
                if (!self->tls_) return self->send();
                self->tls_->async_handshake(
                    asio::ssl::stream_base::client, [self](const std::error_code& hec) {
                        if (self->finished_) return;
                        if (hec) return self->complete(make_error_code(errc::tls_error));
                        self->send();
                    });
            });
    }

    void send() {
        const std::string_view request = elasticache_request(command_);
        auto done = [self = shared_from_this()](const std::error_code& ec, std::size_t) {
            if (self->finished_) return;
            if (ec) return self->complete(make_error_code(errc::connection_lost));
            self->receive();
        };
        const auto bytes = asio::buffer(request.data(), request.size());
        if (tls_)
            asio::async_write(*tls_, bytes, std::move(done));
        else
            asio::async_write(socket_, bytes, std::move(done));
    }

    auto on_read() {
        return [self = shared_from_this()](const std::error_code& ec, std::size_t n) {
            if (self->finished_) return;
            auto& p = self->parser_;
            if (n > 0) p.feed(std::string_view(self->buffer_.data(), n));
            if (p.state() == ElastiCacheConfigParser::State::need_more) {
                if (!ec) return self->receive();
                p.finish_input();  // closed (or broken) before the reply was complete
            }
            self->complete(p.state() == ElastiCacheConfigParser::State::done ? std::error_code{}
                                                                             : p.error());
        };
    }

    void receive() {
        if (tls_)
            tls_->async_read_some(asio::buffer(buffer_), on_read());
        else
            socket_.async_read_some(asio::buffer(buffer_), on_read());
    }

    void complete(std::error_code ec) {
        if (finished_) return;
        finished_ = true;
        std::error_code ignored;
        timer_.cancel();
        resolver_.cancel();
        socket_.close(ignored);  // pending operations finish with operation_aborted
        std::vector<ServerAddress> servers;
        if (!ec) {
            servers = parser_.config().servers();
            // An empty list is not a cluster: keep the one we have.
            if (servers.empty()) {
                ec = make_error_code(errc::resolve_failed);
            } else {
                version_->version.store(parser_.config().version, std::memory_order_relaxed);
                version_->known.store(true, std::memory_order_release);
            }
        }
        asio::post(ex_, [h = std::move(handler_), ec, s = std::move(servers)]() mutable {
            h(ec, std::move(s));
        });
    }

    asio::any_io_executor ex_;
    asio::strand<asio::any_io_executor> strand_;
    asio::ip::tcp::resolver resolver_;
    asio::ip::tcp::socket socket_;
    asio::steady_timer timer_;
    Discovery::Handler handler_;
    ElastiCacheCommand command_;
    ElastiCacheConfigParser parser_;
    const std::optional<TlsOptions> tls_options_;                   // unset: plain TCP
    std::unique_ptr<asio::ssl::context> tls_context_;               // with TLS, made at start
    std::optional<asio::ssl::stream<asio::ip::tcp::socket&>> tls_;  // over socket_
    std::shared_ptr<VersionCell> version_;
    std::array<char, 4096> buffer_{};
    bool finished_ = false;  // touched only on the strand
};

class ElastiCacheDiscoveryImpl final : public ElastiCacheDiscovery {
  public:
    ElastiCacheDiscoveryImpl(ServerAddress endpoint, ElastiCacheOptions options)
        : endpoint_(std::move(endpoint)), options_(options) {}

    Cancel resolve(asio::any_io_executor ex, Handler handler) override {
        return resolve_for_client(std::move(ex), std::nullopt, std::move(handler));
    }

    Cancel resolve_for_client(asio::any_io_executor ex, const std::optional<TlsOptions>& client_tls,
                              Handler handler) override {
        // The endpoint's own TLS settings win; else it speaks TLS as the client does.
        auto q = std::make_shared<ConfigQuery>(ex, std::move(handler), options_,
                                               options_.tls ? options_.tls : client_tls, version_);
        q->start(endpoint_, options_.timeout);
        return [weak = std::weak_ptr<ConfigQuery>(q)] {
            if (auto query = weak.lock()) query->cancel();
        };
    }

    std::optional<std::uint64_t> cluster_version() const noexcept override {
        if (!version_->known.load(std::memory_order_acquire)) return std::nullopt;
        return version_->version.load(std::memory_order_relaxed);
    }

  private:
    const ServerAddress endpoint_;
    const ElastiCacheOptions options_;
    std::shared_ptr<VersionCell> version_ = std::make_shared<VersionCell>();
};

}  // namespace

std::shared_ptr<ElastiCacheDiscovery> make_elasticache_discovery(std::string config_endpoint,
                                                                 ElastiCacheOptions options) {
    ServerAddress endpoint;
    if (auto ec = parse_server_address(config_endpoint, endpoint))
        throw std::system_error(ec,
                                "bad ElastiCache configuration endpoint '" + config_endpoint + "'");
    if (endpoint.is_unix_socket())  // ElastiCache endpoints are TCP
        throw std::system_error(make_error_code(errc::invalid_argument),
                                "bad ElastiCache configuration endpoint '" + config_endpoint +
                                    "': expected HOST:PORT, not a Unix socket path");
    return std::make_shared<ElastiCacheDiscoveryImpl>(std::move(endpoint), options);
}

}  // namespace folsom::cluster
