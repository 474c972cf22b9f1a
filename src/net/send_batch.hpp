// The thread's held flushes behind folsom::SendBatch (include/folsom/send_batch.hpp).
#pragma once

#include <memory>

namespace folsom::net {

class Connection;

/// While a SendBatch is alive on this thread, keeps `c` to be flushed when it ends and
/// returns true; otherwise returns false and the caller posts the flush itself.
bool hold_flush(Connection& c);

}  // namespace folsom::net
