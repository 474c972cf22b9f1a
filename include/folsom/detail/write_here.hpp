// The thread's WriteHere mode (folsom/send_batch.hpp), as the library asks about it: the
// connection (write now, read the reply now) and the operations (may a completion handler run
// inside the call that started its request). Users hold a folsom::WriteHere; they do not ask.
// The marks are thread-locals in src/net/send_batch.cpp.
#pragma once

#include "folsom/export.hpp"

#include <asio/io_context.hpp>

namespace folsom::detail {

/// True while a folsom::WriteHere marks this thread: it is the only runner of the io_context
/// of every connection it starts requests on.
FOLSOM_EXPORT bool this_thread_writes_here() noexcept;
/// True while a folsom::WriteHere with Handlers::may_run_inline marks this thread.
FOLSOM_EXPORT bool this_thread_runs_handlers_inline() noexcept;

/// Whether a completion handler with no executor of its own may run on this thread now, for
/// a client whose completions run on `io` (ClientCore::inline_context(); null: never). It may
/// when `io` runs on this thread or this thread is marked WriteHere (then it is io's only
/// runner, inside run_one() or not); from inside the call that started the request
/// (`from_initiator`), only when the thread's WriteHere allows it (may_run_inline), since
/// Asio promises otherwise.
/// (AsyncOp::deliver spells the same rule out in place.)
inline bool completes_inline_here(asio::io_context* io, bool from_initiator) noexcept {
    if (io == nullptr) return false;
    if (from_initiator && !this_thread_runs_handlers_inline()) return false;
    return io->get_executor().running_in_this_thread() || this_thread_writes_here();
}

}  // namespace folsom::detail
