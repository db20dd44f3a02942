// TlsOptions: checking the credentials with OpenSSL before CAF uses them (CAF raises an error
// inside its network thread for a bad file, when a connection is first made).
#include "troupe/actors/transport/tls.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <memory>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

namespace troupe {
namespace {

std::string openssl_errors() {
  std::string out = take_openssl_errors();
  return out.empty() ? "no details from OpenSSL" : out;
}

int passphrase_callback(char* buffer, int size, int /*writing*/, void* passphrase) {
  const std::string& text = *static_cast<const std::string*>(passphrase);
  if (size <= 0 || text.size() >= static_cast<size_t>(size)) return 0;
  text.copy(buffer, text.size());
  buffer[text.size()] = '\0';
  return static_cast<int>(text.size());
}

// "Nov 24 03:46:58 2026 GMT"
std::string time_text(const ASN1_TIME* time) {
  std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
  if (!out || ASN1_TIME_print(out.get(), time) != 1) return "an unreadable date";
  char* data = nullptr;
  long size = BIO_get_mem_data(out.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

// As ssh refuses a private key that others can read: the key is what proves this task is a
// member of the cluster.
Status check_key_is_private(const std::string& key_file, const std::string& name) {
  struct stat info {};
  // A key that cannot be read is reported by the loader that reads it.
  if (::stat(key_file.c_str(), &info) == 0 && (info.st_mode & 077) != 0) {
    return errors::InvalidArgument(
        "{} '{}' is accessible by group or others (mode {:04o}); a private key must be "
        "private: run chmod 600 '{}'",
        name, key_file, info.st_mode & 07777, key_file);
  }
  return Status::OK();
}

std::string env_or_empty(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

std::string take_openssl_errors() {
  std::string out;
  while (unsigned long code = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(code, text, sizeof(text));
    if (!out.empty()) out += "; ";
    out += text;
  }
  return out;
}

bool TlsOptions::enabled() const {
  return !certificate_file.empty() || !key_file.empty() || !ca_file.empty();
}

Status TlsOptions::validate(const Names& names) const {
  if (!enabled()) return Status::OK();
  return load(names).status();
}

StatusOr<std::shared_ptr<SSL_CTX>> TlsOptions::load(const Names& names) const {
  for (auto [value, name] : {std::pair{&certificate_file, &names.certificate},
                             std::pair{&key_file, &names.key}, std::pair{&ca_file, &names.ca}}) {
    if (value->empty()) {
      return errors::InvalidArgument(
          "TLS needs a certificate, its key and the cluster's CA: {} is missing (given: {})", *name,
          fmt::format("{}='{}', {}='{}', {}='{}'", names.certificate, certificate_file, names.key,
                      key_file, names.ca, ca_file));
    }
  }
  ERR_clear_error();
  std::shared_ptr<SSL_CTX> ctx(SSL_CTX_new(TLS_method()), SSL_CTX_free);
  if (!ctx) return errors::Internal("cannot create an OpenSSL context: {}", openssl_errors());
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), certificate_file.c_str()) != 1) {
    return errors::InvalidArgument("{} '{}' is not a readable PEM certificate: {}",
                                   names.certificate, certificate_file, openssl_errors());
  }
  TROUPE_RETURN_IF_ERROR(check_key_is_private(key_file, names.key));
  std::string passphrase = key_passphrase;
  SSL_CTX_set_default_passwd_cb(ctx.get(), passphrase_callback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), &passphrase);
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), key_file.c_str(), SSL_FILETYPE_PEM) != 1) {
    if (ERR_GET_REASON(ERR_peek_last_error()) == X509_R_KEY_VALUES_MISMATCH) {
      return errors::InvalidArgument("{} '{}' is not the key of {} '{}': {}", names.key, key_file,
                                     names.certificate, certificate_file, openssl_errors());
    }
    return errors::InvalidArgument(
        "{} '{}' is not a readable PEM private key{}: {}", names.key, key_file,
        key_passphrase.empty() ? " (an encrypted key needs its passphrase)" : "", openssl_errors());
  }
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), nullptr);  // `passphrase` ends here
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    return errors::InvalidArgument("{} '{}' is not the key of {} '{}': {}", names.key, key_file,
                                   names.certificate, certificate_file, openssl_errors());
  }
  if (SSL_CTX_load_verify_locations(ctx.get(), ca_file.c_str(), nullptr) != 1) {
    return errors::InvalidArgument("{} '{}' holds no readable PEM CA certificate: {}", names.ca,
                                   ca_file, openssl_errors());
  }
  // Peers verify this certificate against the same CA: a mismatch fails here, not at every
  // connection.
  STACK_OF(X509)* chain = nullptr;
  SSL_CTX_get0_chain_certs(ctx.get(), &chain);
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> check(X509_STORE_CTX_new(),
                                                                        X509_STORE_CTX_free);
  if (!check || X509_STORE_CTX_init(check.get(), SSL_CTX_get_cert_store(ctx.get()),
                                    SSL_CTX_get0_certificate(ctx.get()), chain) != 1) {
    return errors::Internal("cannot check a certificate with OpenSSL: {}", openssl_errors());
  }
  if (X509_verify_cert(check.get()) != 1) {
    int error = X509_STORE_CTX_get_error(check.get());
    X509* failed = X509_STORE_CTX_get_current_cert(check.get());
    if (failed == nullptr) failed = SSL_CTX_get0_certificate(ctx.get());
    // Depth 0 is this task's certificate; above it, the chain up to the CA.
    std::string whose = X509_STORE_CTX_get_error_depth(check.get()) == 0
                            ? fmt::format("{} '{}'", names.certificate, certificate_file)
                            : fmt::format("the CA of {} '{}' (in {} '{}')", names.certificate,
                                          certificate_file, names.ca, ca_file);
    if (error == X509_V_ERR_CERT_HAS_EXPIRED) {
      return errors::InvalidArgument("{} has expired: it was valid until {}", whose,
                                     time_text(X509_get0_notAfter(failed)));
    }
    if (error == X509_V_ERR_CERT_NOT_YET_VALID) {
      return errors::InvalidArgument("{} is not valid yet: it is valid from {}", whose,
                                     time_text(X509_get0_notBefore(failed)));
    }
    return errors::InvalidArgument(
        "{} '{}' is not signed by the CA in {} '{}': {}", names.certificate, certificate_file,
        names.ca, ca_file, X509_verify_cert_error_string(X509_STORE_CTX_get_error(check.get())));
  }
  return ctx;
}

TlsOptions TlsOptions::from_environment() {
  TlsOptions options;
  options.certificate_file = env_or_empty("TROUPE_TLS_CERT");
  options.key_file = env_or_empty("TROUPE_TLS_KEY");
  options.ca_file = env_or_empty("TROUPE_TLS_CA");
  return options;
}

TlsOptions::Names TlsOptions::environment_names() {
  return {"TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA"};
}

}  // namespace troupe
