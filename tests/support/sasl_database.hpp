// SaslDatabase: a Cyrus SASL user database for tests against a real `memcached -S`, made with
// saslpasswd2 (Debian package sasl2-bin) in a private temporary directory.
//
// memcached reads its SASL configuration from $SASL_CONF_PATH/memcached.conf; the constructor
// sets that variable in this process, so a memcached forked afterwards inherits it. The
// destructor unsets it and removes the directory.
#pragma once

#include <cstdint>
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

    /// Asks the memcached -S on `port` for its SASL mechanisms (SASL_LIST_MECHS) and returns
    /// an empty string when PLAIN is among them, or else why not. memcached lists only what
    /// Cyrus SASL could load, and Debian's PLAIN plugin is libsasl2-modules, a package apt
    /// only recommends; without it every login fails as if the password were wrong. Fixtures
    /// fail with this message instead.
    static std::string missing_plain(std::uint16_t port);
    SaslDatabase& operator=(const SaslDatabase&) = delete;

  private:
    std::string dir_;
};

/// While alive, a memcached started by this process finds no Cyrus SASL plugins: $SASL_PATH
/// names an empty directory, as on a host without libsasl2-modules. For testing what users of
/// such a server see.
class NoSaslPlugins {
  public:
    NoSaslPlugins();
    ~NoSaslPlugins();
    NoSaslPlugins(const NoSaslPlugins&) = delete;
    NoSaslPlugins& operator=(const NoSaslPlugins&) = delete;

  private:
    std::string dir_;
};

}  // namespace folsom::test
