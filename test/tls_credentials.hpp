// TLS credentials for tests, made with the `openssl` commands docs/security.md shows: a CA and
// certificates it signs, in a temporary directory removed at the end of the test.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <boost/test/unit_test.hpp>

#include "temp_files.hpp"
#include "troupe/actors/transport/tls.hpp"

namespace troupe::testing {

class TlsCredentials {
 public:
  TlsCredentials() : temp_("troupe-test-tls"), dir_(temp_.path()) {}
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  // A new CA called `ca` (ca.pem, ca.key).
  void make_ca(const std::string& ca) {
    run("openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
        "-subj '/CN=" +
        ca + "' -keyout " + ca + ".key -out " + ca + ".pem");
  }

  // A key and a certificate for `name` signed by `ca`; the TlsOptions that use them.
  TlsOptions make_certificate(const std::string& name, const std::string& ca) {
    run("openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj '/CN=" + name +
        "' -keyout " + name + ".key -out " + name + ".csr");
    run("openssl x509 -req -in " + name + ".csr -CA " + ca + ".pem -CAkey " + ca +
        ".key -CAcreateserial -days 2 -out " + name + ".pem");
    return options(name, ca);
  }

  TlsOptions options(const std::string& name, const std::string& ca) const {
    TlsOptions tls;
    tls.certificate_file = path(name + ".pem");
    tls.key_file = path(name + ".key");
    tls.ca_file = path(ca + ".pem");
    return tls;
  }

  std::string path(const std::string& file) const { return (dir_ / file).string(); }

  // Runs `command` in the directory; the test stops if it fails.
  void run(const std::string& command) const {
    std::string full = "cd '" + dir_.string() + "' && " + command + " >/dev/null 2>&1";
    BOOST_REQUIRE_MESSAGE(std::system(full.c_str()) == 0, "failed: " << command);
  }

 private:
  TempDir temp_;
  std::filesystem::path dir_;
};

}  // namespace troupe::testing
