// RecordingOperation: a fake detail::Operation that writes down every event a driver delivers,
// as owning copies (the driver's views die with its input), so driver tests can compare what
// happened with what should have.
//
// DriverHarness: a driver, an output buffer and a FIFO wired the way net::Connection wires them,
// so a test can submit requests, look at the bytes, and feed scripted replies in any chunking.
#pragma once

#include "folsom/detail/operation.hpp"

#include "wire/protocol_driver.hpp"
#include "wire/command_queue.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace folsom::test {

struct Event {
    enum class Kind { value, stat, complete };
    Kind kind = Kind::complete;
    std::uint32_t part = 0;
    std::uint32_t position = 0;  ///< value
    std::string key;             ///< value: the key; stat: the name
    std::string data;            ///< value: the data; stat: the value; complete: the text
    std::uint32_t flags = 0;
    std::uint64_t cas = 0;
    std::error_code ec;  ///< complete
    Status status = Status::ok;
    std::uint64_t number = 0;

    friend bool operator==(const Event&, const Event&) = default;
    friend std::ostream& operator<<(std::ostream& os, const Event& e) {
        switch (e.kind) {
            case Kind::value:
                return os << "{value part " << e.part << " pos " << e.position << " key \"" << e.key
                          << "\" data \"" << e.data << "\" flags " << e.flags << " cas " << e.cas
                          << '}';
            case Kind::stat:
                return os << "{stat part " << e.part << ' ' << e.key << '=' << e.data << '}';
            case Kind::complete:
                os << "{complete part " << e.part;
                if (e.ec) os << " ec " << e.ec.message();
                return os << " status " << to_string(e.status) << " number " << e.number
                          << " text \"" << e.data << "\"}";
        }
        return os;
    }
};

class RecordingOperation final : public detail::Operation {
  public:
    void on_value(std::uint32_t part, std::uint32_t position, const ValueView& v) override {
        Event e;
        e.kind = Event::Kind::value;
        e.part = part;
        e.position = position;
        e.key = std::string(v.key);
        e.data = std::string(v.data);
        e.flags = v.flags;
        e.cas = v.cas;
        events.push_back(std::move(e));
    }
    void on_stat(std::uint32_t part, std::string_view name, std::string_view value) override {
        Event e;
        e.kind = Event::Kind::stat;
        e.part = part;
        e.key = std::string(name);
        e.data = std::string(value);
        events.push_back(std::move(e));
    }
    void on_complete(std::uint32_t part, const detail::Completion& c) override {
        Event e;
        e.kind = Event::Kind::complete;
        e.part = part;
        e.ec = c.ec;
        if (!c.ec) {
            e.status = c.status;
            e.number = c.number;
        }
        e.data = std::string(c.text);
        events.push_back(std::move(e));
    }
    void pin() noexcept override { ++pins; }
    void unpin() override { --pins; }

    /// The completions only.
    std::vector<Event> completions() const {
        std::vector<Event> out;
        for (const auto& e : events)
            if (e.kind == Event::Kind::complete) out.push_back(e);
        return out;
    }

    std::vector<Event> events;
    int pins = 0;
};

/// Shorthands for expected events.
inline Event value_event(std::uint32_t part, std::uint32_t position, std::string key,
                         std::string data, std::uint32_t flags = 0, std::uint64_t cas = 0) {
    Event e;
    e.kind = Event::Kind::value;
    e.part = part;
    e.position = position;
    e.key = std::move(key);
    e.data = std::move(data);
    e.flags = flags;
    e.cas = cas;
    return e;
}
inline Event stat_event(std::uint32_t part, std::string name, std::string value) {
    Event e;
    e.kind = Event::Kind::stat;
    e.part = part;
    e.key = std::move(name);
    e.data = std::move(value);
    return e;
}
inline Event done_event(std::uint32_t part, Status s = Status::ok, std::uint64_t number = 0,
                        std::string text = {}) {
    Event e;
    e.part = part;
    e.status = s;
    e.number = number;
    e.data = std::move(text);
    return e;
}
inline Event error_event(std::uint32_t part, std::error_code ec, std::string text = {}) {
    Event e;
    e.part = part;
    e.ec = ec;
    e.data = std::move(text);
    return e;
}

/// A driver between a fake connection's write buffer and FIFO.
struct DriverHarness {
    explicit DriverHarness(std::unique_ptr<detail::ProtocolDriver> d) : driver(std::move(d)) {}

    /// Encodes `r` as part `part` of `op` (default: the harness's own op) and queues it as the
    /// connection would. Returns the encoder's error; on error nothing is queued.
    std::error_code submit(const detail::Request& r, std::uint32_t part = 0,
                           detail::Operation* target = nullptr) {
        net::Command cmd{target ? target : &op, part, r.code};
        const auto ec = driver->encode(r, out, cmd);
        if (!ec) {
            inflight.push_back(cmd);
            last = cmd;
        }
        return ec;
    }

    /// The bytes encoded so far (and forgets them).
    std::string take_output() {
        std::string s = out.contiguous();
        out.clear();
        return s;
    }

    /// Feeds `bytes` cut into chunks at the given offsets (ascending), as reads would deliver
    /// them: unconsumed bytes are passed again with the next chunk appended. Stops at the
    /// first error, which it returns.
    std::error_code feed(std::string_view bytes, const std::vector<std::size_t>& cuts = {}) {
        std::size_t from = 0;
        for (std::size_t i = 0; i <= cuts.size(); ++i) {
            const std::size_t to = i < cuts.size() ? cuts[i] : bytes.size();
            // A fresh string each time: a driver that kept a view into an earlier input would
            // read freed memory (the sanitizer builds see it).
            std::string buffer = pending + std::string(bytes.substr(from, to - from));
            from = to;
            const auto step = driver->decode(buffer, inflight);
            if (step.ec) {
                message = step.message;
                return step.ec;
            }
            EXPECT_LE(step.consumed, buffer.size());
            pending = buffer.substr(step.consumed);
            if (!pending.empty()) {
                EXPECT_GT(step.needed, 0u);
            }
        }
        return {};
    }

    std::unique_ptr<detail::ProtocolDriver> driver;
    protocol::OutputBuffer out;
    net::CommandQueue inflight;
    RecordingOperation op;
    net::Command last;
    std::string pending;  ///< bytes the driver has not consumed yet
    std::string message;  ///< the last decode error's message
};

}  // namespace folsom::test
