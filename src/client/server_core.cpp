// The ClientCore that talks to real servers: one ServerPool (N pipelined connections) per
// server, keys routed by the consistent-hash ring (cluster/continuum.hpp).
#include "folsom/client.hpp"
#include "folsom/cluster/continuum.hpp"
#include "folsom/detail/client_core.hpp"
#include "folsom/server_address.hpp"

#include "client/protocol_driver.hpp"
#include "net/connection.hpp"

#include <system_error>

namespace folsom::detail {
namespace {

class ServerCore final : public ClientCore {
  public:
    ServerCore(asio::any_io_executor ex, const Options& options)
        : ClientCore(options.max_outstanding_requests), ex_(std::move(ex)), options_(options) {
        if (options_.servers.empty()) throw std::system_error(errc::invalid_argument);
        if (options_.connections_per_server == 0) options_.connections_per_server = 1;
        for (const auto& s : options_.servers) {
            ServerAddress addr;
            if (auto ec = parse_server_address(s, addr))
                throw std::system_error(ec, "bad server address '" + s + "'");
            addresses_.push_back(addr);
        }
        ring_ = cluster::Continuum(addresses_, options_.distribution);
        for (const auto& ep : addresses_) {
            auto pool = std::make_unique<Pool>();
            for (std::size_t i = 0; i < options_.connections_per_server; ++i) {
                auto c = std::make_shared<net::Connection>(ex_, ep.host, ep.port, options_,
                                                           make_protocol_driver(options_));
                pool->connections.push_back(std::move(c));
            }
            pool->name = pool->connections.front()->name();
            pools_.push_back(std::move(pool));
        }
        for (auto& p : pools_)
            for (auto& c : p->connections)
                c->start();
    }

    ~ServerCore() override { shutdown(); }

    asio::any_io_executor executor() const noexcept override { return ex_; }
    std::size_t server_count() const noexcept override { return pools_.size(); }
    std::size_t server_for(std::string_view key) const noexcept override {
        return ring_.server_index(key);
    }
    const std::string& server_name(std::size_t i) const noexcept override {
        return pools_[i]->name;
    }
    std::size_t max_value_size() const noexcept override { return options_.max_value_size; }

    void submit(std::size_t server, Operation& op, std::uint32_t part,
                const Request& request) override {
        Pool& p = *pools_[server];
        const std::size_t n = p.connections.size();
        const std::size_t i = n == 1 ? 0 : p.next.fetch_add(1, std::memory_order_relaxed) % n;
        p.connections[i]->submit(op, part, request);
    }

    void shutdown() override {
        for (auto& p : pools_)
            for (auto& c : p->connections)
                c->close();
    }

  private:
    struct Pool {
        std::string name;
        std::vector<std::shared_ptr<net::Connection>> connections;
        std::atomic<std::size_t> next{0};
    };

    asio::any_io_executor ex_;
    Options options_;
    std::vector<ServerAddress> addresses_;
    cluster::Continuum ring_;
    std::vector<std::unique_ptr<Pool>> pools_;
};

}  // namespace

std::shared_ptr<ClientCore> make_client_core(asio::any_io_executor ex, const Options& options) {
    return std::make_shared<ServerCore>(std::move(ex), options);
}

}  // namespace folsom::detail
