#include "commands.hpp"

#include "folsom/blocking_client.hpp"
#include "folsom/protocol/key.hpp"
#include "folsom/quiet_client.hpp"

#include "cli_error.hpp"

#include <CLI/CLI.hpp>
#include <asio/use_future.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <unistd.h>

namespace folsom::cli {
namespace {

/// Writes raw bytes to stdout (binary-safe: no newline added, NULs kept).
void write_stdout(std::string_view bytes) {
    if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size())
        throw CliError(std::string("cannot write to stdout: ") + std::strerror(errno));
}

/// Reads all of stdin, byte for byte, refusing more than `max` bytes (without reading on).
std::string read_stdin(std::size_t max) {
    std::string data;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(STDIN_FILENO, buf, sizeof buf);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            throw CliError(std::string("cannot read the value from stdin: ") +
                           std::strerror(errno));
        }
        data.append(buf, static_cast<std::size_t>(n));
        if (data.size() > max)
            throw CliError(
                fmt::format("value too large: more than {} bytes on stdin (the limit "
                            "is {})",
                            max, max));
    }
    return data;
}

/// Whether a key's server is where the key went: true without routes and for a tree that is
/// one PoolRoute (a plain ring). Through any other tree a request may go to several servers,
/// and Client::server_for names only one of them.
bool placement_is_exact(const Options& o) {
    if (!o.routes) return true;
    const RouteSpec& root = o.routes->route;
    return root.type == RouteType::pool && root.shadows.empty();
}

/// The servers the client has seen go down (and not come back), from
/// Options::on_connection_state: which server of a route tree a failed request could not reach.
class DownServers {
  public:
    void update(const std::string& server, ConnectionState state) {
        std::lock_guard<std::mutex> lock(mu_);
        if (state == ConnectionState::disconnected)
            down_.insert(server);
        else if (state == ConnectionState::connected)
            down_.erase(server);
    }
    std::vector<std::string> list() const {
        std::lock_guard<std::mutex> lock(mu_);
        return {down_.begin(), down_.end()};
    }

  private:
    mutable std::mutex mu_;
    std::set<std::string> down_;
};

/// One BlockingClient for the duration of a command, and the wording of its failures.
class Session {
  public:
    explicit Session(const GlobalOptions& g)
        : g_(g), options_(g.options()), exact_(placement_is_exact(options_)) {
        if (!exact_) {
            // Shared: the listener may run on the I/O thread until the client is gone.
            options_.on_connection_state = [down = down_](const std::string& server,
                                                          ConnectionState state) {
                down->update(server, state);
            };
        }
        try {
            client_ = std::make_unique<BlockingClient>(options_);
        } catch (const std::system_error& e) {
            throw CliError(describe_setup_failure(e, g.protocol_name));
        }
    }

    BlockingClient& client() noexcept { return *client_; }
    std::size_t max_value_size() const noexcept { return options_.max_value_size; }

    /// Runs `f` (one request about `key`); a failure becomes a CliError naming the key's server
    /// (through a route tree: the servers found down, when the request could not reach one).
    template <class F>
    auto on_key(std::string_view key, std::size_t value_size, F&& f) {
        try {
            return f();
        } catch (const std::system_error& e) {
            throw CliError(describe_key_failure(e.code(), key, value_size));
        }
    }

    /// The server `key` went to, or "" when routes send it where no one server is named.
    std::string key_server(std::string_view key) const {
        if (!exact_) return {};
        return client_->async().server_name(client_->async().server_for(key));
    }

    /// Runs `f` (one request to every server).
    template <class F>
    auto on_all(F&& f) {
        try {
            return f();
        } catch (const std::system_error& e) {  // every server failed; say why for the first
            std::string msg = describe(e.code(), context_for(client_->async().server_name(0)));
            if (client_->async().server_count() > 1) msg += " (and every other server failed)";
            throw CliError(msg);
        }
    }

    /// Prints what the servers that answered said; one error line for those that did not.
    template <class T, class Print>
    int per_node(const std::vector<NodeResult<T>>& nodes, Print&& print) {
        std::string failures;
        for (const auto& n : nodes) {
            if (n.error) {
                failures +=
                    (failures.empty() ? "" : "; ") + describe(n.error, context_for(n.server));
                continue;
            }
            print(n);
        }
        if (!failures.empty()) {
            std::fflush(stdout);
            throw CliError(failures);
        }
        return 0;
    }

    ErrorContext context_for(std::string_view server) const {
        ErrorContext c;
        c.server = server;
        c.max_value_size = options_.max_value_size;
        c.timeout_ms = g_.timeout_ms;
        c.sasl = !g_.username.empty();
        c.binary_keys = g_.binary_keys;
        return c;
    }

