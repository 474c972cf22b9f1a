// TlsFiles: certificates for TLS tests against a real `memcached -Z`, made with the openssl
// command-line tool in a private temporary directory (removed with the object).
#pragma once

#include <string>
#include <vector>

namespace folsom::test {

class TlsFiles {
  public:
    /// Makes, all with P-256 keys and valid for two days:
    ///   ca.pem/ca.key          a CA ("folsom-test-ca")
    ///   server.pem/server.key  a server certificate for localhost and 127.0.0.1, signed by it
    ///   client.pem/client.key  a client certificate ("folsom-test-client"), signed by it
    ///   other.pem/other.key    an unrelated self-signed CA
    /// Throws std::runtime_error when an openssl command fails.
    TlsFiles();
    ~TlsFiles();
    TlsFiles(const TlsFiles&) = delete;
    TlsFiles& operator=(const TlsFiles&) = delete;

    /// The path of `name` in the directory, e.g. p("ca.pem").
    std::string p(const std::string& name) const;

    /// memcached arguments for TLS with the server certificate; with `require_client_cert`,
    /// the server also demands a client certificate signed by the CA (ssl_verify_mode=2).
    std::vector<std::string> memcached_args(bool require_client_cert = false) const;

  private:
    std::string dir_;
};

}  // namespace folsom::test
