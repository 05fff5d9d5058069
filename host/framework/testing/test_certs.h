// Certificates for tests that speak TLS, made in memory with OpenSSL: a key pair, a certificate
// signed by a CA or by itself, and both as PEM text. Test support only; nothing ships it.
//
//   EVP_PKEY* ca_key = EVP_EC_gen("P-256");
//   X509* ca = MakeCert(ca_key, "test-ca", nullptr, nullptr,
//                       {{NID_basic_constraints, "critical,CA:TRUE"}});
//   std::string pem = CertPem(ca);
#pragma once

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <string>
#include <utility>
#include <vector>

namespace schedhost::framework::testing {

// KeyPem returns `key`'s private key as unencrypted PEM.
std::string KeyPem(EVP_PKEY* key);

// CertPem returns `cert` as PEM.
std::string CertPem(X509* cert);

// MakeCert returns a certificate for `key` with common name `cn`, valid from an hour ago for a
// day, with `extensions` (NID and value, as in openssl.cnf), signed by `issuer` with
// `issuer_key`, or self-signed when both are null. The caller frees it with X509_free.
X509* MakeCert(EVP_PKEY* key, const char* cn, X509* issuer, EVP_PKEY* issuer_key,
               const std::vector<std::pair<int, const char*>>& extensions);

}  // namespace schedhost::framework::testing
