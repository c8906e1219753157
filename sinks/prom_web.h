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

struct prom_web_tls {
	const char *cert_pem;  /* server certificate chain (PEM text) */
	const char *key_pem;   /* its private key (PEM text) */
	const char *ca_pem;    /* client CA (PEM text), NULL without client_ca_file */
	int verify_client;     /* client_auth_type asks for a verified client certificate */
	const char *priorities; /* GnuTLS priority string honouring min_version (and max_version) */
};

/* 1 and *tls filled (borrowed, valid while w lives) when TLS is configured, else 0. */
int prom_web_tls(const struct prom_web *w, struct prom_web_tls *tls);

/*
 * With client certificates required: check the connection's peer
 * certificate (session: the gnutls_session_t from libmicrohttpd). 1 allowed, 0 refused.
 */
int prom_web_check_client(const struct prom_web *w, void *gnutls_session);

/*
 * Basic auth: authorization is the request's Authorization header or NULL.
 * 1: allowed (also when no users are configured), 0: answer 401 with
 * WWW-Authenticate: Basic. Verified pairs are cached; unknown users cost
 * as much as known ones.
 */
int prom_web_authorize(struct prom_web *w, const char *authorization);

void prom_web_free(struct prom_web *w); /* NULL-safe */

#endif
