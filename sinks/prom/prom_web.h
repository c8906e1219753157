/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's --web.config.file: the Prometheus exporter-toolkit web
 * configuration (YAML) with TLS (tls_server_config) and HTTP basic
 * authentication (basic_auth_users: user -> bcrypt hash).
 *
 * Loaded once at start; a bad file stops accel-prom with "file:line: reason".
 * Nothing secret (passwords, hashes, keys) is ever logged.
 *
 * Thread-safety: after prom_web_load, every function may be called from
 * libmicrohttpd's threads at once.
 */
#ifndef ACCEL_PROM_WEB_H
#define ACCEL_PROM_WEB_H

struct prom_web;

/* Load and validate path. 0, or -errno / -EINVAL with *err a new "file:line: reason" string. */
int prom_web_load(const char *path, struct prom_web **out, char **err);

/*
 * What libmicrohttpd needs: cert_pem and key_pem go to MHD_OPTION_HTTPS_MEM_CERT
 * and _KEY, priorities to MHD_OPTION_HTTPS_PRIORITIES, and ca_pem (when not
 * NULL) to MHD_OPTION_HTTPS_MEM_TRUST, which is what makes libmicrohttpd ask
 * clients for a certificate.
 */
struct prom_web_tls {
	const char *cert_pem;  /* server certificate chain (PEM text) */
	const char *key_pem;   /* its private key (PEM text) */
	const char *ca_pem;    /* client CA (PEM text), NULL without client_ca_file */
	int verify_client;     /* nonzero: call prom_web_check_client on every request (client_auth_type
				  RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert) */
	const char *priorities; /* GnuTLS priority string honouring min_version, max_version,
				   curve_preferences and prefer_server_cipher_suites */
};

/* 1 and *tls filled (borrowed, valid while w lives) when TLS is configured, else 0. */
int prom_web_tls(const struct prom_web *w, struct prom_web_tls *tls);

/*
 * With client certificates required: check the connection's peer
 * certificate (session: the gnutls_session_t from libmicrohttpd's
 * MHD_CONNECTION_INFO_GNUTLS_SESSION) against client_auth_type, the client
 * CA and client_allowed_sans. 1 allowed, 0 refused (answer 403). Always 1
 * when the configuration asks for no check.
 */
int prom_web_check_client(const struct prom_web *w, void *gnutls_session);

/*
 * Basic auth: authorization is the request's Authorization header or NULL.
 * 1: allowed (also when no users are configured), 0: answer 401 with
 * WWW-Authenticate: Basic. Verified pairs are cached; unknown users cost
 * as much as known ones.
 */
int prom_web_authorize(struct prom_web *w, const char *authorization);

/*
 * http_server_config.headers: a NULL-terminated array of name, value, name,
 * value, ... to add to every response (borrowed, valid while w lives; empty,
 * never NULL, without headers).
 */
const char *const *prom_web_headers(const struct prom_web *w);

void prom_web_free(struct prom_web *w); /* NULL-safe */

#endif
