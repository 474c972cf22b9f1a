// What the decoder fuzz targets share: the input layout, the connection-like feeding loop, the
// invariants every parse() must keep, and the owning outcome the differential targets compare.
//
// Input layout (the same for every decoder target, so one seed file serves them all):
//
//   byte 0     limits selector: low nibble picks max_line_length, high nibble max_value_size
//              (0 = the defaults; the others are small, so every size limit is reachable)
//   byte 1     how the stream arrives: whole, fixed chunks, byte by byte, or random cuts
//   bytes 2-3  seed of the random cuts
//   bytes 4..  the byte stream a server sent
//
// A decoder is described to the harness by a traits struct:
//
//   using Decoder, Reply, ParseState;
//   struct Owned { explicit Owned(const Reply&); bool operator==(const Owned&) const; };
//   template <class F> static void for_each_view(const Reply&, F f);   // f(std::string_view)
//   static constexpr std::string_view valid_reply;  // one complete reply under any Limits
#pragma once

#include "folsom/protocol/limits.hpp"

#include "fuzz_check.hpp"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace folsom::fuzz {

inline constexpr std::size_t header_size = 4;
// Longer streams add no new states, only time (feeding byte by byte copies the unconsumed
// bytes on every read, as a connection compacting its buffer would).
inline constexpr std::size_t max_stream = 8 * 1024;

inline protocol::Limits limits_from(std::uint8_t selector) {
    static constexpr std::size_t lines[16] = {8 * 1024, 5,   8,   12,  16,  24,  32,  48,
                                              64,       100, 128, 200, 256, 300, 512, 1024};
    static constexpr std::size_t values[16] = {1024 * 1024, 0,  1,  2,   3,   4,   7,    8,
                                               15,          16, 64, 100, 255, 256, 1000, 4096};
    protocol::Limits l;
    l.max_line_length = lines[selector & 0x0f];
    l.max_value_size = values[selector >> 4];
    return l;
}

/// Ascending offsets in (0, size) where reads end. `mode` picks the shape, `seed` the randomness.
inline std::vector<std::size_t> cuts_from(std::uint8_t mode, std::uint16_t seed, std::size_t size) {
    std::vector<std::size_t> cuts;
    const std::size_t param = (mode >> 2) + 1;  // 1..64
    std::uint32_t rng = 0x9e3779b9u ^ (std::uint32_t{seed} * 0x85ebca6bu) ^ mode;
    auto next = [&] {  // xorshift32: deterministic, so a saved input replays exactly
        rng ^= rng << 13;
        rng ^= rng >> 17;
        rng ^= rng << 5;
        return rng;
    };
    switch (mode & 3) {
        case 0:  // whole: one read
            break;
        case 1:  // fixed-size reads
            for (std::size_t c = param; c < size; c += param)
                cuts.push_back(c);
            break;
        case 2:  // random reads of 1..param bytes
            for (std::size_t c = 1 + next() % param; c < size; c += 1 + next() % param)
                cuts.push_back(c);
            break;
        case 3:  // mostly tiny reads with an occasional large one (a value arriving in bulk)
            for (std::size_t c = 1; c < size;) {
                cuts.push_back(c);
                const std::uint32_t r = next();
                c += (r & 7) != 0 ? 1 + (r >> 3) % 3 : 1 + (r >> 3) % (param * 16);
            }
            break;
    }
    return cuts;
}

/// Everything feeding a stream produced, owning, so two feedings can be compared.
template <class Owned>
struct Outcome {
    std::vector<Owned> replies;
    bool failed = false;
    std::string error_reason;
    std::size_t error_offset = 0;  // relative to the unconsumed bytes of the failing parse()
    std::size_t leftover = 0;      // bytes of an incomplete reply at the end (not on error)
    bool operator==(const Outcome&) const = default;
};

