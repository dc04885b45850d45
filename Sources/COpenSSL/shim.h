#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ec.h>
#include <openssl/bn.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/pem.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/obj_mac.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

// OpenSSL spells these as macros, which Swift cannot call.
static inline long padgate_ssl_ctx_require_tls13(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
}
static inline EVP_PKEY *padgate_generate_ed25519(void) {
    return EVP_PKEY_Q_keygen(NULL, NULL, "ED25519");
}
static inline X509 *padgate_ssl_peer_certificate(const SSL *ssl) { return SSL_get1_peer_certificate(ssl); }
// Accept any certificate during the handshake: padgate pins fingerprints itself afterwards.
static int padgate_accept_any_certificate(int preverify_ok, X509_STORE_CTX *ctx) { (void)preverify_ok; (void)ctx; return 1; }
static inline void padgate_ssl_ctx_ask_peer_certificate(SSL_CTX *ctx, int require) {
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | (require ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), padgate_accept_any_certificate);
}
