// OutputBuffer: where encoders put requests.
//
// Small pieces (command words, numbers, keys, small values) are copied into one contiguous
// arena; a large value can instead be *referenced* (append_ref), so that it goes to the socket
// by scatter-gather without ever being copied. `segments()` then yields the bytes to write,
// in order, as (pointer, length) pairs: runs of the arena interleaved with referenced blocks.
//
// Lifetimes: a referenced block must stay alive and unchanged until the buffer is cleared (the
// connection keeps the owning value alive in the request until its write completes).
// Pointers returned by segments() are valid until the next append or clear.
//
// Not thread-safe; the owner serialises access.
#pragma once

#include "folsom/export.hpp"

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace folsom::protocol {

class FOLSOM_EXPORT OutputBuffer {
  public:
    /// One contiguous run of bytes to write.
    struct Segment {
        const char* data;
        std::size_t size;
    };

    /// Copies `bytes` into the arena.
    void append(std::string_view bytes) { arena_.append(bytes.data(), bytes.size()); }
    void append(char c) { *arena_.extend(1) = c; }
    /// Grows the arena by `n` bytes and returns where they start, for an encoder to fill in
    /// place (one capacity check for a whole line). Valid until the next append or clear.
    char* extend(std::size_t n) { return arena_.extend(n); }

    /// Appends the decimal form of `v` (no allocation).
    void append_decimal(unsigned long long v) {
        char tmp[20];
        char* p = tmp + sizeof tmp;
        do {
            *--p = static_cast<char>('0' + v % 10);
            v /= 10;
        } while (v != 0);
        arena_.append(p, static_cast<std::size_t>(tmp + sizeof tmp - p));
    }

    /// References `bytes` without copying them; see the lifetime rule above.
    void append_ref(std::string_view bytes) {
        if (bytes.empty()) return;
        refs_.push_back(Ref{arena_.size(), bytes.data(), bytes.size()});
    }

    /// Appends a value: referenced when at least `ref_threshold` bytes, copied otherwise.
    void append_value(std::string_view bytes, std::size_t ref_threshold) {
        if (bytes.size() >= ref_threshold)
            append_ref(bytes);
        else
            append(bytes);
    }

    /// Total bytes to write.
    std::size_t size() const noexcept {
        std::size_t n = arena_.size();
        for (const auto& r : refs_)
            n += r.size;
        return n;
    }
    bool empty() const noexcept { return arena_.empty() && refs_.empty(); }

    /// Calls f(Segment) for every run, in write order.
    template <class F>
    void for_each_segment(F&& f) const {
        std::size_t pos = 0;
        for (const auto& r : refs_) {
            if (r.arena_offset > pos) f(Segment{arena_.data() + pos, r.arena_offset - pos});
            f(Segment{r.data, r.size});
            pos = r.arena_offset;
        }
        if (arena_.size() > pos) f(Segment{arena_.data() + pos, arena_.size() - pos});
    }

    /// Number of segments for_each_segment will produce (upper bound: refs*2+1).
    std::size_t segment_count() const noexcept { return refs_.size() * 2 + 1; }

    /// The whole buffer flattened into one string (tests and simple callers; copies).
    std::string contiguous() const {
        std::string s;
        s.reserve(size());
        for_each_segment([&](Segment seg) { s.append(seg.data, seg.size); });
        return s;
    }

    /// Bytes currently in the arena (encoders use it to roll back a refused request).
    std::size_t arena_size() const noexcept { return arena_.size(); }
    std::size_t ref_count() const noexcept { return refs_.size(); }
    /// Undo appends back to a mark taken with arena_size()/ref_count().
    void truncate(std::size_t arena_mark, std::size_t ref_mark) {
        arena_.resize(arena_mark);
        refs_.resize(ref_mark);
    }

    /// Forgets the contents but keeps the capacity (no allocation in steady state).
    void clear() noexcept {
        arena_.clear();
        refs_.clear();
    }

  private:
    struct Ref {
        std::size_t arena_offset;  // the referenced block goes before arena_[arena_offset]
        const char* data;
        std::size_t size;
    };
    // The arena's bytes: a growable char block whose appends inline to a capacity check and a
    // copy (std::string's out-of-line append and resize cost more than the copy for the
    // few-byte pieces encoders add). Grows geometrically and keeps its capacity across clear(),
    // so a connection's steady state allocates nothing.
    class Bytes {
      public:
        Bytes() noexcept = default;
        Bytes(const Bytes& o) : Bytes() { append(o.data_, o.size_); }
        Bytes(Bytes&& o) noexcept
            : data_(std::exchange(o.data_, nullptr)),
              size_(std::exchange(o.size_, 0)),
              cap_(std::exchange(o.cap_, 0)) {}
        Bytes& operator=(Bytes o) noexcept {
            swap(o);
            return *this;
        }
        ~Bytes() { std::free(data_); }
        void swap(Bytes& o) noexcept {
            std::swap(data_, o.data_);
            std::swap(size_, o.size_);
            std::swap(cap_, o.cap_);
        }

        const char* data() const noexcept { return data_; }
        std::size_t size() const noexcept { return size_; }
        bool empty() const noexcept { return size_ == 0; }
        void clear() noexcept { size_ = 0; }
        /// Shrinks to `n` bytes (n <= size()); growing goes through extend().
        void resize(std::size_t n) noexcept {
            if (n < size_) size_ = n;
        }
        char* extend(std::size_t n) {
            if (cap_ - size_ < n) [[unlikely]]
                grow(n);
            char* p = data_ + size_;
            size_ += n;
            return p;
        }
        void append(const char* p, std::size_t n) {
            if (n != 0) std::memcpy(extend(n), p, n);
        }

      private:
        void grow(std::size_t n) {
            std::size_t cap = cap_ < 256 ? 256 : cap_ * 2;
            while (cap - size_ < n)
                cap *= 2;
            void* p = std::realloc(data_, cap);
            if (p == nullptr) throw std::bad_alloc();
            data_ = static_cast<char*>(p);
            cap_ = cap;
        }

        char* data_ = nullptr;
        std::size_t size_ = 0;
        std::size_t cap_ = 0;
    };

    Bytes arena_;
    std::vector<Ref> refs_;
};

}  // namespace folsom::protocol