/// Feeds `stream` to a fresh decoder the way a connection's read loop does: a read ends at each
/// cut; after each read every complete reply at the front is decoded and dropped. Checks the
/// parse() contract on every call.
///
/// Every read moves the unconsumed bytes into a new allocation of exactly their size: a decoder
/// that kept a pointer into an earlier input, or reads one byte past the input, touches freed or
/// unallocated memory, which AddressSanitizer reports.
template <class T>
Outcome<typename T::Owned> feed(const protocol::Limits& limits, std::string_view stream,
                                const std::vector<std::size_t>& cuts) {
    using State = typename T::ParseState;
    typename T::Decoder decoder(limits);
    Outcome<typename T::Owned> outcome;
    std::unique_ptr<char[]> buffer;
    std::size_t buffered = 0;    // bytes in `buffer`
    std::size_t front = 0;       // consumed bytes at the front of `buffer`
    std::size_t fed = 0;         // bytes of `stream` read so far
    std::size_t must_reach = 0;  // unconsumed size the last need_more said is necessary
    std::size_t next_cut = 0;

    for (;;) {
        for (;;) {
            const std::string_view in(buffer.get() + front, buffered - front);
            typename T::Reply reply{};
            const auto res = decoder.parse(in, reply);
            FUZZ_CHECK(res.consumed <= in.size(), "consumed more than the input");
            if (res.state == State::complete) {
                FUZZ_CHECK(res.consumed > 0, "a complete reply consumed nothing");
                FUZZ_CHECK(!decoder.failed(), "complete, yet failed() is set");
                FUZZ_CHECK(in.size() >= must_reach,
                           "need_more asked for more bytes than the reply needed");
                T::for_each_view(reply, [&](std::string_view v) {
                    if (v.empty()) return;
                    FUZZ_CHECK(
                        v.data() >= in.data() && v.data() + v.size() <= in.data() + res.consumed,
                        "a view points outside the bytes the reply consumed");
                });
                outcome.replies.emplace_back(reply);
                front += res.consumed;
                must_reach = 0;
                continue;
            }
            if (res.state == State::need_more) {
                FUZZ_CHECK(res.consumed == 0, "need_more consumed bytes");
                FUZZ_CHECK(res.needed > 0, "need_more asked for 0 bytes");
                FUZZ_CHECK(!decoder.failed(), "need_more, yet failed() is set");
                must_reach = in.size() + res.needed;
                break;
            }
            // Error.
            FUZZ_CHECK(res.state == State::error, "unknown parse state");
            FUZZ_CHECK(res.consumed == 0, "error consumed bytes");
            FUZZ_CHECK(decoder.failed(), "error, yet failed() is clear");
            const auto& e = decoder.error();
            FUZZ_CHECK(e.reason != nullptr && e.reason[0] != '\0', "error without a reason");
            FUZZ_CHECK(e.offset <= in.size(), "error offset past the input");
            FUZZ_CHECK(e.context_size < sizeof e.context, "error context overflows");
            FUZZ_CHECK(std::strlen(e.context) == e.context_size, "error context not terminated");
            FUZZ_CHECK(!e.message().empty(), "empty error message");
            outcome.failed = true;
            outcome.error_reason = e.reason;
            outcome.error_offset = e.offset;

            // Sticky: the same bytes, a valid reply, nothing at all: all still an error, and
            // the first error stays the one reported.
            const char* const reason = e.reason;
            const std::size_t offset = e.offset;
            typename T::Reply again{};
            for (std::string_view retry : {in, T::valid_reply, std::string_view{}}) {
                const auto r2 = decoder.parse(retry, again);
                FUZZ_CHECK(r2.state == State::error && r2.consumed == 0, "error is not sticky");
            }
            FUZZ_CHECK(decoder.error().reason == reason && decoder.error().offset == offset,
                       "a later parse() changed the reported error");
            // reset() makes the decoder usable again.
            decoder.reset();
            FUZZ_CHECK(!decoder.failed(), "reset() left failed() set");
            const auto r3 = decoder.parse(T::valid_reply, again);
            FUZZ_CHECK(r3.state == State::complete && r3.consumed == T::valid_reply.size(),
                       "a reset decoder does not decode a valid reply");
            return outcome;
        }

        if (fed == stream.size()) {
            outcome.leftover = buffered - front;
            return outcome;
        }
        // The next read.
        while (next_cut < cuts.size() && cuts[next_cut] <= fed)
            ++next_cut;
        const std::size_t end = next_cut < cuts.size() ? cuts[next_cut++] : stream.size();
        const std::size_t keep = buffered - front;
        auto moved = std::make_unique<char[]>(keep + (end - fed));
        if (keep != 0) std::memcpy(moved.get(), buffer.get() + front, keep);
        std::memcpy(moved.get() + keep, stream.data() + fed, end - fed);
        buffer = std::move(moved);
        buffered = keep + (end - fed);
        front = 0;
        fed = end;
    }
}

/// The invariant target: feed the stream as the header says, checking every call.
template <class T>
int run_invariants(const std::uint8_t* data, std::size_t size) {
    if (size < header_size) return 0;
    const std::string_view stream(reinterpret_cast<const char*>(data) + header_size,
                                  std::min(size - header_size, max_stream));
    const auto limits = limits_from(data[0]);
    const auto seed = static_cast<std::uint16_t>(data[2] | (data[3] << 8));
    feed<T>(limits, stream, cuts_from(data[1], seed, stream.size()));
    return 0;
}

/// The differential target: the stream in one read and in the header's cuts decodes to the
/// same replies and ends the same way (same error at the same place, or same leftover).
template <class T>
int run_differential(const std::uint8_t* data, std::size_t size) {
    if (size < header_size) return 0;
    const std::string_view stream(reinterpret_cast<const char*>(data) + header_size,
                                  std::min(size - header_size, max_stream));
    const auto limits = limits_from(data[0]);
    const auto seed = static_cast<std::uint16_t>(data[2] | (data[3] << 8));
    // Mode 0 (one read) would compare the whole stream with itself: use fixed-size reads.
    const std::uint8_t mode = (data[1] & 3) == 0 ? std::uint8_t(data[1] | 1) : data[1];
    const auto whole = feed<T>(limits, stream, {});
    const auto split = feed<T>(limits, stream, cuts_from(mode, seed, stream.size()));
    FUZZ_CHECK(split.replies.size() == whole.replies.size(), "split feeding: reply count differs");
    for (std::size_t i = 0; i < whole.replies.size(); ++i)
        FUZZ_CHECK(split.replies[i] == whole.replies[i], "split feeding: a reply differs");
    FUZZ_CHECK(split.failed == whole.failed, "split feeding: one failed, the other did not");
    FUZZ_CHECK(split.error_reason == whole.error_reason, "split feeding: different error");
    FUZZ_CHECK(split.error_offset == whole.error_offset, "split feeding: different error offset");
    FUZZ_CHECK(split.leftover == whole.leftover, "split feeding: different leftover");
    return 0;
}

}  // namespace folsom::fuzz
