// folsom::WriteHere's marks on the thread, and the one rule the library derives from them:
// whether a completion handler may run on this thread now (detail::completes_inline_here).
// No connection: the rule is checked on an io_context that nothing but this test runs.
#include "folsom/detail/write_here.hpp"
#include "folsom/send_batch.hpp"

#include <asio/io_context.hpp>
#include <asio/post.hpp>
#include <gtest/gtest.h>

#include <thread>

namespace {

using folsom::WriteHere;
using folsom::detail::completes_inline_here;
using folsom::detail::this_thread_runs_handlers_inline;
using folsom::detail::this_thread_writes_here;
using Handlers = folsom::WriteHere::Handlers;

TEST(WriteHereMarks, AGuardMarksItsThreadWhileItLivesAndNests) {
    EXPECT_FALSE(this_thread_writes_here());
    EXPECT_FALSE(this_thread_runs_handlers_inline());
    {
        WriteHere outer;
        EXPECT_TRUE(this_thread_writes_here());
        EXPECT_FALSE(this_thread_runs_handlers_inline());  // never_inline by default
        {
            WriteHere inner(true, Handlers::may_run_inline);
            EXPECT_TRUE(this_thread_writes_here());
            EXPECT_TRUE(this_thread_runs_handlers_inline());
        }
        EXPECT_TRUE(this_thread_writes_here());  // the outer guard still marks it
        EXPECT_FALSE(this_thread_runs_handlers_inline());
    }
    EXPECT_FALSE(this_thread_writes_here());
}

TEST(WriteHereMarks, AnUnmarkedGuardDoesNothingEvenWithInlineHandlers) {
    WriteHere off(false, Handlers::may_run_inline);
    EXPECT_FALSE(this_thread_writes_here());
    EXPECT_FALSE(this_thread_runs_handlers_inline());
}

TEST(WriteHereMarks, TheMarksBelongToOneThread) {
    WriteHere here(true, Handlers::may_run_inline);
    bool other_writes = true;
    bool other_inline = true;
    std::thread t([&] {
        other_writes = this_thread_writes_here();
        other_inline = this_thread_runs_handlers_inline();
    });
    t.join();
    EXPECT_FALSE(other_writes);
    EXPECT_FALSE(other_inline);
    EXPECT_TRUE(this_thread_writes_here());
}

TEST(WriteHereMarks, TheDeprecatedQueriesStillAnswer) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    EXPECT_FALSE(WriteHere::active());
    {
        WriteHere here(true, Handlers::may_run_inline);
        EXPECT_TRUE(WriteHere::active());
        EXPECT_TRUE(WriteHere::handlers_may_run_inline());
    }
    EXPECT_FALSE(WriteHere::active());
    EXPECT_FALSE(WriteHere::handlers_may_run_inline());
#pragma GCC diagnostic pop
}

TEST(CompletesInlineHere, NeverWithoutAnInlineContext) {
    WriteHere here(true, Handlers::may_run_inline);
    EXPECT_FALSE(completes_inline_here(nullptr, false));
    EXPECT_FALSE(completes_inline_here(nullptr, true));
}

TEST(CompletesInlineHere, OutsideTheLoopOnlyOnAWriteHereThread) {
    asio::io_context io;
    EXPECT_FALSE(completes_inline_here(&io, false));  // io does not run here
    WriteHere here;
    EXPECT_TRUE(completes_inline_here(&io, false));  // this thread is io's only runner
    // From the call that started the request: Asio's promise holds unless the thread drops it.
    EXPECT_FALSE(completes_inline_here(&io, true));
    WriteHere inline_handlers(true, Handlers::may_run_inline);
    EXPECT_TRUE(completes_inline_here(&io, true));
}

TEST(CompletesInlineHere, InsideTheLoopWhenNotFromTheInitiatingCall) {
    asio::io_context io;
    bool from_loop = false;
    bool from_initiator = true;
    asio::post(io, [&] {
        from_loop = completes_inline_here(&io, false);
        from_initiator = completes_inline_here(&io, true);
    });
    EXPECT_EQ(io.run(), 1u);
    EXPECT_TRUE(from_loop);
    EXPECT_FALSE(from_initiator);
}

}  // namespace
