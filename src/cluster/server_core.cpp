#include "cluster/server_core.hpp"

#include "folsom/detail/observe.hpp"
#include "folsom/error.hpp"

#include <algorithm>
#include <system_error>

namespace folsom::detail {

ServerCore::ServerCore(asio::any_io_executor ex, const Options& options,
                       std::vector<ServerAddress> servers)
    : ClientCore(options.max_outstanding_requests), ex_(std::move(ex)), options_(options) {
    {
        std::lock_guard lk(mu_);
        publish({}, {});
    }
    set_servers(std::move(servers));
}

ServerCore::~ServerCore() {
    shutdown();
}

void ServerCore::report_unroutable(Metrics& m, const Request& request) noexcept {
    RequestRecord r;
    r.server = Metrics::no_server;
    r.op = to_metric_op(request.code);
    r.outcome = Outcome::error;
    r.error = make_error_code(errc::not_connected);
    r.keys = is_retrieval(request.code) ? static_cast<std::uint32_t>(request.keys.size()) : 0;
    m.request_completed(r);
}

const std::string& ServerCore::server_name(std::size_t i) const noexcept {
    static const std::string none;
    const cluster::ServerPool* p = table().pool(i);
    return p ? p->name() : none;
}

std::vector<std::size_t> ServerCore::broadcast_servers() const {
    const auto members = table().members();
    std::vector<std::size_t> out;
    out.reserve(members.size());
    for (const auto* p : members)
        out.push_back(p->id());
    return out;
}

std::vector<ServerAddress> ServerCore::servers() const {
    std::vector<ServerAddress> out;
    const auto a = table().addresses();
    out.assign(a.begin(), a.end());
    return out;
}

bool ServerCore::set_servers(std::vector<ServerAddress> servers) {
    std::vector<cluster::ServerPool*> started;
    {
        std::lock_guard lk(mu_);
        if (shut_down_) return false;
        std::vector<cluster::ServerPool*> members;
        std::vector<ServerAddress> addresses;
        members.reserve(servers.size());
        for (auto& addr : servers) {
            auto [it, fresh] = index_of_.try_emplace(addr.to_string(), by_index_.size());
            const std::size_t index = it->second;
            if (fresh) {
                by_index_.push_back(nullptr);
                pools_.emplace_back();
            }
            auto& slot = pools_[index];
            if (slot && slot->closed()) {
                // Drained and closed, now back: an old table may still point at the old pool,
                // so it retires rather than dies.
                retired_pools_.push_back(std::move(slot));
            }
            if (!slot) {
                slot = std::make_unique<cluster::ServerPool>(ex_, addr, index, options_);
                by_index_[index] = slot.get();
                started.push_back(slot.get());
            }
            cancel_drain(slot.get());  // back in the ring before its drain fired: keep it
            if (std::find(members.begin(), members.end(), slot.get()) != members.end()) continue;
            members.push_back(slot.get());
            addresses.push_back(std::move(addr));
        }
        const cluster::RoutingTable& now = table();
        const bool same = std::equal(members.begin(), members.end(), now.members().begin(),
                                     now.members().end()) &&
                          std::equal(addresses.begin(), addresses.end(), now.addresses().begin(),
                                     now.addresses().end());
        if (same) return false;
        // Servers that left the ring drain: requests already routed to them finish there.
        for (auto* old : now.members())
            if (std::find(members.begin(), members.end(), old) == members.end())
                schedule_drain(old);
        publish(std::move(members), std::move(addresses));
    }
    // Connections start outside the lock; requests routed to them meanwhile queue (they are
    // in the connecting state).
    for (auto* p : started)
        p->start();
    return true;
}

void ServerCore::publish(std::vector<cluster::ServerPool*> members,
                         std::vector<ServerAddress> addresses) {
    auto t = std::make_unique<const cluster::RoutingTable>(std::move(members), std::move(addresses),
                                                           by_index_, options_.distribution,
                                                           options_.failover.enabled);
    table_.store(t.get(), std::memory_order_release);
    tables_.push_back(std::move(t));
}

void ServerCore::schedule_drain(cluster::ServerPool* pool) {
    auto timer = std::make_shared<asio::steady_timer>(ex_, options_.discovery_drain_delay);
    drains_[pool] = timer;
    timer->async_wait([weak = weak_from_this(), pool, timer](const std::error_code& ec) {
        if (ec) return;
        auto self = weak.lock();
        if (!self) return;
        {
            std::lock_guard lk(self->mu_);
            auto it = self->drains_.find(pool);
            if (it == self->drains_.end() || it->second != timer) return;  // re-added meanwhile
            self->drains_.erase(it);
        }
        // Outside the lock: closing completes requests, whose handlers may call back in.
        // (A set_servers() racing in between finds the pool closed and replaces it.)
        pool->close();
    });
}

void ServerCore::cancel_drain(cluster::ServerPool* pool) {
    auto it = drains_.find(pool);
    if (it == drains_.end()) return;
    it->second->cancel();
    drains_.erase(it);
}

void ServerCore::shutdown() {
    std::vector<cluster::ServerPool*> all;
    {
        std::lock_guard lk(mu_);
        shut_down_ = true;
        // Pending drain timers would keep the executor busy for the whole delay.
        for (auto& [pool, timer] : drains_)
            timer->cancel();
        drains_.clear();
        for (auto& p : pools_)
            if (p) all.push_back(p.get());
        for (auto& p : retired_pools_)
            all.push_back(p.get());
    }
    for (auto* p : all)
        p->close();
}

namespace {

/// Waits for a server to connect by looking every few milliseconds: simple, bounded by the
/// caller's timeout, and it costs nothing on the request path (no hook in the connections).
class ReadyWaiter : public std::enable_shared_from_this<ReadyWaiter> {
  public:
    ReadyWaiter(std::shared_ptr<ServerCore> core, asio::any_io_executor ex,
                std::chrono::steady_clock::time_point deadline, std::function<bool()> ready,
                std::function<bool()> closed, std::function<std::error_code()> refused,
                std::function<void(std::error_code)> done)
        : core_(std::move(core)),
          timer_(ex),
          deadline_(deadline),
          ready_(std::move(ready)),
          closed_(std::move(closed)),
          refused_(std::move(refused)),
          done_(std::move(done)) {}

