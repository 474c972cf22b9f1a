// 06 — the fake client in your unit tests: no server needed.
//
//     ./06_fake_client_in_tests      (ignores its arguments)
//
// Code that takes a folsom::Client runs unchanged against folsom::make_fake_client(), an
// in-memory store that answers as memcached does. A ManualClock makes ttls testable without
// sleeping. In a real test suite the checks below would be EXPECT_EQs.
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>

#include <chrono>
#include <folsom/blocking_client.hpp>
#include <folsom/client.hpp>
#include <folsom/fake_client.hpp>
#include <functional>
#include <iostream>
#include <string>

namespace {

// ---- the code under test -------------------------------------------------------------------

/// A read-through cache: returns the cached value, or computes, caches (for `ttl`) and
/// returns it. Knows nothing about fakes.
class ProfileCache {
  public:
    ProfileCache(folsom::Client client, std::function<std::string(const std::string&)> load)
        : client_(std::move(client)), load_(std::move(load)) {}

    std::string profile(const std::string& user) {
        const std::string key = "profile:" + user;
        if (auto hit = client_.get(key, asio::use_future).get()) return hit->data;
        std::string fresh = load_(user);
        client_.set(key, fresh, std::chrono::minutes(5), asio::use_future).get();
        return fresh;
    }

  private:
    folsom::Client client_;
    std::function<std::string(const std::string&)> load_;
};

// ---- the test ------------------------------------------------------------------------------

int failures = 0;

void check(bool ok, const char* what) {
    std::cout << (ok ? "ok: " : "FAILED: ") << what << '\n';
    failures += ok ? 0 : 1;
}

}  // namespace

int main() {
    folsom::ManualClock clock;  // time moves only when the test says so
    // BlockingClient runs the fake's completions on its own I/O thread.
    folsom::BlockingClient io([&](asio::any_io_executor ex) {
        return folsom::make_fake_client(std::move(ex), {.clock = clock});
    });

    int loads = 0;
    ProfileCache cache(io.async(), [&](const std::string& user) {
        ++loads;
        return "profile of " + user;
    });

    check(cache.profile("ada") == "profile of ada", "first call loads");
    check(cache.profile("ada") == "profile of ada" && loads == 1, "second call is cached");

    clock.advance(std::chrono::minutes(5));  // the cached entry expires
    check(cache.profile("ada") == "profile of ada" && loads == 2, "expired entry reloads");

    // The fake refuses what memcached refuses, with the same errors.
    try {
        cache.profile("name with spaces");
        check(false, "invalid key refused");
    } catch (const std::system_error& e) {
        check(e.code() == folsom::errc::invalid_key, "invalid key refused");
    }

    // And it can be inspected directly.
    check(io.get("profile:ada").has_value(), "entry is in the fake");
    check(io.version().at(0).value == "fake", "version says fake");

    std::cout << (failures == 0 ? "all checks passed" : "some checks failed") << '\n';
    return failures == 0 ? 0 : 1;
}
