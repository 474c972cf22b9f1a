#include "support/sasl_database.hpp"

#include "support/memcached_server.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <stdlib.h>
#include <unistd.h>

namespace folsom::test {

bool SaslDatabase::available() {
    return std::system("command -v saslpasswd2 >/dev/null 2>&1") == 0;
}

SaslDatabase::SaslDatabase(const std::string& user, const std::string& password) {
    if (password.find('\'') != std::string::npos || user.find('\'') != std::string::npos)
        throw std::runtime_error("SaslDatabase: no single quotes in the user or password");
    char tmpl[] = "/tmp/folsom-sasl-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    const std::string db = dir_ + "/sasldb";
    // -p: the password comes on stdin; -a memcached: the application name memcached uses;
    // -c: create the user.
    const std::string cmd = "printf '%s' '" + password + "' | saslpasswd2 -p -a memcached -c -f '" +
                            db + "' '" + user + "'";
    if (std::system(cmd.c_str()) != 0) {
        std::filesystem::remove_all(dir_);
        throw std::runtime_error("saslpasswd2 failed: " + cmd);
    }
    std::ofstream(dir_ + "/memcached.conf") << "mech_list: plain\nsasldb_path: " << db << "\n";
    ::setenv("SASL_CONF_PATH", dir_.c_str(), 1);
}

std::string SaslDatabase::missing_plain(std::uint16_t port) {
    std::string list_mechs(24, '\0');
    list_mechs[0] = '\x80';  // request magic
    list_mechs[1] = '\x20';  // SASL_LIST_MECHS
    const std::string reply = raw_binary_request(port, list_mechs);
    const std::string fix = "memcached offers no PLAIN mechanism: install libsasl2-modules";
    if (reply.size() < 24) return fix + " (no answer to SASL_LIST_MECHS)";
    const unsigned status =
        (static_cast<unsigned char>(reply[6]) << 8) | static_cast<unsigned char>(reply[7]);
    const std::string mechs = reply.substr(24);
    if (status != 0)
        return fix + " (SASL_LIST_MECHS answered status " + std::to_string(status) + " \"" + mechs +
               "\")";
    if ((" " + mechs + " ").find(" PLAIN ") == std::string::npos)
        return fix + " (it lists \"" + mechs + "\")";
    return {};
}

SaslDatabase::~SaslDatabase() {
    ::unsetenv("SASL_CONF_PATH");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

NoSaslPlugins::NoSaslPlugins() {
    char tmpl[] = "/tmp/folsom-no-sasl-plugins-XXXXXX";
    if (!::mkdtemp(tmpl)) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
    ::setenv("SASL_PATH", dir_.c_str(), 1);
}

NoSaslPlugins::~NoSaslPlugins() {
    ::unsetenv("SASL_PATH");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

}  // namespace folsom::test
