#include "support/sasl_database.hpp"

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

SaslDatabase::~SaslDatabase() {
    ::unsetenv("SASL_CONF_PATH");
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
}

}  // namespace folsom::test
