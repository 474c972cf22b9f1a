#include "folsom/blocking_client.hpp"

#include <new>
#include <utility>

namespace folsom {

namespace {

// The I/O thread's io_context is told it has one runner (Asio then skips waking other
// threads); a caller-driven one is run by several threads over time, one at a time.
int concurrency_hint(BlockingClient::Driver driver) {
    return driver == BlockingClient::Driver::io_thread ? 1 : ASIO_CONCURRENCY_HINT_DEFAULT;
}

}  // namespace

BlockingClient::BlockingClient(const Options& options, Driver driver)
    : make_(
          [options](asio::any_io_executor ex) { return Client::connect(std::move(ex), options); }),
      driver_(driver),
      forks_(detail::fork_generation()),
      loop_(driver == Driver::io_thread, concurrency_hint(driver)),
      client_(make_(loop_.io().get_executor())) {}

BlockingClient::BlockingClient(const std::function<Client(asio::any_io_executor)>& make,
                               Driver driver)
    : make_(make),
      driver_(driver),
      forks_(detail::fork_generation()),
      loop_(driver == Driver::io_thread, concurrency_hint(driver)),
      client_(make_(loop_.io().get_executor())) {}

void BlockingClient::abandon_inherited() {
    // Placement over the members without destroying them: the old objects' destructors would
    // join a thread that does not exist in this process and deregister sockets from an epoll
    // instance the parent still uses. Their memory is left to the process.
    new (&client_) Client();
    new (&loop_) detail::BlockingLoop(false, concurrency_hint(Driver::caller));
    forks_ = detail::fork_generation();
}

void BlockingClient::restart_after_fork() {
    abandon_inherited();
    if (driver_ == Driver::io_thread) {
        loop_.~BlockingLoop();  // the harmless one: no thread, nothing pending
        new (&loop_) detail::BlockingLoop(true, concurrency_hint(driver_));
    }
    client_ = make_(loop_.io().get_executor());
}

BlockingClient::~BlockingClient() {
    if (detail::fork_generation() != forks_) abandon_inherited();  // never used in this child
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
