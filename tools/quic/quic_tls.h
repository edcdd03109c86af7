/*
 * TLS 1.3 for gsoquicd's QUIC connections, through GnuTLS and
 * ngtcp2_crypto_gnutls: the server's certificate and key (PEM files), and
 * one session per connection with ALPN "h3".  Not part of libgso.
 */
#ifndef GSO_TOOL_QUIC_TLS_H
#define GSO_TOOL_QUIC_TLS_H

#include <stddef.h>

#include <gnutls/gnutls.h>
#include <ngtcp2/ngtcp2.h>
#include <ngtcp2/ngtcp2_crypto.h>

struct quic_tls {
	gnutls_certificate_credentials_t cred;
};

/* Load the PEM certificate chain and key.  0, or -1 with a message in errbuf. */
int quic_tls_init(struct quic_tls *t, const char *key, const char *cert, char *errbuf, size_t errlen);
void quic_tls_free(struct quic_tls *t);

/*
 * A server session for one connection: conn_ref leads ngtcp2_crypto's
 * callbacks to the connection (it must outlive the session).  0 or -1.
 */
int quic_tls_session(const struct quic_tls *t, ngtcp2_crypto_conn_ref *conn_ref, gnutls_session_t *out);

#endif
