#include "cluster/hash/crc32.hpp"

#include <zlib.h>

namespace folsom::cluster {

std::uint32_t crc32_ieee(std::string_view data) noexcept {
    return crc32_ieee_add(0, data);
}

std::uint32_t crc32_ieee_add(std::uint32_t crc, std::string_view data) noexcept {
    // crc32_z takes a size_t length, so no key is cut at 4 GiB (none is that long anyway).
    return static_cast<std::uint32_t>(
        ::crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

}  // namespace folsom::cluster
