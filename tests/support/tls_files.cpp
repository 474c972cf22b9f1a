#include "support/tls_files.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unistd.h>

namespace folsom::test {
namespace {

void run(const std::string& cmd) {
    if (std::system((cmd + " >/dev/null 2>&1").c_str()) != 0)
        throw std::runtime_error("failed: " + cmd);
}

}  // namespace

TlsFiles::TlsFiles() {
    char tmpl[] = "/tmp/folsom-tls-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    run("openssl req -x509" + ec + " -keyout " + p("ca.key") + " -out " + p("ca.pem") +
        " -days 2 -subj /CN=folsom-test-ca");
    run("openssl req -x509" + ec + " -keyout " + p("other.key") + " -out " + p("other.pem") +
        " -days 2 -subj /CN=someone-else");
    run("openssl req" + ec + " -keyout " + p("server.key") + " -out " + p("server.csr") +
        " -subj /CN=localhost");
    std::ofstream(p("san.ext")) << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    run("openssl x509 -req -in " + p("server.csr") + " -CA " + p("ca.pem") + " -CAkey " +
        p("ca.key") + " -CAcreateserial -out " + p("server.pem") + " -days 2 -extfile " +
        p("san.ext"));
    run("openssl req" + ec + " -keyout " + p("client.key") + " -out " + p("client.csr") +
        " -subj /CN=folsom-test-client");
    std::ofstream(p("client.ext")) << "extendedKeyUsage=clientAuth\n";
    run("openssl x509 -req -in " + p("client.csr") + " -CA " + p("ca.pem") + " -CAkey " +
        p("ca.key") + " -CAcreateserial -out " + p("client.pem") + " -days 2 -extfile " +
        p("client.ext"));
}

TlsFiles::~TlsFiles() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

std::string TlsFiles::p(const std::string& name) const {
    return (std::filesystem::path(dir_) / name).string();
}

std::vector<std::string> TlsFiles::memcached_args(bool require_client_cert) const {
    std::string o = "ssl_chain_cert=" + p("server.pem") + ",ssl_key=" + p("server.key");
    if (require_client_cert) o += ",ssl_verify_mode=2,ssl_ca_cert=" + p("ca.pem");
    return {"-Z", "-o", o};
}

}  // namespace folsom::test
