// DNS SRV discovery with c-ares, driven by Asio: c-ares tells us which sockets it wants to
// read or write (its socket-state callback) and how long until its next timeout; the query
// waits for those on its strand and hands every readiness back to ares_process_fd. No thread,
// no blocking call.
#include "folsom/cluster/discovery.hpp"
#include "folsom/error.hpp"

#include <ares.h>
#include <asio/bind_executor.hpp>
#include <asio/posix/stream_descriptor.hpp>
#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>

#include <algorithm>
#include <arpa/nameser.h>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

namespace folsom::cluster {
namespace {

void init_library() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
            throw std::runtime_error("c-ares library initialisation failed");
    });
}

class SrvQuery : public std::enable_shared_from_this<SrvQuery> {
  public:
    SrvQuery(asio::any_io_executor ex, Discovery::Handler handler)
        : ex_(ex), strand_(asio::make_strand(ex)), timer_(strand_), handler_(std::move(handler)) {}

    ~SrvQuery() {
        // Sockets belong to c-ares: never let a descriptor close one.
        for (auto& [fd, w] : watches_) {
            std::error_code ignored;
            w->desc.release();
        }
        if (channel_) ares_destroy(channel_);
    }

    void start(std::string name, DnsSrvOptions options) {
        asio::post(strand_, [self = shared_from_this(), name = std::move(name),
                             options = std::move(options)] { self->begin(name, options); });
    }

    void cancel() {
        asio::post(strand_, [self = shared_from_this()] {
            if (self->finished_) return;
            self->cancelled_ = true;
            if (self->channel_) ares_cancel(self->channel_);  // calls on_answer(ECANCELLED)
            self->after_process();
        });
    }

  private:
    struct Watch {
        explicit Watch(asio::strand<asio::any_io_executor>& s, int fd) : desc(s, fd) {}
        asio::posix::stream_descriptor desc;
        std::uint64_t id = 0;
        bool want_read = false, want_write = false;
        bool read_pending = false, write_pending = false;
    };

    void begin(const std::string& name, const DnsSrvOptions& options) {
        ares_options o{};
        o.sock_state_cb = &SrvQuery::sock_state;
        o.sock_state_cb_data = this;
        o.timeout = static_cast<int>(options.timeout.count());
        o.tries = std::max(options.tries, 1);
        const int mask = ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES;
        if (ares_init_options(&channel_, &o, mask) != ARES_SUCCESS) {
            channel_ = nullptr;
            complete(make_error_code(errc::resolve_failed));
            return;
        }
        if (!options.nameservers.empty() &&
            ares_set_servers_ports_csv(channel_, options.nameservers.c_str()) != ARES_SUCCESS) {
            complete(make_error_code(errc::invalid_argument));
            return;
        }
        if (cancelled_) {
            complete(make_error_code(errc::cancelled));
            return;
        }
        ares_query(channel_, name.c_str(), ns_c_in, ns_t_srv, &SrvQuery::on_answer, this);
        after_process();
    }

    static void sock_state(void* data, ares_socket_t fd, int readable, int writable) {
        static_cast<SrvQuery*>(data)->on_sock_state(fd, readable != 0, writable != 0);
    }

    void on_sock_state(int fd, bool readable, bool writable) {
        auto it = watches_.find(fd);
        if (!readable && !writable) {
            if (it != watches_.end()) {
                it->second->desc.release();  // deregisters; c-ares closes the socket itself
                watches_.erase(it);
            }
            return;
        }
        if (it == watches_.end()) {
            it = watches_.emplace(fd, std::make_unique<Watch>(strand_, fd)).first;
            it->second->id = ++next_id_;
        }
        it->second->want_read = readable;
        it->second->want_write = writable;
        arm(fd, *it->second);
    }

    void arm(int fd, Watch& w) {
        if (w.want_read && !w.read_pending) {
            w.read_pending = true;
            w.desc.async_wait(asio::posix::stream_descriptor::wait_read,
                              [self = shared_from_this(), fd, id = w.id](
                                  const std::error_code& ec) { self->on_ready(fd, id, ec, true); });
        }
        if (w.want_write && !w.write_pending) {
            w.write_pending = true;
            w.desc.async_wait(
                asio::posix::stream_descriptor::wait_write,
                [self = shared_from_this(), fd, id = w.id](const std::error_code& ec) {
                    self->on_ready(fd, id, ec, false);
                });
        }
    }

