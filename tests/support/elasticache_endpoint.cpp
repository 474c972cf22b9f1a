#include "support/elasticache_endpoint.hpp"

namespace folsom::test {

ElastiCacheEndpoint::ElastiCacheEndpoint() : server_([this](FakeConnection& c) { session(c); }) {}

std::string ElastiCacheEndpoint::reply(std::uint64_t version, const std::vector<std::string>& nodes,
                                       bool legacy) {
    std::string data = std::to_string(version) + "\n";
    for (std::size_t i = 0; i < nodes.size(); ++i)
        data += (i ? " " : "") + nodes[i];
    data += "\n";
    return std::string(legacy ? "VALUE AmazonElastiCache:cluster" : "CONFIG cluster") + " 0 " +
           std::to_string(data.size()) + "\r\n" + data + "\r\nEND\r\n";
}

std::vector<std::string> ElastiCacheEndpoint::entries(const std::vector<ServerAddress>& servers) {
    std::vector<std::string> out;
    for (const auto& s : servers)
        out.push_back("cache-" + std::to_string(s.port) + ".test|" + s.host + "|" +
                      std::to_string(s.port));
    return out;
}

void ElastiCacheEndpoint::serve(std::uint64_t version, const std::vector<std::string>& nodes,
                                bool legacy) {
    std::lock_guard lk(mu_);
    reply_ = reply(version, nodes, legacy);
    legacy_ = legacy;
    raw_ = silent_ = false;
}

void ElastiCacheEndpoint::serve_raw(std::string bytes) {
    std::lock_guard lk(mu_);
    reply_ = std::move(bytes);
    raw_ = true;
    silent_ = false;
}

void ElastiCacheEndpoint::go_silent() {
    std::lock_guard lk(mu_);
    silent_ = true;
}

void ElastiCacheEndpoint::session(FakeConnection& c) {
    // As a real endpoint: one connection may carry many requests; the client closes it.
    for (;;) {
        const std::string line = c.read_line();
        if (line.empty()) return;  // closed
        const bool config = line == "config get cluster";
        const bool legacy = line == "get AmazonElastiCache:cluster";
        std::string answer;
        {
            std::lock_guard lk(mu_);
            if (config || legacy) requests_.fetch_add(1);
            if (silent_) {
                answer.clear();
            } else if (raw_ || (config && !legacy_) || (legacy && legacy_)) {
                answer = reply_;
            } else if (config) {
                answer = "ERROR\r\n";  // an engine before 1.4.14 has no `config`
            } else {
                answer = "END\r\n";  // a newer one keeps no legacy item: a miss
            }
        }
        if (answer.empty()) {
            c.wait_for_close();
            return;
        }
        c.write(answer);
    }
}

}  // namespace folsom::test
