#include "folsom/blocking_client.hpp"

namespace folsom {

BlockingClient::BlockingClient(const Options& options)
    : io_(1), work_(asio::make_work_guard(io_)), client_(Client::connect(io_, options)) {
    thread_ = std::thread([this] { io_.run(); });
}

BlockingClient::BlockingClient(const std::function<Client(asio::any_io_executor)>& make)
    : io_(1), work_(asio::make_work_guard(io_)), client_(make(io_.get_executor())) {
    thread_ = std::thread([this] { io_.run(); });
}

BlockingClient::~BlockingClient() {
    client_.shutdown();
    // Let the I/O thread deliver the closed completions, then stop it.
    work_.reset();
    asio::post(io_, [this] { client_ = Client(); });
    thread_.join();
}

}  // namespace folsom
