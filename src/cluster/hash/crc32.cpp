#include "cluster/hash/crc32.hpp"

#include "folsom/config.hpp"

#if FOLSOM_HAVE_ZLIB
#include <zlib.h>
#endif

namespace folsom::cluster {

std::uint32_t crc32_ieee(std::string_view data) noexcept {
    return crc32_ieee_add(0, data);
}

std::uint32_t crc32_ieee_add(std::uint32_t crc, std::string_view data) noexcept {
#if FOLSOM_HAVE_ZLIB
    // crc32_z takes a size_t length, so no key is cut at 4 GiB (none is that long anyway).
    return static_cast<std::uint32_t>(
        ::crc32_z(crc, reinterpret_cast<const Bytef*>(data.data()), data.size()));
#else
    // A build without zlib (FOLSOM_WITH_ZLIB=OFF) still places keys as gomemcache, Dalli and
    // pecl-memcache do: the same CRC-32 (reflected, polynomial 0xEDB88320), a bit at a time.
    crc = ~crc;
    for (unsigned char byte : data) {
        crc ^= byte;
        for (int bit = 0; bit < 8; ++bit)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
#endif
}

}  // namespace folsom::cluster
