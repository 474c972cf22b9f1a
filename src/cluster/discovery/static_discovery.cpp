#include "folsom/cluster/discovery.hpp"

#include <asio/post.hpp>

namespace folsom::cluster {

void StaticDiscovery::set(std::vector<ServerAddress> servers) {
    std::lock_guard lk(mu_);
    servers_ = std::move(servers);
}

Discovery::Cancel StaticDiscovery::resolve(asio::any_io_executor ex, Handler handler) {
    std::vector<ServerAddress> copy;
    {
        std::lock_guard lk(mu_);
        copy = servers_;
    }
    asio::post(ex, [h = std::move(handler), s = std::move(copy)]() mutable {
        h(std::error_code{}, std::move(s));
    });
    return [] {};
}

}  // namespace folsom::cluster
