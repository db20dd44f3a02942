// ThrowawayCredentials: key and certificate made with OpenSSL's library, no `openssl` binary.
#include "troupe/apps/deploy/throwaway_credentials.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

namespace troupe::deploy {
namespace {

constexpr long kValidSeconds = 365L * 24 * 3600;  // longer than any job; the files go with it
const char* const kCertificate = "cluster.pem";
const char* const kKey = "cluster.key";

Status openssl_failure(const char* what) {
  char text[256] = "no details from OpenSSL";
  if (unsigned long code = ERR_get_error()) ERR_error_string_n(code, text, sizeof(text));
  ERR_clear_error();
  return errors::Internal("making throwaway TLS credentials: {}: {}", what, text);
}

// Writes a PEM file readable by this user only; `write` returns 1 on success.
template <class Write>
Status write_pem(const std::string& path, Write write) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return errors::PermissionDenied("cannot create '{}': {}", path, std::strerror(errno));
  }
  FILE* file = ::fdopen(fd, "w");
  if (file == nullptr) {
    ::close(fd);
    return errors::Internal("cannot open '{}': {}", path, std::strerror(errno));
  }
  bool written = write(file) == 1;
  bool closed = std::fclose(file) == 0;
  if (!written) return openssl_failure(("writing " + path).c_str());
  if (!closed) return errors::Internal("cannot write '{}': {}", path, std::strerror(errno));
  return Status::OK();
}

struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

Status make_files(const std::string& directory, const std::string& common_name) {
  std::unique_ptr<EVP_PKEY, KeyDeleter> key(EVP_EC_gen("P-256"));
  if (!key) return openssl_failure("generating a P-256 key");
  std::unique_ptr<X509, X509Deleter> cert(X509_new());
  if (!cert) return openssl_failure("creating a certificate");
  uint64_t serial = 0;
  if (RAND_bytes(reinterpret_cast<unsigned char*>(&serial), sizeof(serial)) != 1) {
    return openssl_failure("drawing a serial number");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509V3_CTX ext_ctx;
  X509V3_set_ctx_nodb(&ext_ctx);
  X509V3_set_ctx(&ext_ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  bool built = X509_set_version(cert.get(), 2) == 1 &&
               ASN1_INTEGER_set_uint64(X509_get_serialNumber(cert.get()), serial >> 1) == 1 &&
               X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) != nullptr &&
               X509_gmtime_adj(X509_getm_notAfter(cert.get()), kValidSeconds) != nullptr &&
               X509_set_pubkey(cert.get(), key.get()) == 1 &&
               X509_NAME_add_entry_by_txt(
                   name, "CN", MBSTRING_ASC,
                   reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0) == 1 &&
               X509_set_issuer_name(cert.get(), name) == 1;
  if (!built) return openssl_failure("filling in the certificate");
  X509_EXTENSION* ca =
      X509V3_EXT_conf_nid(nullptr, &ext_ctx, NID_basic_constraints, "critical,CA:TRUE");
  bool extended = ca != nullptr && X509_add_ext(cert.get(), ca, -1) == 1;
  X509_EXTENSION_free(ca);
  if (!extended) return openssl_failure("marking the certificate as a CA");
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) <= 0) {
    return openssl_failure("signing the certificate");
  }
  TROUPE_RETURN_IF_ERROR(write_pem(directory + "/" + kKey, [&](FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }));
  return write_pem(directory + "/" + kCertificate,
                   [&](FILE* f) { return PEM_write_X509(f, cert.get()); });
}

}  // namespace

StatusOr<std::unique_ptr<ThrowawayCredentials>> ThrowawayCredentials::create(
    const std::string& common_name) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/troupe-credentials-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return errors::PermissionDenied("cannot create a directory for TLS credentials like '{}': {}",
                                    pattern, std::strerror(errno));
  }
  std::unique_ptr<ThrowawayCredentials> credentials(new ThrowawayCredentials(pattern));
  TROUPE_RETURN_IF_ERROR(make_files(pattern, common_name));
  return credentials;
}

ThrowawayCredentials::~ThrowawayCredentials() {
  for (const char* file : {kCertificate, kKey})
    ::unlink((directory_ + "/" + file).c_str());
  ::rmdir(directory_.c_str());
}

TlsOptions ThrowawayCredentials::tls() const {
  TlsOptions options;
  options.certificate_file = directory_ + "/" + kCertificate;
  options.key_file = directory_ + "/" + kKey;
  options.ca_file = options.certificate_file;
  return options;
}

}  // namespace troupe::deploy