    void poll() {
        std::error_code ec;
        if (closed_()) {
            ec = errc::closed;
        } else if (ready_()) {
            ec = {};
        } else if (auto refusal = refused_()) {
            ec = refusal;  // retrying cannot fix a wrong password or an untrusted certificate
        } else if (std::chrono::steady_clock::now() >= deadline_) {
            ec = errc::timeout;
        } else {
            timer_.expires_after(std::chrono::milliseconds(2));
            timer_.async_wait([self = shared_from_this()](std::error_code) { self->poll(); });
            return;
        }
        done_(ec);
    }

  private:
    std::shared_ptr<ServerCore> core_;  // keeps the pools alive while waiting
    asio::steady_timer timer_;
    std::chrono::steady_clock::time_point deadline_;
    std::function<bool()> ready_, closed_;
    std::function<std::error_code()> refused_;
    std::function<void(std::error_code)> done_;
};

}  // namespace

void ServerCore::notify_when_ready(std::chrono::milliseconds timeout,
                                   std::function<void(std::error_code)> done) {
    auto self = shared_from_this();
    auto ready = [this] {
        for (const auto* p : table().members())
            if (p->any_connected()) return true;
        return false;
    };
    auto closed = [this] {
        std::lock_guard lk(mu_);
        return shut_down_;
    };
    // Every server refused us (bad credentials or certificate): say so instead of waiting.
    auto refused = [this] {
        std::error_code r;
        for (const auto* p : table().members()) {
            r = p->refusal();
            if (!r) return r;
        }
        return r;
    };
    auto waiter = std::make_shared<ReadyWaiter>(
        self, ex_, std::chrono::steady_clock::now() + timeout, std::move(ready), std::move(closed),
        std::move(refused), std::move(done));
    // Never complete inside the call: the first look happens on the executor.
    asio::post(ex_, [waiter] { waiter->poll(); });
}

}  // namespace folsom::detail
