// detail::BlockingLoop with Callers::one (the libmemcached drop-in's loop: one thread at a time
// calls it, so its lead and the requests' outcomes take no lock and wake nobody): requests
// still complete whichever way their handler comes, and the loop may change threads between
// calls. No connection: the "requests" are handlers posted to the loop's io_context.
#include "folsom/detail/blocking_loop.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace {

using folsom::detail::BlockingLoop;
using folsom::detail::WaitHandler;
using folsom::detail::WaitSlot;

// Starts `start(handler)` on the loop and waits for its outcome, as the drop-in's run() does.
template <class T, class Start>
WaitSlot<T> run(BlockingLoop& loop, Start&& start) {
    WaitSlot<T> slot;
    const bool lead = loop.start([&] { start(WaitHandler<T>{&slot, &loop}); });
    loop.wait([&] { return slot.done; }, lead);
    return slot;
}

TEST(BlockingLoopOneCaller, ARequestCompletedInsideItsStartIsDone) {
    BlockingLoop loop(false, ASIO_CONCURRENCY_HINT_UNSAFE_IO, BlockingLoop::Callers::one);
    auto slot = run<int>(loop, [](auto handler) { handler(std::error_code{}, 7); });
    EXPECT_TRUE(slot.done);
    EXPECT_FALSE(slot.error);
    EXPECT_EQ(slot.value, 7);
}

TEST(BlockingLoopOneCaller, APostedCompletionRunsWhenTheCallerDrives) {
    BlockingLoop loop(false, ASIO_CONCURRENCY_HINT_UNSAFE_IO, BlockingLoop::Callers::one);
    auto slot = run<std::string>(loop, [&](auto handler) {
        asio::post(loop.io(), [handler] { handler(std::error_code{}, std::string("posted")); });
    });
    EXPECT_EQ(slot.value, "posted");
}

TEST(BlockingLoopOneCaller, ATimersCompletionRunsWhenTheCallerDrives) {
    BlockingLoop loop(false, ASIO_CONCURRENCY_HINT_UNSAFE_IO, BlockingLoop::Callers::one);
    asio::steady_timer timer(loop.io());
    const auto t0 = std::chrono::steady_clock::now();
    auto slot = run<int>(loop, [&](auto handler) {
        timer.expires_after(std::chrono::milliseconds(20));
        timer.async_wait([handler](std::error_code ec) { handler(ec, 1); });
    });
    EXPECT_FALSE(slot.error);
    EXPECT_EQ(slot.value, 1);
    EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(20));
}

// The scheduler keeps its lock under UNSAFE_IO: a helper thread (as Asio's resolver's) may post
// the completion while the caller drives.
TEST(BlockingLoopOneCaller, ACompletionPostedFromAHelperThreadRunsOnTheCaller) {
    BlockingLoop loop(false, ASIO_CONCURRENCY_HINT_UNSAFE_IO, BlockingLoop::Callers::one);
    std::thread helper;
    std::thread::id ran_on;
    auto slot = run<int>(loop, [&](auto handler) {
        helper = std::thread([&loop, &ran_on, handler] {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            asio::post(loop.io(), [&ran_on, handler] {
                ran_on = std::this_thread::get_id();
                handler(std::error_code{}, 3);
            });
        });
    });
    helper.join();
    EXPECT_EQ(slot.value, 3);
    EXPECT_EQ(ran_on, std::this_thread::get_id());
}

// One thread at a time, not always the same one: libmemcached's pool hands a handle from
// thread to thread (the hand-over orders the calls).
TEST(BlockingLoopOneCaller, TheCallerMayChangeBetweenRequests) {
    BlockingLoop loop(false, ASIO_CONCURRENCY_HINT_UNSAFE_IO, BlockingLoop::Callers::one);
    int total = 0;
    for (int t = 0; t < 4; ++t) {
        std::thread caller([&] {
            for (int i = 0; i < 50; ++i) {
                auto slot = run<int>(loop, [&](auto handler) {
                    asio::post(loop.io(), [handler, i] { handler(std::error_code{}, i); });
                });
                total += slot.value;
            }
        });
        caller.join();
    }
    EXPECT_EQ(total, 4 * (49 * 50 / 2));
}

}  // namespace
