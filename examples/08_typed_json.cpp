// 08 — typed values: a struct stored as JSON, compressed, through TypedClient.
//
//     ./08_typed_json [host:port]
//
// folsom::Transcoder<Profile> (a traits specialisation) says how a Profile becomes bytes and
// client flags and back; here with nlohmann-json (the example's own dependency, not the
// library's). Wrapping it in folsom::Compressed<> compresses values of 256 bytes or more with
// zstd and marks the codec in the flags; reads decompress transparently, and values written
// by clients that do not compress still read as they are. A value that is not a Profile fails
// its read with errc::decode_failed.
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/use_future.hpp>

#include <chrono>
#include <folsom/typed_client.hpp>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

struct Profile {
    std::string name;
    int born = 0;
    std::vector<std::string> tags;
    std::string bio;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Profile, name, born, tags, bio)

/// Profiles are JSON documents, marked with the application's flag bit 0 (bits 0-23 are the
/// application's; folsom's transcoders use the top byte).
template <>
struct folsom::Transcoder<Profile> {
    static constexpr std::uint32_t json_flag = 1u << 0;

    static folsom::Encoded encode(const Profile& p) {
        return {nlohmann::json(p).dump(), json_flag};
    }

    static std::error_code decode(folsom::Encoded&& stored, Profile& out) {
        if (!(stored.flags & json_flag)) return folsom::errc::decode_failed;  // not ours
        auto doc = nlohmann::json::parse(stored.data, nullptr, /*allow_exceptions=*/false);
        if (doc.is_discarded()) return folsom::errc::decode_failed;
        try {
            doc.get_to(out);
        } catch (const nlohmann::json::exception&) {
            return folsom::errc::decode_failed;  // valid JSON, but not a Profile
        }
        return {};
    }
};

using Profiles = folsom::TypedClient<Profile, folsom::Compressed<folsom::Transcoder<Profile>>>;

int main(int argc, char** argv) {
    folsom::Options options;
    options.servers = {argc > 1 ? argv[1] : "127.0.0.1:11211"};

    asio::io_context io;
    auto work = asio::make_work_guard(io);
    std::thread io_thread([&] { io.run(); });
    folsom::Client bytes = folsom::Client::connect(io, options);
    Profiles profiles(bytes, folsom::Compressed<folsom::Transcoder<Profile>>(
                                 {.codec = folsom::Codec::zstd, .threshold = 256}));
    int exit_code = 0;
    try {
        Profile ada{"Ada Lovelace", 1815, {"mathematics", "analytical engine"}, ""};
        for (int i = 0; i < 20; ++i)
            ada.bio += "Wrote the first published algorithm for Babbage's engine. ";

        const auto ttl = std::chrono::minutes(5);
        auto s = profiles.set("profile:ada", ada, ttl, asio::use_future).get();
        std::cout << "set profile:ada: " << folsom::to_string(s) << '\n';

        // The plain byte client sees what the server holds: compressed JSON, flagged.
        auto raw = bytes.get("profile:ada", asio::use_future).get();
        const std::size_t json_size = nlohmann::json(ada).dump().size();
        std::cout << "stored: " << (raw && raw->data.size() < json_size ? "smaller" : "not smaller")
                  << " than its JSON, zstd flag "
                  << (raw && (raw->flags & folsom::value_flags::zstd) ? "set" : "clear") << '\n';

        std::optional<Profile> p = profiles.get("profile:ada", asio::use_future).get();
        if (p) {
            std::cout << "profile:ada: " << p->name << ", born " << p->born << ", tags";
            for (const auto& t : p->tags)
                std::cout << " [" << t << ']';
            std::cout << ", bio " << (p->bio == ada.bio ? "intact" : "DAMAGED") << '\n';
        } else {
            std::cout << "profile:ada: (miss)\n";
            exit_code = 1;
        }

        // Written by someone else, not a Profile: the read fails with decode_failed.
        bytes.set("profile:bad", "not json", ttl, asio::use_future).get();
        try {
            profiles.get("profile:bad", asio::use_future).get();
            std::cout << "profile:bad: decoded?!\n";
            exit_code = 1;
        } catch (const std::system_error& e) {
            std::cout << "profile:bad: "
                      << (e.code() == folsom::errc::decode_failed ? "decode_failed" : e.what())
                      << '\n';
        }

        auto missing = profiles.get("profile:nobody", asio::use_future).get();
        std::cout << "profile:nobody: " << (missing ? "hit?!" : "(miss)") << '\n';
    } catch (const std::system_error& e) {
        std::cerr << "error: " << e.what() << '\n';
        exit_code = 1;
    }
    bytes.shutdown();
    work.reset();
    io_thread.join();
    return exit_code;
}
