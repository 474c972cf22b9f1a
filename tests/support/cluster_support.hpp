// Helpers for multi-server suites: libmemcached as the placement oracle, and (included here for
// the suites that use all three) waiting and counting completions.
#pragma once

#include "folsom/server_address.hpp"

#include "support/completion_ledger.hpp"
#include "support/wait_for.hpp"

#include <gtest/gtest.h>
#include <libmemcached/memcached.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace folsom::test {

/// Where libmemcached (MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED) puts keys: it names servers by
/// host and port, as our ServerAddress does. Answers the *port* of the chosen server.
class LibmemcachedPlacement {
  public:
    explicit LibmemcachedPlacement(const std::vector<ServerAddress>& servers)
        : memc_(memcached_create(nullptr)) {
        EXPECT_EQ(memcached_behavior_set(memc_, MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, 1),
                  MEMCACHED_SUCCESS);
        for (const auto& s : servers)
            EXPECT_EQ(memcached_server_add_with_weight(memc_, s.host.c_str(), s.port, s.weight),
                      MEMCACHED_SUCCESS);
    }
    ~LibmemcachedPlacement() { memcached_free(memc_); }
    LibmemcachedPlacement(const LibmemcachedPlacement&) = delete;
    LibmemcachedPlacement& operator=(const LibmemcachedPlacement&) = delete;

    std::uint16_t port_for(const std::string& key) const {
        const std::uint32_t i = memcached_generate_hash(memc_, key.data(), key.size());
        auto inst = memcached_server_instance_by_position(memc_, i);
        return static_cast<std::uint16_t>(memcached_server_port(inst));
    }

  private:
    memcached_st* memc_;
};

}  // namespace folsom::test
