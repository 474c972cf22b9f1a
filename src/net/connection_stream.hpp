// Connection's asynchronous read and write over whichever transport is live: the plain socket,
// or the TLS stream over its own socket. Included by the files that read or write
// (connection_connect.cpp, connection_write.cpp, connection_read.cpp).
#pragma once

#include "net/connection.hpp"

#include <asio/bind_allocator.hpp>
#include <asio/write.hpp>

#include <utility>

namespace folsom::net {

template <class Buffers, class Handler>
void Connection::async_read_some(const Buffers& b, Handler&& h) {
    if (tls_) {
        const auto allocator = asio::get_associated_allocator(h);
        tls_->async_read_some(
            b, asio::bind_allocator(
                   allocator, [s = tls_, h = std::forward<Handler>(h)](
                                  const std::error_code& ec, std::size_t n) mutable { h(ec, n); }));
    } else {
        socket_.async_read_some(b, std::forward<Handler>(h));
    }
}

template <class Buffers, class Handler>
void Connection::async_write_all(const Buffers& b, Handler&& h) {
    if (tls_)
        asio::async_write(*tls_, b,
                          [s = tls_, h = std::forward<Handler>(h)](
                              const std::error_code& ec, std::size_t n) mutable { h(ec, n); });
    else
        asio::async_write(socket_, b, std::forward<Handler>(h));
}

}  // namespace folsom::net
