#include "e2e/libmemcached_cases.hpp"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace folsom::bench {
namespace {

[[noreturn]] void fail(memcached_st* mc, memcached_return_t rc, const char* what) {
    throw std::runtime_error(std::string("libmemcached: ") + what + ": " +
                             memcached_strerror(mc, rc));
}

}  // namespace

LibmemcachedCases::LibmemcachedCases(const std::string& socket_path, const KeySet& keys)
    : LibmemcachedCases(0, keys, false, socket_path) {}

LibmemcachedCases::LibmemcachedCases(std::uint16_t port, const KeySet& keys, bool binary)
    : LibmemcachedCases(port, keys, binary, std::string()) {}

LibmemcachedCases::LibmemcachedCases(std::uint16_t port, const KeySet& keys, bool binary,
                                     std::string socket_path)
    : port_(port),
      socket_path_(std::move(socket_path)),
      binary_(binary),
      keys_(keys),
      plain_(handle(false, false, false)),
      no_block_(handle(true, false, false)),
      buffered_(handle(true, true, false)),
      noreply_(handle(true, true, true)) {
    if (memcached_result_create(plain_, &result_) == nullptr ||
        memcached_result_create(no_block_, &nb_result_) == nullptr)
        throw std::runtime_error("libmemcached: memcached_result_create failed");
}

LibmemcachedCases::~LibmemcachedCases() {
    memcached_result_free(&result_);
    memcached_result_free(&nb_result_);
    for (auto* mc : {plain_, no_block_, buffered_, noreply_})
        memcached_free(mc);
}

memcached_st* LibmemcachedCases::handle(bool no_block, bool buffered, bool noreply) {
    memcached_st* mc = memcached_create(nullptr);
    if (mc == nullptr) throw std::runtime_error("libmemcached: memcached_create failed");
    memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_TCP_NODELAY, 1);
    if (binary_) memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BINARY_PROTOCOL, 1);
    if (no_block) memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_NO_BLOCK, 1);
    if (buffered) {
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_BUFFER_REQUESTS, 1);
        // Past these watermarks (500 replies or 64 KiB owed by default) libmemcached reads
        // replies in the middle of a buffered write. With NO_BLOCK that path sometimes closes
        // the socket and the next set trips libmemcached's own assertion (io.cc:548, `fd !=
        // INVALID_SOCKET`): 17 of 20 runs of this case alone aborted the whole benchmark. The
        // batches here owe at most 1000 replies (~8 KiB), read by the get that ends each batch.
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_IO_MSG_WATERMARK, 1u << 20);
        memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_IO_BYTES_WATERMARK, 1u << 30);
    }
    if (noreply) memcached_behavior_set(mc, MEMCACHED_BEHAVIOR_NOREPLY, 1);
    if (auto rc = socket_path_.empty() ? memcached_server_add(mc, "127.0.0.1", port_)
                                       : memcached_server_add_unix_socket(mc, socket_path_.c_str());
        rc != MEMCACHED_SUCCESS)
        fail(mc, rc, "memcached_server_add");
    return mc;
}

std::uint64_t LibmemcachedCases::get(std::uint64_t ops) {
    const std::size_t n = keys_.size();
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::size_t k = (next_ + i) % n;
        std::size_t len = 0;
        std::uint32_t flags = 0;
        memcached_return_t rc;
        char* v = memcached_get(plain_, keys_.c_keys[k], keys_.c_lengths[k], &len, &flags, &rc);
        if (v == nullptr || len != keys_.value.size()) fail(plain_, rc, "memcached_get");
        std::free(v);
    }
    next_ += ops;
    return ops;
}

std::uint64_t LibmemcachedCases::mget(std::uint64_t batches, std::size_t keys_per_batch,
                                      bool no_block) {
    memcached_st* mc = no_block ? no_block_ : plain_;
    memcached_result_st* result = no_block ? &nb_result_ : &result_;
    for (std::uint64_t b = 0; b < batches; ++b) {
        const std::size_t start = keys_.run_start(next_ + b, keys_per_batch);
        memcached_return_t rc = memcached_mget(mc, keys_.c_keys.data() + start,
                                               keys_.c_lengths.data() + start, keys_per_batch);
        if (rc != MEMCACHED_SUCCESS) fail(mc, rc, "memcached_mget");
        std::size_t hits = 0;
        while (memcached_result_st* r = memcached_fetch_result(mc, result, &rc)) {
            hits += memcached_result_length(r) == keys_.value.size() ? 1 : 0;
        }
        if (rc != MEMCACHED_END || hits != keys_per_batch) fail(mc, rc, "memcached_fetch_result");
    }
    next_ += batches;
    return batches;
}

std::uint64_t LibmemcachedCases::set(std::uint64_t ops) {
    const std::size_t n = keys_.size();
    for (std::uint64_t i = 0; i < ops; ++i) {
        const std::size_t k = (next_ + i) % n;
        const memcached_return_t rc = memcached_set(plain_, keys_.c_keys[k], keys_.c_lengths[k],
                                                    keys_.value.data(), keys_.value.size(), 0, 0);
        if (rc != MEMCACHED_SUCCESS) fail(plain_, rc, "memcached_set");
    }
    next_ += ops;
    return ops;
}

std::uint64_t LibmemcachedCases::set_buffered(std::uint64_t ops, std::size_t window, bool noreply) {
    memcached_st* mc = noreply ? noreply_ : buffered_;
    const std::size_t n = keys_.size();
    for (std::uint64_t done = 0; done < ops;) {
        const std::uint64_t batch = std::min<std::uint64_t>(window, ops - done);
        for (std::uint64_t i = 0; i < batch; ++i) {
            const std::size_t k = (next_ + done + i) % n;
            const memcached_return_t rc =
                memcached_set(mc, keys_.c_keys[k], keys_.c_lengths[k], keys_.value.data(),
                              keys_.value.size(), 0, 0);
            if (rc != MEMCACHED_SUCCESS && rc != MEMCACHED_BUFFERED) fail(mc, rc, "memcached_set");
        }
        // A get flushes the buffer and first reads every reply still owed (libmemcached keeps
        // count), so when it returns the server has done every set of the batch. Without it
        // the unread replies back up until both sides block (libmemcached then asserts).
        memcached_return_t rc = memcached_flush_buffers(mc);
        if (rc != MEMCACHED_SUCCESS) fail(mc, rc, "memcached_flush_buffers");
        std::size_t len = 0;
        std::uint32_t flags = 0;
        char* v = memcached_get(mc, keys_.c_keys[0], keys_.c_lengths[0], &len, &flags, &rc);
        if (v == nullptr || len != keys_.value.size()) fail(mc, rc, "memcached_get after sets");
        std::free(v);
        done += batch;
    }
    next_ += ops;
    return ops;
}

}  // namespace folsom::bench
