// Values going in and coming out of the client.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace folsom {

/// An owning copy of a stored value: the one copy the client makes on the way in, for the
/// caller to keep.
struct Value {
    std::string data;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;  ///< set by gets/gats (and by every get over the binary protocol)

    friend bool operator==(const Value&, const Value&) = default;
};

/// A value as it sits in the connection's read buffer: no copy was made.
///
/// Object lifetimes: the views are valid only until the callback that received the ValueView
/// returns; after that the read buffer is reused. Call to_value() to keep it.
struct ValueView {
    std::string_view key;
    std::string_view data;
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;

    Value to_value() const { return Value{std::string(data), flags, cas}; }
};

/// A value to store. Accepts any byte container without forcing a copy at the call site:
///   - std::string_view / const char* / std::span<const std::byte>: viewed, and copied into the
///     connection's write buffer before the call returns (the caller may reuse it at once);
///   - std::string&& : moved in and kept by the request; large values are then written to the
///     socket by scatter-gather straight from it, never copied.
class Bytes {
  public:
    Bytes(std::string_view v) noexcept : view_(v) {}
    Bytes(const char* s) noexcept : view_(s) {}
    Bytes(const std::string& s) noexcept : view_(s) {}
    Bytes(std::string&& s) noexcept : owned_(std::move(s)), is_owned_(true) { view_ = owned_; }
    Bytes(std::span<const std::byte> b) noexcept
        : view_(reinterpret_cast<const char*>(b.data()), b.size()) {}

    Bytes(Bytes&& other) noexcept
        : owned_(std::move(other.owned_)), view_(other.view_), is_owned_(other.is_owned_) {
        if (is_owned_) view_ = owned_;
    }
    Bytes& operator=(Bytes&&) = delete;
    Bytes(const Bytes&) = delete;

    std::string_view view() const noexcept { return view_; }
    std::size_t size() const noexcept { return view_.size(); }
    /// True when the bytes live in this object (moved-in std::string).
    bool owned() const noexcept { return is_owned_; }

  private:
    std::string owned_;
    std::string_view view_;
    bool is_owned_ = false;
};

}  // namespace folsom
