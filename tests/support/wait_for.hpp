// wait_for(): polls a condition that another thread (a client's I/O thread, a server) makes
// true, for at most a given time. Tests wait with it instead of sleeping a fixed time, so that
// they pass as soon as they can and still pass on a machine whose CPUs are busy.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace folsom::test {

/// True as soon as `pred()` is; false when it is still false after `limit`. Looks every
/// `poll`.
inline bool wait_for(const std::function<bool()>& pred, std::chrono::milliseconds limit,
                     std::chrono::milliseconds poll = std::chrono::milliseconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
        if (pred()) return true;
        std::this_thread::sleep_for(poll);
    }
    return pred();
}

}  // namespace folsom::test
