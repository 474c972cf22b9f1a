// ReadBuffer: the connection's receive buffer.
//
//   0          begin_            end_                 storage_.size()
//   |  consumed  |   unparsed     |        free          |
//
// The socket reads into the free area (prepare/commit); the decoder looks at the unparsed
// area (data) and the connection drops what it decoded (consume). Space is reclaimed lazily:
// when everything is consumed the buffer rewinds for free; otherwise the unparsed bytes move
// to the front only when the free area is too small, and the storage grows only when even
// that is not enough. The size is bounded by the caller (protocol limits), so a server can
// never make it grow without bound.
#pragma once

#include <cstddef>
#include <cstring>
#include <span>
#include <string_view>
#include <vector>

namespace folsom::net {

class ReadBuffer {
  public:
    explicit ReadBuffer(std::size_t initial = 64 * 1024) : storage_(initial) {}

    std::string_view data() const noexcept { return {storage_.data() + begin_, end_ - begin_}; }
    std::size_t size() const noexcept { return end_ - begin_; }
    std::size_t capacity() const noexcept { return storage_.size(); }

    /// A writable area of at least `min_free` bytes after the unparsed data (more if there is).
    std::span<char> prepare(std::size_t min_free) {
        if (begin_ == end_) begin_ = end_ = 0;
        if (storage_.size() - end_ < min_free) {
            if (begin_ > 0) {  // compact
                std::memmove(storage_.data(), storage_.data() + begin_, end_ - begin_);
                end_ -= begin_;
                begin_ = 0;
            }
            if (storage_.size() - end_ < min_free) storage_.resize(end_ + min_free);
        }
        return {storage_.data() + end_, storage_.size() - end_};
    }
    void commit(std::size_t n) noexcept { end_ += n; }
    void consume(std::size_t n) noexcept {
        begin_ += n;
        if (begin_ == end_) begin_ = end_ = 0;
    }
    /// Drops everything; shrinks back to `keep` bytes when it had grown past it (a large value
    /// should not pin memory on an idle connection).
    void clear(std::size_t keep = 64 * 1024) {
        begin_ = end_ = 0;
        if (storage_.size() > keep) {
            storage_.resize(keep);
            storage_.shrink_to_fit();
        }
    }

  private:
    std::vector<char> storage_;
    std::size_t begin_ = 0;
    std::size_t end_ = 0;
};

}  // namespace folsom::net
