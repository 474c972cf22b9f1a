// folsom: a memcached command-line client and load generator, built on folsom-cpp.
//
//   folsom [--servers HOST:PORT[,...] | --elasticache HOST:PORT | --config FILE]
//          [--protocol ascii|binary|meta] [--timeout-ms N]
//          [--username USER] [--tls] [--tls-ca FILE] [--tls-cert FILE] [--tls-key FILE]
//          [--tls-server-name NAME] COMMAND ...
//
// Exit status: 0 success (hit, stored, ...), 1 the expected "no" (miss, not stored, not
// found, exists), 2 any error — with exactly one line on stderr saying what went wrong.
#include "bench/bench_command.hpp"
#include "cli_error.hpp"
#include "commands.hpp"
#include "global_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <folsom/config.hpp>
#include <functional>

namespace {

/// Error text on one line, whatever the source put in it.
std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    while (!text.empty() && text.back() == ' ')
        text.pop_back();
    return text;
}

int fail(const std::string& message) {
    std::fflush(stdout);
    fmt::print(stderr, "folsom: {}\n", one_line(message));
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"folsom: memcached command-line client and load generator", "folsom"};
    app.require_subcommand(1);
    // help2man makes the Debian man page from --help and --version (debian/rules).
    app.set_version_flag("--version", std::string("folsom ") + FOLSOM_VERSION_STRING);
    app.footer(
        "Exit status: 0 success, 1 miss / not stored / not found / exists, 2 error.\n"
        "Login: --username USER logs in with the password in $MEMCACHED_PASSWORD (never on the\n"
        "command line): SASL over --protocol binary (the default with --username; memcached\n"
        "-S), text authentication over ascii or meta (memcached -Y).\n"
        "Routes: --config FILE reads pools and a route tree in mcrouter's JSON shape\n"
        "(docs/routing.md) and sends every command through them; a configuration that\n"
        "cannot be used is one line naming its JSON path, e.g.\n"
        "`folsom: route.children[1]: unknown pool 'C'`, and exit status 2.\n"
        "Run `folsom COMMAND --help` for a command's own options.");

    folsom::cli::GlobalOptions global;
    global.add_to(app);
    std::function<int()> action;
    folsom::cli::Commands commands(global);
    commands.add_to(app, action);
    folsom::bench::BenchCommand bench(global);
    bench.add_to(app, action);

    try {
        app.parse(argc, argv);
        global.finish();
        commands.finish();
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return fail(std::string(e.what()) + " (see folsom --help)");
    } catch (const folsom::cli::CliError& e) {
        return fail(e.what());
    }

    try {
        const int rc = action ? action() : 2;
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) return fail("cannot write to stdout");
        return rc;
    } catch (const folsom::cli::CliError& e) {
        return fail(e.what());
    } catch (const std::exception& e) {
        return fail(e.what());
    }
}
