// 09 — tracing: one span per operation, logged by a small Tracer adapter.
//
//     ./09_trace_spans [host:port]
//
// Set Options::tracer and the client opens a span when an operation starts and ends it, once,
// with the outcome (hit, miss, stored, ...) or the error, just before the result is delivered.
// Failures before anything is sent (an invalid key, an overloaded client, a server that is
// down) have their span too. This adapter prints each span as it ends; docs/observability.md
// sketches the same adapter over OpenTelemetry's C++ API.
#include <chrono>
#include <folsom/blocking_client.hpp>
#include <folsom/tracing.hpp>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

/// Logs "span <operation> key=<key> server=<server> -> <outcome> (<µs> us)" when a span ends.
class LoggingTracer final : public folsom::Tracer {
  public:
    std::unique_ptr<folsom::Span> start_span(const folsom::SpanStart& start) override {
        // The SpanStart views die when this returns: the span keeps copies.
        return std::make_unique<LoggedSpan>(std::string(start.operation), std::string(start.key),
                                            std::string(start.server), mu_);
    }

  private:
    class LoggedSpan final : public folsom::Span {
      public:
        LoggedSpan(std::string op, std::string key, std::string server, std::mutex& mu)
            : op_(std::move(op)), key_(std::move(key)), server_(std::move(server)), mu_(mu) {}

        // Runs on the thread that completes the operation (usually the I/O thread): short, and
        // serialised with the other spans' output.
        void end(const folsom::SpanEnd& e) noexcept override {
            const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                                std::chrono::steady_clock::now() - started_)
                                .count();
            std::lock_guard lk(mu_);
            std::cout << "span " << op_ << " key=" << key_
                      << " server=" << (server_.empty() ? "*" : server_) << " -> "
                      << folsom::to_string(e.outcome);
            if (e.error) std::cout << ' ' << folsom::error_label(e.error);
            std::cout << " (" << us << " us)\n";
        }

      private:
        std::string op_, key_, server_;
        std::mutex& mu_;
        std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    };
    std::mutex mu_;
};

}  // namespace

int main(int argc, char** argv) {
    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};
    options.tracer = std::make_shared<LoggingTracer>();
    folsom::BlockingClient client(options);
    try {
        client.del("greeting");  // start from scratch: deleted or not_found
        client.set("greeting", "hello");
        client.get("greeting");
        client.get("nobody-stored-this");
        const std::vector<std::string_view> keys = {"greeting", "nobody-stored-this"};
        client.get_multi(keys);
        try {
            client.get("not a valid key");
        } catch (const std::system_error& e) {
            std::cout << "refused: " << e.code().message() << '\n';
        }
    } catch (const std::exception& e) {
        std::cerr << "failed: " << e.what() << '\n';
        return 1;
    }
    return 0;
}
