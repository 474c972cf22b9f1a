// The folsom side of the end-to-end benchmark: one Client over an io_context that runs on the
// calling thread, so all of the client's CPU is spent on it. Every case keeps `window`
// requests in flight, issuing the next one from a completion (window 1 = sequential).
#pragma once

#include "folsom/client.hpp"
#include "folsom/quiet_client.hpp"

#include "e2e/keyset.hpp"

#include <asio/io_context.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace folsom::bench {

class FolsomCases {
  public:
    /// Connects to 127.0.0.1:port over `protocol` (and waits until one get has succeeded).
    FolsomCases(std::uint16_t port, const KeySet& keys, Protocol protocol = Protocol::ascii);
    /// Connects to `server` as Options::servers names it (e.g. a Unix socket's path).
    FolsomCases(std::string server, const KeySet& keys, Protocol protocol = Protocol::ascii);
    /// Connects through `routes` (Options::routes: the servers are its pools'), otherwise with
    /// the options of the constructors above.
    FolsomCases(RouteConfig routes, const KeySet& keys, Protocol protocol = Protocol::ascii);
    /// Connects with `options` as they are (the constructors above end here).
    FolsomCases(const Options& options, const KeySet& keys);
    ~FolsomCases();
    FolsomCases(const FolsomCases&) = delete;
    FolsomCases& operator=(const FolsomCases&) = delete;

    /// The options every case's client uses, without a server: room for the window of 1000
    /// plus get_view's slot, which is released only after its callback (where the next
    /// request is issued) returns.
    static Options base_options(Protocol protocol = Protocol::ascii);

    /// Owning gets (each hit copied into a folsom::Value). Returns the gets done.
    std::uint64_t get(std::uint64_t ops, std::size_t window, bool batch = false);
    /// Zero-copy gets (Client::get_view); the callback only looks at the view.
    std::uint64_t get_view(std::uint64_t ops, std::size_t window, bool batch = false);
    /// As get_view, each key drawn at random (splitmix64) instead of in rotation: the key
    /// order `folsom bench` uses by default, so its pipelined get has a row of its own kind.
    std::uint64_t get_view_random(std::uint64_t ops, std::size_t window);
    /// get_multi of `keys_per_op` consecutive keys, one multi-get at a time.
    std::uint64_t get_multi(std::uint64_t ops, std::size_t keys_per_op);
    /// As get_multi, zero-copy (Client::get_multi_view): each hit's view is only looked at.
    std::uint64_t get_multi_view(std::uint64_t ops, std::size_t keys_per_op);
    /// Sets of the key set's value (copied into the write buffer).
    std::uint64_t set(std::uint64_t ops, std::size_t window);
    /// Quiet sets (Client::quiet()): meta and binary still report each outcome at the next
    /// barrier; ascii sends noreply and completes once written (Status::sent).
    std::uint64_t set_quiet(std::uint64_t ops, std::size_t window);
    /// set_multi of `keys_per_op` consecutive keys, one at a time. Returns the calls done.
    std::uint64_t set_multi(std::uint64_t ops, std::size_t keys_per_op);

  private:
    template <class Issue>
    std::uint64_t run(std::uint64_t ops, std::size_t window, Issue issue, bool batch = false);

    asio::io_context io_;
    const KeySet& keys_;
    Client client_;
    QuietClient quiet_{client_};
    std::vector<KeyValue> items_;  // set_multi's batch, reused
    std::uint64_t next_ = 0;       // key rotation continues across calls
    std::uint64_t random_ = 0;     // get_view_random's splitmix64 state
};

}  // namespace folsom::bench
