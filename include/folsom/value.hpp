/// @file
/// Values going in and coming out of the client.
///
/// Ownership and lifetime: a Value owns its bytes. A ValueView's views are valid only while
/// the callback that received it runs. A Bytes either views the caller's memory (which must
/// stay valid until the call it is passed to returns) or owns a moved-in std::string.
///
/// Thread-safety: plain values; a Bytes or ValueView must not be shared across threads while
/// the memory it views may change. Errors: none here; a value over Options::max_value_size
/// fails its request with errc::value_too_large.
#pragma once

#include "folsom/export.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace folsom {

/// An owning copy of a stored value: the one copy the client makes on the way in, for the
/// caller to keep.
struct FOLSOM_EXPORT Value {
    std::string data;         ///< the bytes stored (binary-safe)
    std::uint32_t flags = 0;  ///< the item's flags
    std::uint64_t cas = 0;    ///< set by gets/gats (and by every get over the binary protocol)

    /// Same bytes, flags and cas.
    friend bool operator==(const Value&, const Value&) = default;
};

/// A value kept by an owning multi-get result (MultiGetResult): views into the one buffer the
/// result holds all its values in, so that N hits cost O(1) heap allocations, not one each.
///
/// Object lifetimes: `data` is valid as long as the MultiGetResult it came from lives, or any
/// copy of it (copies share the buffer; moving the result keeps the views valid). To keep a
/// value longer, or to take it out of the result, call to_value() (an owning copy).
struct FOLSOM_EXPORT ValueRef {
    std::string_view data;    ///< the value's bytes (in the result's buffer)
    std::uint32_t flags = 0;  ///< the item's flags
    std::uint64_t cas = 0;    ///< set by gets/gats (and by every get over the binary protocol)

    /// An owning copy, to keep independently of the result.
    Value to_value() const { return Value{std::string(data), flags, cas}; }

    /// Same bytes, flags and cas.
    friend bool operator==(const ValueRef&, const ValueRef&) = default;
    /// Same bytes, flags and cas as an owning value.
    friend bool operator==(const ValueRef& a, const Value& b) noexcept {
        return a.data == b.data && a.flags == b.flags && a.cas == b.cas;
    }
};

/// A value as it sits in the connection's read buffer: no copy was made.
///
/// Object lifetimes: the views are valid only until the callback that received the ValueView
/// returns; after that the read buffer is reused. Call to_value() to keep it.
struct FOLSOM_EXPORT ValueView {
    std::string_view key;     ///< the key, as the server named it
    std::string_view data;    ///< the value's bytes
    std::uint32_t flags = 0;  ///< the item's flags
    std::uint64_t cas = 0;    ///< the item's cas (0 when the command does not return it)

    /// An owning copy, to keep after the callback returns.
    Value to_value() const { return Value{std::string(data), flags, cas}; }
};

/// A value to store. Accepts any byte container without forcing a copy at the call site:
///   - std::string_view / const char* / std::span<const std::byte>: viewed, and copied into the
///     connection's write buffer before the call returns (the caller may reuse it at once);
///   - std::string&& : moved in and kept by the request; large values are then written to the
///     socket by scatter-gather straight from it, never copied.
class FOLSOM_EXPORT Bytes {
  public:
    /// Views `v` (copied into the request before the call returns).
    Bytes(std::string_view v) noexcept : view_(v) {}
    /// Views a NUL-terminated string (without its NUL).
    Bytes(const char* s) noexcept : view_(s) {}
    /// Views `s` (copied into the request before the call returns).
    Bytes(const std::string& s) noexcept : view_(s) {}
    /// Takes `s` over; the request keeps it until it completes, so it is never copied.
    Bytes(std::string&& s) noexcept : owned_(std::move(s)), is_owned_(true) { view_ = owned_; }
    /// Views raw bytes (copied into the request before the call returns).
    Bytes(std::span<const std::byte> b) noexcept
        : view_(reinterpret_cast<const char*>(b.data()), b.size()) {}

    /// Moves the bytes (and ownership, if any) from `other`.
    Bytes(Bytes&& other) noexcept
        : owned_(std::move(other.owned_)), view_(other.view_), is_owned_(other.is_owned_) {
        if (is_owned_) view_ = owned_;
    }
    Bytes& operator=(Bytes&&) = delete;
    Bytes(const Bytes&) = delete;

    /// The bytes; valid while this Bytes (or, for a view, the viewed memory) lives.
    std::string_view view() const noexcept { return view_; }
    /// Number of bytes.
    std::size_t size() const noexcept { return view_.size(); }
    /// True when the bytes live in this object (moved-in std::string).
    bool owned() const noexcept { return is_owned_; }

  private:
    std::string owned_;
    std::string_view view_;
    bool is_owned_ = false;
};

}  // namespace folsom