    void on_ready(int fd, std::uint64_t id, const std::error_code& ec, bool read) {
        auto it = watches_.find(fd);
        if (it == watches_.end() || it->second->id != id) return;  // socket gone or replaced
        (read ? it->second->read_pending : it->second->write_pending) = false;
        if (ec || finished_) return;
        ares_process_fd(channel_, read ? fd : ARES_SOCKET_BAD, read ? ARES_SOCKET_BAD : fd);
        it = watches_.find(fd);
        if (it != watches_.end() && it->second->id == id) arm(fd, *it->second);
        after_process();
    }

    // After anything c-ares did: deliver the answer, or wait for its next timeout.
    void after_process() {
        if (finished_) return;
        if (answered_) {
            complete(answer_ec_);
            return;
        }
        timeval tv{};
        if (!ares_timeout(channel_, nullptr, &tv)) return;  // nothing pending (cannot happen)
        timer_.expires_after(std::chrono::seconds(tv.tv_sec) +
                             std::chrono::microseconds(tv.tv_usec));
        timer_.async_wait([self = shared_from_this()](const std::error_code& ec) {
            if (ec || self->finished_) return;
            ares_process_fd(self->channel_, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
            self->after_process();
        });
    }

    static void on_answer(void* arg, int status, int /*timeouts*/, unsigned char* abuf, int alen) {
        auto* self = static_cast<SrvQuery*>(arg);
        self->answered_ = true;
        if (status == ARES_ECANCELLED || status == ARES_EDESTRUCTION) {
            self->answer_ec_ = make_error_code(errc::cancelled);
            return;
        }
        if (status != ARES_SUCCESS) {
            self->answer_ec_ = make_error_code(errc::resolve_failed);
            return;
        }
        ares_srv_reply* reply = nullptr;
        if (ares_parse_srv_reply(abuf, alen, &reply) != ARES_SUCCESS) {
            self->answer_ec_ = make_error_code(errc::resolve_failed);
            return;
        }
        unsigned best = ~0u;
        for (auto* r = reply; r; r = r->next)
            best = std::min<unsigned>(best, r->priority);
        for (auto* r = reply; r; r = r->next) {
            if (r->priority != best || r->port == 0 || !r->host || !*r->host) continue;
            ServerAddress a;
            a.host = r->host;
            if (a.host.back() == '.') a.host.pop_back();
            a.port = r->port;
            a.weight = r->weight == 0 ? 1 : r->weight;
            self->servers_.push_back(std::move(a));
        }
        ares_free_data(reply);
        std::sort(self->servers_.begin(), self->servers_.end(), [](const auto& x, const auto& y) {
            return std::tie(x.host, x.port) < std::tie(y.host, y.port);
        });
        if (self->servers_.empty()) self->answer_ec_ = make_error_code(errc::resolve_failed);
    }

    void complete(std::error_code ec) {
        if (finished_) return;
        finished_ = true;
        timer_.cancel();
        if (ec) servers_.clear();
        if (channel_) {
            ares_destroy(channel_);  // outside every c-ares callback; closes its sockets
            channel_ = nullptr;
        }
        asio::post(ex_, [h = std::move(handler_), ec, s = std::move(servers_)]() mutable {
            h(ec, std::move(s));
        });
    }

    asio::any_io_executor ex_;
    asio::strand<asio::any_io_executor> strand_;
    asio::steady_timer timer_;
    Discovery::Handler handler_;
    ares_channel channel_ = nullptr;
    std::map<int, std::unique_ptr<Watch>> watches_;
    std::uint64_t next_id_ = 0;
    bool answered_ = false, finished_ = false, cancelled_ = false;
    std::error_code answer_ec_;
    std::vector<ServerAddress> servers_;
};

class DnsSrvDiscovery final : public Discovery {
  public:
    DnsSrvDiscovery(std::string name, DnsSrvOptions options)
        : name_(std::move(name)), options_(std::move(options)) {
        init_library();
    }

    Cancel resolve(asio::any_io_executor ex, Handler handler) override {
        auto q = std::make_shared<SrvQuery>(ex, std::move(handler));
        q->start(name_, options_);
        return [weak = std::weak_ptr<SrvQuery>(q)] {
            if (auto query = weak.lock()) query->cancel();
        };
    }

  private:
    const std::string name_;
    const DnsSrvOptions options_;
};

}  // namespace

std::shared_ptr<Discovery> make_dns_srv_discovery(std::string name, DnsSrvOptions options) {
    return std::make_shared<DnsSrvDiscovery>(std::move(name), std::move(options));
}

}  // namespace folsom::cluster
