// SaslDatabase: a Cyrus SASL user database for tests against a real `memcached -S`, made with
// saslpasswd2 (Debian package sasl2-bin) in a private temporary directory.
//
// memcached reads its SASL configuration from $SASL_CONF_PATH/memcached.conf; the constructor
// sets that variable in this process, so a memcached forked afterwards inherits it. The
// destructor unsets it and removes the directory.
#pragma once

#include <string>

namespace folsom::test {

class SaslDatabase {
  public:
    /// True when saslpasswd2 is installed.
    static bool available();

    /// Creates the database with one user for the application "memcached", a memcached.conf
    /// that allows PLAIN against it, and sets $SASL_CONF_PATH. Throws std::runtime_error when
    /// any step fails.
    SaslDatabase(const std::string& user, const std::string& password);
    ~SaslDatabase();
    SaslDatabase(const SaslDatabase&) = delete;
    SaslDatabase& operator=(const SaslDatabase&) = delete;

  private:
    std::string dir_;
};

}  // namespace folsom::test