  private:
    std::string describe_key_failure(std::error_code ec, std::string_view key,
                                     std::size_t value_size) const {
        const std::string server = key_server(key);
        ErrorContext c = context_for(server);
        c.key = key;
        c.value_size = value_size;
        const bool unreachable = ec == errc::connect_failed || ec == errc::not_connected;
        if (exact_ || !unreachable) return describe(ec, c);
        // Through a route tree: every server seen down, each as it would be named alone.
        std::string msg;
        for (const auto& s : down_->list()) {
            c.server = s;
            msg += (msg.empty() ? "" : "; ") + describe(ec, c);
        }
        return msg.empty() ? describe(ec, c) : msg;
    }

    const GlobalOptions& g_;
    Options options_;
    const bool exact_;  // placement_is_exact(options_)
    std::shared_ptr<DownServers> down_ = std::make_shared<DownServers>();
    std::unique_ptr<BlockingClient> client_;
};

}  // namespace

void Commands::finish() {
    if (g_.binary_keys) key_ = unescape_key(key_);
}

void Commands::add_to(CLI::App& app, std::function<int()>& action) {
    auto key_arg = [this](CLI::App* c) { c->add_option("KEY", key_, "The key")->required(); };
    auto value_arg = [this](CLI::App* c) {
        return c->add_option("VALUE", value_,
                             "The value (default: read stdin to its end, binary-safe)");
    };

    // ---- retrieval -----------------------------------------------------------------------
    auto* get = app.add_subcommand("get", "Print a value exactly as stored; exit 1 on a miss");
    key_arg(get);
    get->callback([this, &action] {
        action = [this] {
            Session s(g_);
            auto v = s.on_key(key_, 0, [&] { return s.client().get(key_); });
            if (!v) return 1;
            write_stdout(v->data);
            return 0;
        };
    });

    auto* gets = app.add_subcommand(
        "gets", "Print \"<cas> <flags> <length>\\n\" and then the value; exit 1 on a miss");
    key_arg(gets);
    gets->callback([this, &action] {
        action = [this] {
            Session s(g_);
            auto v = s.on_key(key_, 0, [&] { return s.client().gets(key_); });
            if (!v) return 1;
            write_stdout(fmt::format("{} {} {}\n", v->cas, v->flags, v->data.size()));
            write_stdout(v->data);
            return 0;
        };
    });

    // ---- storage -------------------------------------------------------------------------
    struct Store {
        const char* name;
        StoreMode mode;
        const char* help;
    };
    const Store stores[] = {
        {"set", StoreMode::set, "Store a value; prints the status word"},
        {"add", StoreMode::add, "Store only if the key is missing; exit 1 when not stored"},
        {"replace", StoreMode::replace, "Store only if the key exists; exit 1 when not stored"},
        {"append", StoreMode::append,
         "Append to an existing value (flags and ttl are kept); exit 1 when not stored"},
        {"prepend", StoreMode::prepend,
         "Prepend to an existing value (flags and ttl are kept); exit 1 when not stored"},
        {"cas", StoreMode::cas,
         "Store only if the item's cas is still CAS; exit 1 when it exists (changed) or is "
         "not found"},
    };
    for (const auto& store : stores) {
        auto* c = app.add_subcommand(store.name, store.help);
        key_arg(c);
        if (store.mode == StoreMode::cas)
            c->add_option("CAS", cas_, "The cas unique from `folsom gets`")->required();
        CLI::Option* value_opt = value_arg(c);
        c->add_option("--ttl", ttl_,
                      "Time to live in seconds (0: never expires; over 2592000, 30 days: an "
                      "absolute Unix time, as memcached reads it; negative: already expired)");
        c->add_option("--flags", flags_, "Client flags stored with the value (32-bit)");
        c->add_flag("--noreply", noreply_,
                    "Quiet write: over meta and binary the server answers only a failure and "
                    "the status is still the true one; over ascii it answers nothing and the "
                    "status is SENT (outcome unknown)");
        c->footer("Use `--` before a VALUE that starts with '-'.");
        const StoreMode mode = store.mode;
        c->callback([this, &action, mode, value_opt] {
            has_value_ = value_opt->count() > 0;
            action = [this, mode] {
                Session s(g_);
                std::string value = has_value_ ? std::move(value_) : read_stdin(s.max_value_size());
                const std::size_t size = value.size();
                const Status st = s.on_key(key_, size, [&] {
                    if (noreply_)
                        return s.client()
                            .async()
                            .quiet()
                            .store(mode, key_, Bytes(std::move(value)), Expiry::from_exptime(ttl_),
                                   StoreOptions{flags_, cas_}, asio::use_future)
                            .get();
                    return s.client().store(mode, key_, Bytes(std::move(value)),
                                            Expiry::from_exptime(ttl_), StoreOptions{flags_, cas_});
                });
                write_stdout(fmt::format("{}\n", to_string(st)));
                if (st == Status::value_too_large || st == Status::out_of_memory) {
                    std::fflush(stdout);
                    const std::string server = s.key_server(key_);
                    throw CliError(fmt::format("{}{}the server refused the value ({} bytes): {}",
                                               server, server.empty() ? "" : ": ", size,
                                               to_string(st)));
                }
                return st == Status::stored || st == Status::sent ? 0 : 1;
            };
        });
    }

    // ---- other key commands ----------------------------------------------------------------
    auto* del = app.add_subcommand("delete", "Delete a key; exit 1 when not found");
    key_arg(del);
    del->callback([this, &action] {
        action = [this] {
            Session s(g_);
            const Status st = s.on_key(key_, 0, [&] { return s.client().del(key_); });
            write_stdout(fmt::format("{}\n", to_string(st)));
            return st == Status::deleted ? 0 : 1;
        };
    });

    for (const char* name : {"incr", "decr"}) {
        const bool up = std::string_view(name) == "incr";
        auto* c = app.add_subcommand(
            name, up ? "Add N to a decimal value and print the new value; exit 1 when not found"
                     : "Subtract N (not below 0) and print the new value; exit 1 when not found");
        key_arg(c);
        c->add_option("N", delta_, "The amount (unsigned 64-bit)")->required();
        c->callback([this, &action, up] {
            action = [this, up] {
                Session s(g_);
                auto v = s.on_key(key_, 0, [&] {
                    return up ? s.client().incr(key_, delta_) : s.client().decr(key_, delta_);
                });
                if (!v) return 1;
                write_stdout(fmt::format("{}\n", *v));
                return 0;
            };
        });
    }

    auto* touch = app.add_subcommand("touch", "Set a key's time to live; exit 1 when not found");
    key_arg(touch);
    touch
        ->add_option("TTL", ttl_,
                     "Time to live in seconds (0: never expires; over 2592000, 30 days: an "
                     "absolute Unix time, as memcached reads it; negative: already expired)")
        ->required();
    touch->callback([this, &action] {
        action = [this] {
            Session s(g_);
            const Status st = s.on_key(
                key_, 0, [&] { return s.client().touch(key_, Expiry::from_exptime(ttl_)); });
            write_stdout(fmt::format("{}\n", to_string(st)));
            return st == Status::touched ? 0 : 1;
        };
    });

    // ---- every server ------------------------------------------------------------------------
    auto* stats = app.add_subcommand("stats",
                                     "Print \"<server> <name> <value>\" per statistic, "
                                     "for every server");
    stats->add_option("GROUP", group_, "A stats group: items, slabs, settings, conns, ...");
    stats->callback([this, &action] {
        action = [this] {
            Session s(g_);
            auto nodes = s.on_all([&] { return s.client().stats(group_); });
            return s.per_node(nodes, [](const NodeResult<StatList>& n) {
                for (const auto& [name, value] : n.value)
                    write_stdout(fmt::format("{} {} {}\n", n.server, name, value));
            });
        };
    });

    auto* flush = app.add_subcommand("flush", "Invalidate every item on every server");
    flush->add_option("--delay", delay_, "Invalidate in S seconds instead of now")
        ->check(CLI::Range(std::int64_t{0}, std::int64_t{0xffffffff}))
        ->type_name("S");
    flush->callback([this, &action] {
        action = [this] {
            Session s(g_);
            std::optional<std::chrono::seconds> delay;
            if (delay_ >= 0) delay = std::chrono::seconds(delay_);
            auto nodes = s.on_all([&] { return s.client().flush_all(delay); });
            return s.per_node(nodes, [](const NodeResult<Status>& n) {
                write_stdout(fmt::format("{} {}\n", n.server, to_string(n.value)));
            });
        };
    });

    auto* delete_all = app.add_subcommand(
        "delete-all",
        "Delete a key on every server; print \"<server> DELETED|NOT_FOUND\" per server; exit 1 "
        "when no server had it");
    key_arg(delete_all);
    delete_all->callback([this, &action] {
        action = [this] {
            Session s(g_);
            auto request = [&] { return s.client().delete_all(key_); };
            // A bad key is the key's fault (named as such); otherwise every server failed.
            auto nodes = protocol::validate_key(key_, g_.binary_keys) ? s.on_key(key_, 0, request)
                                                                      : s.on_all(request);
            bool deleted = false;
            s.per_node(nodes, [&](const NodeResult<Status>& n) {
                deleted = deleted || n.value == Status::deleted;
                write_stdout(fmt::format("{} {}\n", n.server, to_string(n.value)));
            });
            return deleted ? 0 : 1;
        };
    });

    auto* version = app.add_subcommand("version", "Print \"<server> <version>\" per server");
    version->callback([this, &action] {
        action = [this] {
            Session s(g_);
            auto nodes = s.on_all([&] { return s.client().version(); });
            return s.per_node(nodes, [](const NodeResult<std::string>& n) {
                write_stdout(fmt::format("{} {}\n", n.server, n.value));
            });
        };
    });
}

}  // namespace folsom::cli
