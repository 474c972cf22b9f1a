// An io_context run by one thread of its own for a whole test: the client's I/O thread, so
// that the test thread starts requests from outside the io_context, as an application does.
#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include <thread>

namespace folsom::test {

class IoRunner {
  public:
    IoRunner() : work_(asio::make_work_guard(io_)), thread_([this] { io_.run(); }) {}
    ~IoRunner() {
        work_.reset();
        io_.stop();
        thread_.join();
    }
    IoRunner(const IoRunner&) = delete;
    IoRunner& operator=(const IoRunner&) = delete;

    asio::io_context& io() { return io_; }

  private:
    asio::io_context io_;
    asio::executor_work_guard<asio::io_context::executor_type> work_;
    std::thread thread_;
};

}  // namespace folsom::test
