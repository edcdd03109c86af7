/* TLS for gsoquicd: see quic_tls.h. */
#include <stdio.h>
#include <string.h>

#include <ngtcp2/ngtcp2_crypto_gnutls.h>

#include "quic_tls.h"

/*
 * TLS 1.3 only (QUIC), without the middlebox compatibility mode (RFC 9001
 * 8.4 forbids it); the ciphers and groups QUIC clients offer.
 */
#define PRIORITY "%DISABLE_TLS13_COMPAT_MODE:NORMAL:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+AES-128-GCM:" \
	"+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-CCM:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"      \
	"+GROUP-SECP384R1:+GROUP-SECP521R1"

int quic_tls_init(struct quic_tls *t, const char *key, const char *cert, char *errbuf, size_t errlen)
{
	int rv;

	memset(t, 0, sizeof(*t));
	rv = gnutls_certificate_allocate_credentials(&t->cred);
	if (rv) {
		snprintf(errbuf, errlen, "gnutls credentials: %s", gnutls_strerror(rv));
		return -1;
	}
	rv = gnutls_certificate_set_x509_key_file(t->cred, cert, key, GNUTLS_X509_FMT_PEM);
	if (rv) {
		snprintf(errbuf, errlen, "--cert %s / --key %s: %s", cert, key, gnutls_strerror(rv));
		gnutls_certificate_free_credentials(t->cred);
		t->cred = NULL;
		return -1;
	}
	return 0;
}

void quic_tls_free(struct quic_tls *t)
{
	if (t->cred)
		gnutls_certificate_free_credentials(t->cred);
	t->cred = NULL;
}

int quic_tls_session(const struct quic_tls *t, ngtcp2_crypto_conn_ref *conn_ref, gnutls_session_t *out)
{
	static const char h3[] = "h3";
	gnutls_datum_t alpn = { .data = (unsigned char *)h3, .size = sizeof(h3) - 1 };
	gnutls_session_t s;

	/* No session tickets: this server keeps no ticket key. */
	if (gnutls_init(&s, GNUTLS_SERVER | GNUTLS_NO_AUTO_SEND_TICKET | GNUTLS_NO_END_OF_EARLY_DATA))
		return -1;
	if (gnutls_priority_set_direct(s, PRIORITY, NULL) || ngtcp2_crypto_gnutls_configure_server_session(s) ||
	    gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, t->cred) ||
	    gnutls_alpn_set_protocols(s, &alpn, 1, GNUTLS_ALPN_MANDATORY | GNUTLS_ALPN_SERVER_PRECEDENCE)) {
		gnutls_deinit(s);
		return -1;
	}
	gnutls_session_set_ptr(s, conn_ref);
	*out = s;
	return 0;
}
