// WeightedCh3: mcrouter's weighted Ch3 (WeightedCh3HashFunc, "WeightedCh3" in a HashRoute's
// hash_func), bit for bit. Each server has a weight in [0, 1]; a key goes to furc_hash(key, n)
// when a second hash of the key (SpookyHash V2, 32 bits, seed 0xface2014) falls under that
// server's weight, and otherwise tries again with the key salted "0", "1", ... "9", "01",
// "11", ... (the try count in reversed decimal), 32 tries in all, keeping the last answer.
//
// With every weight 1 it is Ch3 itself. Lowering one server's weight moves only a share of
// that server's keys, spread over the others; the rest stay where they are.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace folsom::cluster {

/// The index, in [0, weights.size()), of the server that owns `key`; 0 for no servers. A
/// weight below 0 (or NaN) counts as 0 and one above 1 as 1. Allocates only for a key longer
/// than 510 bytes (memcached keys are at most 250).
std::uint32_t weighted_ch3(std::string_view key, std::span<const double> weights);

}  // namespace folsom::cluster
