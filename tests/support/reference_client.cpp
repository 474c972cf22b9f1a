#include "support/reference_client.hpp"

#include "support/child_process.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace folsom::test {

std::vector<std::string> placement_keys() {
    std::vector<std::string> keys;
    keys.reserve(10'000);
    for (int i = 0; i < 5'000; ++i)
        keys.push_back("key:" + std::to_string(i));
    std::mt19937 rng(20261207);
    std::uniform_int_distribution<int> length(1, 250);
    std::uniform_int_distribution<int> byte(0x21, 0x7e);
    while (keys.size() < 10'000) {
        std::string k(static_cast<std::size_t>(length(rng)), ' ');
        for (char& c : k)
            c = static_cast<char>(byte(rng));
        keys.push_back(std::move(k));
    }
    return keys;
}

std::string lines_of(const std::vector<std::string>& keys) {
    std::string text;
    for (const auto& k : keys) {
        text += k;
        text += '\n';
    }
    return text;
}

ScratchDir::ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "folsom-ref-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = pattern;
}

ScratchDir::~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::string ScratchDir::write(const std::string& name, const std::string& text) const {
    const std::string file = path_ + "/" + name;
    std::ofstream out(file, std::ios::binary);
    out << text;
    return file;
}

ReferenceRun run_reference(const std::vector<std::string>& argv, const std::string& input,
                           std::size_t expected_lines, std::chrono::seconds limit) {
    ReferenceRun run;
    const bool found = !argv.empty() && (argv[0].find('/') != std::string::npos
                                             ? ::access(argv[0].c_str(), X_OK) == 0
                                             : have_program(argv[0]));
    if (!found) {
        run.unavailable = true;
        run.why_not = (argv.empty() ? std::string("no program") : argv[0]) + " is not installed";
        return run;
    }
    const ScratchDir dir;
    const std::string in_file = dir.write("stdin", input);
    const std::string out_file = dir.path() + "/stdout";
    const std::string err_file = dir.path() + "/stderr";
    std::vector<std::string> args = argv;
    std::vector<char*> cargs;
    for (auto& a : args)
        cargs.push_back(a.data());
    cargs.push_back(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) {
        run.why_not = "fork failed";
        return run;
    }
    if (pid == 0) {
        const int in = ::open(in_file.c_str(), O_RDONLY);
        const int out = ::open(out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) ::_exit(126);
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::dup2(err, 2);
        ::execvp(cargs[0], cargs.data());
        std::fprintf(stderr, "exec %s failed: %s\n", cargs[0], std::strerror(errno));
        ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline) {
        const pid_t r = ::waitpid(pid, &status, WNOHANG);
        if (r == pid) {
            exited = true;
            break;
        }
        if (r < 0 && errno != EINTR) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (!exited) {
        ::kill(pid, SIGKILL);
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        run.why_not = argv[0] + " did not finish within " + std::to_string(limit.count()) + " s";
        return run;
    }
    std::ifstream out(out_file, std::ios::binary);
    std::string line;
    while (std::getline(out, line))
        run.lines.push_back(line);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::ifstream err(err_file, std::ios::binary);
        std::stringstream text;
        text << err.rdbuf();
        std::string message = text.str();
        if (message.size() > 2000) message.resize(2000);
        run.unavailable = WIFEXITED(status) && WEXITSTATUS(status) == unavailable_status;
        run.why_not = run.unavailable
                          ? message
                          : argv[0] + " failed (status " + std::to_string(status) + "): " + message;
        return run;
    }
    if (run.lines.size() != expected_lines) {
        run.why_not = argv[0] + " printed " + std::to_string(run.lines.size()) + " lines, not " +
                      std::to_string(expected_lines);
        return run;
    }
    run.ran = true;
    return run;
}

}  // namespace folsom::test
