#include "folsom/blocking_client.hpp"

namespace folsom {

namespace {

// The I/O thread's io_context is told it has one runner (Asio then skips waking other
// threads); a caller-driven one is run by several threads over time, one at a time.
int concurrency_hint(BlockingClient::Driver driver) {
    return driver == BlockingClient::Driver::io_thread ? 1 : ASIO_CONCURRENCY_HINT_DEFAULT;
}

}  // namespace

BlockingClient::BlockingClient(const Options& options, Driver driver)
    : loop_(driver == Driver::io_thread, concurrency_hint(driver)),
      client_(Client::connect(loop_.io(), options)) {}

BlockingClient::BlockingClient(const std::function<Client(asio::any_io_executor)>& make,
                               Driver driver)
    : loop_(driver == Driver::io_thread, concurrency_hint(driver)),
      client_(make(loop_.io().get_executor())) {}

BlockingClient::~BlockingClient() {
    client_.shutdown();
    if (loop_.threaded()) {
        // Let the I/O thread deliver the closed completions and drop the client there, then
        // let it run out of work.
        asio::post(loop_.io(), [this] { client_ = Client(); });
    } else {
        client_ = Client();  // (its closing completions run in stop(), on this thread)
    }
    loop_.stop();
}

}  // namespace folsom
