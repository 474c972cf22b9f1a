/// @file
/// Expiry: when a stored item expires, as a time to live (a duration, Ttl) or as an absolute
/// time (a std::chrono::system_clock::time_point). Every Client call that takes a ttl takes
/// an Expiry, so both work everywhere:
///
///     client.set("k", "v", std::chrono::minutes(5), token);                        // in 5 min
///     client.set("k", "v", std::chrono::system_clock::now() + std::chrono::hours(1), token);
///     client.touch("k", folsom::Expiry::from_exptime(1767225600), token);  // memcached's way
///
/// How each is sent (memcached reads an exptime up to 30 days, 2,592,000 s, as relative and
/// anything above as an absolute Unix time; the text protocol parses it as a signed 32-bit
/// number, so the last representable instant is 2038-01-19 03:14:07 UTC):
///   * a duration: 0 never expires; negative is already expired; up to 30 days is sent as it
///     is; longer is turned into the absolute time now + ttl (capped at the last
///     representable instant) when the request is made.
///   * a time point: sent as its Unix time, whole seconds rounded down. A time in the past
///     expires the item at once (including the epoch itself, which is not "never"). Before
///     the epoch, or after 2038-01-19 03:14:07 UTC, it cannot be sent: the request fails
///     with errc::invalid_argument and nothing is sent.
///   * from_exptime(n): memcached's own convention, passed through unchanged (for bindings
///     and programs that already hold an exptime: the Python package, the `folsom` program):
///     0 never, negative already expired, 1..2,592,000 relative, above it an absolute Unix
///     time; above 2^31-1 the request fails with errc::invalid_argument.
///
/// Errors: an Expiry that cannot be sent fails its request with errc::invalid_argument, as
/// above; building one never throws. Thread-safety: a plain value.
#pragma once

#include "folsom/export.hpp"

#include <chrono>
#include <cstdint>
#include <type_traits>

namespace folsom {

/// Time to live of a stored item. 0 means "never expires"; negative means "already expired".
/// Longer than 30 days is sent as an absolute Unix time, as memcached requires.
using Ttl = std::chrono::seconds;

/// When an item expires: a Ttl, an absolute time, or a raw memcached exptime (see the file
/// comment for how each is sent). Converts implicitly from any duration that converts to
/// whole seconds and from any system_clock time point. Default: never expires.
class FOLSOM_EXPORT Expiry {
  public:
    /// Never expires (exptime 0).
    constexpr Expiry() noexcept = default;

    /// A time to live, from now (seconds, minutes, hours, ...).
    template <class Rep, class Period>
    requires std::is_convertible_v<std::chrono::duration<Rep, Period>, Ttl>
    constexpr Expiry(std::chrono::duration<Rep, Period> ttl) noexcept  // NOLINT: implicit
        : kind_(Kind::relative), seconds_(Ttl(ttl).count()) {}

    /// An absolute time (whole seconds, rounded down).
    template <class Duration>
    constexpr Expiry(
        std::chrono::time_point<std::chrono::system_clock, Duration> at) noexcept  // NOLINT
        : kind_(Kind::absolute), seconds_(std::chrono::floor<Ttl>(at.time_since_epoch()).count()) {}

    /// memcached's exptime convention, sent unchanged: 0 never, negative already expired,
    /// up to 30 days relative, above that an absolute Unix time.
    static constexpr Expiry from_exptime(std::int64_t exptime) noexcept {
        return Expiry(Kind::exptime, exptime);
    }

    /// How the value was given.
    enum class Kind : std::uint8_t {
        relative,  ///< a duration from now
        absolute,  ///< Unix time in seconds
        exptime,   ///< memcached's convention
    };
    /// Which of the three forms this is.
    constexpr Kind kind() const noexcept { return kind_; }
    /// The seconds as given: the duration, the Unix time, or the exptime.
    constexpr std::int64_t count() const noexcept { return seconds_; }

    /// Same form and same seconds.
    friend constexpr bool operator==(const Expiry&, const Expiry&) noexcept = default;

  private:
    constexpr Expiry(Kind k, std::int64_t s) noexcept : kind_(k), seconds_(s) {}
    Kind kind_ = Kind::relative;
    std::int64_t seconds_ = 0;
};

namespace detail {
/// An exptime that cannot be sent (an Expiry before the epoch or past 2038-01-19): no valid
/// exptime is this large (memcached parses exptimes as signed 32-bit numbers), so the client
/// refuses a request carrying it before anything is sent.
inline constexpr std::uint32_t invalid_exptime = 0xffffffffu;
/// The largest exptime memcached's text parser takes (2038-01-19 03:14:07 UTC).
inline constexpr std::int64_t max_exptime = 0x7fffffff;
/// memcached's boundary: exptimes up to this are relative, above it absolute.
inline constexpr std::int64_t thirty_days = 60 * 60 * 24 * 30;
/// An exptime meaning "already expired": an absolute time in 1970 (memcached's own encoding
/// of a negative exptime).
inline constexpr std::uint32_t expired_exptime = thirty_days + 1;

/// memcached's exptime for `e` when the request is made at Unix time `now` (seconds), or
/// invalid_exptime when it cannot be sent.
constexpr std::uint32_t to_exptime(Expiry e, std::int64_t now) noexcept {
    const std::int64_t s = e.count();
    switch (e.kind()) {
        case Expiry::Kind::relative:
            if (s == 0) return 0;
            if (s < 0) return expired_exptime;
            if (s <= thirty_days) return static_cast<std::uint32_t>(s);
            return static_cast<std::uint32_t>(now > max_exptime - s ? max_exptime : now + s);
        case Expiry::Kind::absolute:
            if (s < 0 || s > max_exptime) return invalid_exptime;
            // Every instant up to 30 days after the epoch is in the past; sent as it is it would
            // read as a relative ttl (and 0 as "never").
            return s <= thirty_days ? expired_exptime : static_cast<std::uint32_t>(s);
        case Expiry::Kind::exptime:
            if (s < 0) return expired_exptime;
            return s > max_exptime ? invalid_exptime : static_cast<std::uint32_t>(s);
    }
    return invalid_exptime;
}

/// As to_exptime(e, now) with the system clock's now (read only for a duration over 30 days).
FOLSOM_EXPORT std::uint32_t to_exptime(Expiry e) noexcept;
}  // namespace detail

}  // namespace folsom
