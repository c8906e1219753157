/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's --web.config.file, the Prometheus exporter-toolkit format:
 * TLS (tls_server_config), HTTP basic authentication (basic_auth_users) and
 * extra response headers (http_server_config.headers).
 *
 * The file is loaded once: every key is checked (unknown keys are errors),
 * every file it names is read into memory (paths relative to the web config's
 * own directory, as exporter-toolkit does), the certificate is matched with
 * its key, and the GnuTLS priority string is built. A bad file yields
 * "file:line:column: key: reason" and never quotes a secret.
 *
 * Basic auth verifies with crypt_r(3) (bcrypt, ~70 ms at cost 10). A pair
 * that verified is remembered as an HMAC-SHA-256 under a per-process random
 * key (never the password itself) in a small LRU table behind one mutex, so
 * a scrape every 15 s pays bcrypt once. A user name that is not configured is
 * verified against a dummy setting of the same cost, and user names are
 * looked up through their SHA-256 digests without an early exit, so timing
 * tells nothing about which users exist.
 */
#include "prom_web.h"

#include "../../common/doc.h"
#include "../../common/log.h"
#include "../../common/util.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define PEM_MAX_BYTES (1 << 20) /* a certificate, key or CA file larger than this is refused */
#define CRED_MAX 512            /* bytes of decoded "user:password" accepted */
#define PASSWORD_MAX 72         /* bcrypt reads no further: longer passwords are refused */
#define BCRYPT_LEN 60           /* "$2y$10$" + 22 salt + 31 hash characters */
#define CACHE_SLOTS 64          /* verified pairs remembered */
#define CHAIN_MAX 8             /* client certificates looked at */
#define DIGEST_LEN 32           /* SHA-256 */

enum client_auth {
	AUTH_NONE,           /* NoClientCert */
	AUTH_REQUEST,        /* RequestClientCert: asked for, never checked */
	AUTH_REQUIRE_ANY,    /* RequireAnyClientCert: one must be sent, not verified */
	AUTH_VERIFY_IF_GIVEN, /* VerifyClientCertIfGiven */
	AUTH_REQUIRE_VERIFY, /* RequireAndVerifyClientCert */
};

static const struct {
	const char *name;
	enum client_auth auth;
} client_auths[] = {
	{ "NoClientCert", AUTH_NONE },
	{ "RequestClientCert", AUTH_REQUEST },
	{ "RequireAnyClientCert", AUTH_REQUIRE_ANY },
	{ "VerifyClientCertIfGiven", AUTH_VERIFY_IF_GIVEN },
	{ "RequireAndVerifyClientCert", AUTH_REQUIRE_VERIFY },
	{ "RequireClientCert", AUTH_REQUIRE_ANY }, /* exporter-toolkit's old name */
};

/* In ascending order: the index compares versions. */
static const struct {
	const char *name;
	const char *gnutls;
} tls_versions[] = {
	{ "TLS10", "VERS-TLS1.0" },
	{ "TLS11", "VERS-TLS1.1" },
	{ "TLS12", "VERS-TLS1.2" },
	{ "TLS13", "VERS-TLS1.3" },
};

static const struct {
	const char *name; /* Go's crypto/tls name */
	const char *gnutls;
} curves[] = {
	{ "CurveP256", "GROUP-SECP256R1" },
	{ "CurveP384", "GROUP-SECP384R1" },
	{ "CurveP521", "GROUP-SECP521R1" },
	{ "X25519", "GROUP-X25519" },
};

/* http_server_config.headers exporter-toolkit allows, with the values it allows (NULL: any). */
static const struct {
	const char *name;
	const char *values[3];
} known_headers[] = {
	{ "Content-Security-Policy", { NULL } },
	{ "X-Frame-Options", { "deny", "sameorigin", NULL } },
	{ "X-Content-Type-Options", { "nosniff", NULL } },
	{ "X-XSS-Protection", { NULL } },
	{ "Strict-Transport-Security", { NULL } },
};

struct web_user {
	char *name;
	char *hash;                        /* bcrypt hash (secret) */
	unsigned char digest[DIGEST_LEN];  /* SHA-256 of name, for a lookup without early exit */
};

struct cache_slot {
	unsigned char key[DIGEST_LEN]; /* HMAC-SHA-256 of "user:password" under cache_secret */
	uint64_t used;                 /* last use (w->clock); 0: empty */
};

struct prom_web {
	/* TLS */
	int tls;
	char *cert_pem, *key_pem, *ca_pem; /* NUL-terminated; key_pem is wiped on free */
	enum client_auth auth;
	gnutls_x509_trust_list_t trust; /* from ca_pem; NULL without */
	char **sans;                    /* client_allowed_sans */
	size_t nsans;
	char priorities[256];
	/* HTTP */
	char **headers; /* name, value, ..., NULL */
	/* basic auth */
	struct web_user *users;
	size_t nusers;
	char dummy[BCRYPT_LEN + 1]; /* bcrypt setting for unknown users, as dear as the dearest user */
	unsigned char cache_secret[DIGEST_LEN];
	pthread_mutex_t lock; /* guards cache and clock */
	struct cache_slot cache[CACHE_SLOTS];
	uint64_t clock;
};

/* ---- small helpers ------------------------------------------------------ */

/* 1 when a and b are equal, in time that depends on n only. */
static int ct_equal(const void *a, const void *b, size_t n)
{
	const volatile unsigned char *x = a, *y = b;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= x[i] ^ y[i];
	return d == 0;
}

static void free_secret(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		free(s);
	}
}

static void free_strv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* Validation context: the document and the first error. */
struct wctx {
	const struct doc *d;
	char **err;
	const char *dir; /* the web config's directory, "" for the current one */
};

#define WFAIL(v, path, at_key, ...)                                           \
	do {                                                                  \
		*(v)->err = doc_error((v)->d, (path), (at_key), __VA_ARGS__); \
		return -EINVAL;                                               \
	} while (0)

/* Every key of obj must be one of the NULL-terminated list keys. */
static int check_keys(struct wctx *v, const char *path, json_t *obj, const char *const *keys)
{
	*v->err = doc_check_keys(v->d, path, obj, keys);
	return *v->err ? -EINVAL : 0;
}

/*
 * obj.key as a string: 0 with *out borrowed (NULL when absent or null),
 * -EINVAL for another type.
 */
static int get_string(struct wctx *v, const char *base, json_t *obj, const char *key, const char **out)
{
	json_t *j = json_object_get(obj, key);
	char path[256];

	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	doc_path_key(path, sizeof(path), base, key);
	if (!json_is_string(j))
		WFAIL(v, path, 0, "expected a string, got %s", doc_kind(j));
	if (strlen(json_string_value(j)) != json_string_length(j))
		WFAIL(v, path, 0, "contains a NUL character");
	*out = json_string_value(j);
	return 0;
}

/* obj.key as an array of strings: 0 with *out borrowed (NULL when absent or null). */
static int get_string_array(struct wctx *v, const char *base, json_t *obj, const char *key, json_t **out)
{
	json_t *j = json_object_get(obj, key), *e;
	char path[256], sub[256];
	size_t i;

	*out = NULL;
	if (!j || json_is_null(j))
		return 0;
	doc_path_key(path, sizeof(path), base, key);
	if (!json_is_array(j))
		WFAIL(v, path, 0, "expected a list of strings, got %s", doc_kind(j));
	json_array_foreach(j, i, e) {
		doc_path_index(sub, sizeof(sub), path, i);
		if (!json_is_string(e))
			WFAIL(v, sub, 0, "expected a string, got %s", doc_kind(e));
	}
	*out = j;
	return 0;
}

/* A relative name is taken from the web config's directory (new string). */
static char *resolve(const struct wctx *v, const char *name)
{
	if (name[0] == '/' || !v->dir[0])
		return xstrdup(name);
	return xasprintf("%s/%s", v->dir, name);
}

/*
 * Why a user's file could not be read, for messages: a FIFO, a directory
 * or a socket where a regular file belongs says what it is (read_regular_file
 * refuses those at once rather than waiting on them); anything else is
 * strerror's. Returns a static string or buf.
 */
static const char *read_error(const char *file, ssize_t n, char *buf, size_t size)
{
	if (n == -EINVAL || n == -EISDIR) {
		snprintf(buf, size, "%s, not a regular file", file_kind_name(file));
		return buf;
	}
	return strerror((int)-n);
}

/*
 * Read the file named at path (a value of the config) into a new
 * NUL-terminated string; on failure the error names the resolved file.
 */
static int read_pem(struct wctx *v, const char *path, const char *name, char **out)
{
	char *file = resolve(v, name), *text = xmalloc(PEM_MAX_BYTES + 1), why[96];
	ssize_t n = read_regular_file(file, text, PEM_MAX_BYTES + 1);

	if (n < 0) {
		*v->err = n == -EFBIG ? doc_error(v->d, path, 0, "%s is larger than %d bytes", file, PEM_MAX_BYTES)
				      : doc_error(v->d, path, 0, "cannot read %s: %s", file,
						  read_error(file, n, why, sizeof(why)));
		free(text);
		free(file);
		return (int)n == -EFBIG ? -EINVAL : (int)n;
	}
	free(file);
	*out = xrealloc(text, (size_t)n + 1);
	return 0;
}

/* ---- tls_server_config -------------------------------------------------- */

/*
 * One of an inline PEM (key) or a file (file_key): the PEM text into *out
 * (new string, NULL when neither is set).
 */
static int load_pem(struct wctx *v, json_t *tls, const char *key, const char *file_key, char **out)
{
	const char *text, *file;
	char path[256];
	int rc;

	*out = NULL;
	if ((rc = get_string(v, "tls_server_config", tls, key, &text)) ||
	    (rc = get_string(v, "tls_server_config", tls, file_key, &file)))
		return rc;
	if (text && file) {
		doc_path_key(path, sizeof(path), "tls_server_config", key);
		WFAIL(v, path, 1, "give %s or %s, not both", key, file_key);
	}
	if (file) {
		doc_path_key(path, sizeof(path), "tls_server_config", file_key);
		if (!*file)
			WFAIL(v, path, 0, "empty file name");
		return read_pem(v, path, file, out);
	}
	if (text)
		*out = xstrdup(text);
	return 0;
}

/* Where the PEM came from, for messages: the key present in the config. */
static const char *pem_key(json_t *tls, const char *key, const char *file_key)
{
	return json_object_get(tls, file_key) ? file_key : key;
}

/* The server certificate and key parse and belong together. */
static int check_key_pair(struct wctx *v, json_t *tls, const char *cert_pem, const char *key_pem)
{
	gnutls_datum_t c = { (unsigned char *)cert_pem, (unsigned)strlen(cert_pem) };
	gnutls_datum_t k = { (unsigned char *)key_pem, (unsigned)strlen(key_pem) };
	gnutls_x509_crt_t *crts = NULL;
	gnutls_x509_privkey_t pk = NULL;
	gnutls_certificate_credentials_t cred = NULL;
	unsigned ncrts = 0;
	char cpath[256], kpath[256];
	int rc = 0, grc;

	doc_path_key(cpath, sizeof(cpath), "tls_server_config", pem_key(tls, "cert", "cert_file"));
	doc_path_key(kpath, sizeof(kpath), "tls_server_config", pem_key(tls, "key", "key_file"));
	grc = gnutls_x509_crt_list_import2(&crts, &ncrts, &c, GNUTLS_X509_FMT_PEM, 0);
	if (grc < 0 || ncrts == 0) {
		*v->err = grc == GNUTLS_E_NO_CERTIFICATE_FOUND || grc >= 0
				  ? doc_error(v->d, cpath, 0, "no PEM certificate found")
				  : doc_error(v->d, cpath, 0, "unusable PEM certificate: %s", gnutls_strerror(grc));
		rc = -EINVAL;
		goto out;
	}
	if (gnutls_x509_crt_get_expiration_time(crts[0]) < time(NULL))
		log_warn("prom: %s: the server certificate has expired", v->d->file);
	gnutls_x509_privkey_init(&pk);
	grc = gnutls_x509_privkey_import2(pk, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (grc < 0) {
		if (grc == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE || grc == GNUTLS_E_BASE64_UNEXPECTED_HEADER_ERROR)
			*v->err = doc_error(v->d, kpath, 0, "no PEM private key found");
		else if (strstr(key_pem, "ENCRYPTED"))
			*v->err = doc_error(v->d, kpath, 0, "an encrypted private key: accel-prom takes unencrypted ones "
							    "(openssl pkey -in KEY -out PLAIN)");
		else
			*v->err = doc_error(v->d, kpath, 0, "unusable PEM private key: %s", gnutls_strerror(grc));
		rc = -EINVAL;
		goto out;
	}
	gnutls_certificate_allocate_credentials(&cred);
	grc = gnutls_certificate_set_x509_key_mem2(cred, &c, &k, GNUTLS_X509_FMT_PEM, NULL, 0);
	if (grc < 0) {
		*v->err = grc == GNUTLS_E_CERTIFICATE_KEY_MISMATCH
				  ? doc_error(v->d, kpath, 0, "the private key does not match the certificate")
				  : doc_error(v->d, kpath, 0, "GnuTLS refuses the certificate and key: %s",
					      gnutls_strerror(grc));
		rc = -EINVAL;
	}
out:
	if (cred)
		gnutls_certificate_free_credentials(cred);
	if (pk)
		gnutls_x509_privkey_deinit(pk);
	for (unsigned i = 0; i < ncrts; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	return rc;
}

static int tls_version(struct wctx *v, json_t *tls, const char *key, int dflt, int *out)
{
	char q[LOG_QUOTE_BUF]; /* outside input, quoted for a message */
	const char *s;
	char path[256], known[128];
	size_t n = 0;
	int rc;

	*out = dflt;
	if ((rc = get_string(v, "tls_server_config", tls, key, &s)) || !s)
		return rc;
	for (size_t i = 0; i < ARRAY_SIZE(tls_versions); i++) {
		if (strcmp(s, tls_versions[i].name) == 0) {
			*out = (int)i;
			return 0;
		}
		n += (size_t)snprintf(known + n, sizeof(known) - n, "%s%s", i ? ", " : "", tls_versions[i].name);
	}
	doc_path_key(path, sizeof(path), "tls_server_config", key);
	WFAIL(v, path, 0, "unknown TLS version \"%s\"; known: %s", log_quote(q, sizeof(q), s, (size_t)-1), known);
}

/* The GnuTLS priority string; checked by GnuTLS itself. */
static int build_priorities(struct wctx *v, struct prom_web *w, json_t *tls)
{
	char q[LOG_QUOTE_BUF]; /* outside input, quoted for a message */
	gnutls_priority_t prio;
	const char *errpos = NULL, *s;
	json_t *list, *e;
	char path[256];
	size_t n, i;
	int lo, hi, rc;

	if ((rc = tls_version(v, tls, "min_version", 2, &lo)) || (rc = tls_version(v, tls, "max_version", 3, &hi)))
		return rc;
	if (lo > hi)
		WFAIL(v, "tls_server_config.min_version", 0, "min_version %s is above max_version %s",
		      tls_versions[lo].name, tls_versions[hi].name);
	n = (size_t)snprintf(w->priorities, sizeof(w->priorities), "NORMAL:-VERS-ALL");
	for (int k = hi; k >= lo; k--)
		n += (size_t)snprintf(w->priorities + n, sizeof(w->priorities) - n, ":+%s", tls_versions[k].gnutls);

	if ((rc = get_string_array(v, "tls_server_config", tls, "curve_preferences", &list)))
		return rc;
	if (list && json_array_size(list)) {
		n += (size_t)snprintf(w->priorities + n, sizeof(w->priorities) - n, ":-GROUP-ALL");
		json_array_foreach(list, i, e) {
			size_t c;

			s = json_string_value(e);
			for (c = 0; c < ARRAY_SIZE(curves) && strcmp(curves[c].name, s); c++)
				;
			if (c == ARRAY_SIZE(curves)) {
				doc_path_index(path, sizeof(path), "tls_server_config.curve_preferences", i);
				WFAIL(v, path, 0, "unknown curve \"%s\"; known: CurveP256, CurveP384, CurveP521, X25519",
				      log_quote(q, sizeof(q), s, (size_t)-1));
			}
			n += (size_t)snprintf(w->priorities + n, sizeof(w->priorities) - n, ":+%s", curves[c].gnutls);
		}
	}

	if ((rc = get_string_array(v, "tls_server_config", tls, "cipher_suites", &list)))
		return rc;
	if (list && json_array_size(list))
		WFAIL(v, "tls_server_config.cipher_suites", 1,
		      "not supported by accel-prom (GnuTLS's NORMAL suites are used); remove it, or set "
		      "min_version: TLS13");

	e = json_object_get(tls, "prefer_server_cipher_suites");
	if (e && !json_is_null(e) && !json_is_boolean(e))
		WFAIL(v, "tls_server_config.prefer_server_cipher_suites", 0, "expected true or false, got %s",
		      doc_kind(e));
	if (!e || json_is_null(e) || json_is_true(e))
		n += (size_t)snprintf(w->priorities + n, sizeof(w->priorities) - n, ":%%SERVER_PRECEDENCE");
	if (n >= sizeof(w->priorities))
		WFAIL(v, "tls_server_config", 0, "too many settings for a GnuTLS priority string");

	rc = gnutls_priority_init(&prio, w->priorities, &errpos);
	if (rc < 0)
		WFAIL(v, "tls_server_config", 0, "GnuTLS refuses the priority string \"%s\" at \"%s\": %s",
		      w->priorities, errpos ? errpos : "", gnutls_strerror(rc));
	gnutls_priority_deinit(prio);
	return 0;
}

static int load_tls(struct wctx *v, struct prom_web *w, json_t *tls)
{
	char q[LOG_QUOTE_BUF]; /* outside input, quoted for a message */
	static const char *const keys[] = { "cert", "key", "client_ca", "cert_file", "key_file",
					    "client_auth_type", "client_ca_file", "client_allowed_sans",
					    "min_version", "max_version", "cipher_suites",
					    "prefer_server_cipher_suites", "curve_preferences", NULL };
	const char *auth;
	json_t *sans, *e;
	char path[256];
	size_t i;
	int rc, cas;

	if (!tls || json_is_null(tls))
		return 0;
	if (!json_is_object(tls))
		WFAIL(v, "tls_server_config", 0, "expected a mapping, got %s", doc_kind(tls));
	if ((rc = check_keys(v, "tls_server_config", tls, keys)))
		return rc;
	if (json_object_size(tls) == 0)
		return 0; /* "tls_server_config: {}" means plain HTTP, as in exporter-toolkit */
	w->tls = 1;

	/* client_auth_type first: it decides what the CA is for. */
	if ((rc = get_string(v, "tls_server_config", tls, "client_auth_type", &auth)))
		return rc;
	w->auth = AUTH_NONE;
	if (auth) {
		for (i = 0; i < ARRAY_SIZE(client_auths) && strcmp(client_auths[i].name, auth); i++)
			;
		if (i == ARRAY_SIZE(client_auths))
			WFAIL(v, "tls_server_config.client_auth_type", 0,
			      "unknown client_auth_type \"%s\"; known: NoClientCert, RequestClientCert, "
			      "RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert",
			      log_quote(q, sizeof(q), auth, (size_t)-1));
		w->auth = client_auths[i].auth;
	}

	if ((rc = load_pem(v, tls, "cert", "cert_file", &w->cert_pem)) ||
	    (rc = load_pem(v, tls, "key", "key_file", &w->key_pem)) ||
	    (rc = load_pem(v, tls, "client_ca", "client_ca_file", &w->ca_pem)))
		return rc;
	if (!w->cert_pem)
		WFAIL(v, "tls_server_config", 0, "needs cert_file (or cert)");
	if (!w->key_pem)
		WFAIL(v, "tls_server_config", 0, "needs key_file (or key)");
	if ((rc = check_key_pair(v, tls, w->cert_pem, w->key_pem)))
		return rc;

	if (w->ca_pem) {
		gnutls_datum_t ca = { (unsigned char *)w->ca_pem, (unsigned)strlen(w->ca_pem) };

		doc_path_key(path, sizeof(path), "tls_server_config", pem_key(tls, "client_ca", "client_ca_file"));
		if (w->auth == AUTH_NONE)
			WFAIL(v, path, 1, "a client CA without client_auth_type (set it to RequireAndVerifyClientCert)");
		gnutls_x509_trust_list_init(&w->trust, 0);
		cas = gnutls_x509_trust_list_add_trust_mem(w->trust, &ca, NULL, GNUTLS_X509_FMT_PEM, 0, 0);
		if (cas == 0 || cas == GNUTLS_E_NO_CERTIFICATE_FOUND)
			WFAIL(v, path, 0, "no PEM certificate found");
		if (cas < 0)
			WFAIL(v, path, 0, "unusable PEM certificate: %s", gnutls_strerror(cas));
	} else if (w->auth == AUTH_REQUIRE_ANY || w->auth == AUTH_VERIFY_IF_GIVEN ||
		   w->auth == AUTH_REQUIRE_VERIFY) {
		WFAIL(v, "tls_server_config.client_auth_type", 0,
		      "%s needs client_ca_file (or client_ca): accel-prom asks clients for a certificate only "
		      "with a CA to name", auth);
	}

	if ((rc = get_string_array(v, "tls_server_config", tls, "client_allowed_sans", &sans)))
		return rc;
	if (sans) {
		if (w->auth != AUTH_REQUIRE_ANY && w->auth != AUTH_REQUIRE_VERIFY)
			WFAIL(v, "tls_server_config.client_allowed_sans", 1,
			      "needs client_auth_type RequireAnyClientCert or RequireAndVerifyClientCert");
		w->sans = xcalloc(json_array_size(sans) + 1, sizeof(*w->sans));
		json_array_foreach(sans, i, e)
			w->sans[w->nsans++] = xstrdup(json_string_value(e));
	}
	return build_priorities(v, w, tls);
}

/* ---- http_server_config ------------------------------------------------- */

static int load_http(struct wctx *v, struct prom_web *w, json_t *http)
{
	char q[LOG_QUOTE_BUF]; /* outside input, quoted for a message */
	static const char *const keys[] = { "http2", "headers", NULL };
	const char *k;
	json_t *j, *val;
	char path[256];
	size_t n = 0;

	w->headers = xcalloc(2 * ARRAY_SIZE(known_headers) + 1, sizeof(*w->headers));
	if (!http || json_is_null(http))
		return 0;
	if (!json_is_object(http))
		WFAIL(v, "http_server_config", 0, "expected a mapping, got %s", doc_kind(http));
	if (check_keys(v, "http_server_config", http, keys))
		return -EINVAL;
	/* accel-prom speaks HTTP/1.1 only, which is what http2: false asks for; true is a wish. */
	j = json_object_get(http, "http2");
	if (j && !json_is_null(j) && !json_is_boolean(j))
		WFAIL(v, "http_server_config.http2", 0, "expected true or false, got %s", doc_kind(j));
	j = json_object_get(http, "headers");
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		WFAIL(v, "http_server_config.headers", 0, "expected a mapping, got %s", doc_kind(j));
	json_object_foreach(j, k, val) {
		size_t i, a;
		const char *s;

		doc_path_key(path, sizeof(path), "http_server_config.headers", k);
		for (i = 0; i < ARRAY_SIZE(known_headers) && strcmp(known_headers[i].name, k); i++)
			;
		if (i == ARRAY_SIZE(known_headers))
			WFAIL(v, path, 1,
			      "header \"%s\" is not allowed; allowed: Content-Security-Policy, X-Frame-Options, "
			      "X-Content-Type-Options, X-XSS-Protection, Strict-Transport-Security",
			      log_quote(q, sizeof(q), k, (size_t)-1));
		if (!json_is_string(val))
			WFAIL(v, path, 0, "expected a string, got %s", doc_kind(val));
		s = json_string_value(val);
		if (strlen(s) != json_string_length(val) || strpbrk(s, "\r\n"))
			WFAIL(v, path, 0, "a header value is one line");
		if (!*s)
			continue; /* blank: header not sent */
		for (a = 0; known_headers[i].values[a] && strcasecmp(known_headers[i].values[a], s); a++)
			;
		if (known_headers[i].values[0] && !known_headers[i].values[a])
			WFAIL(v, path, 0, "invalid value \"%s\"; allowed: %s%s%s", log_quote(q, sizeof(q), s, (size_t)-1),
			      known_headers[i].values[0],
			      known_headers[i].values[1] ? ", " : "",
			      known_headers[i].values[1] ? known_headers[i].values[1] : "");
		w->headers[n++] = xstrdup(k);
		w->headers[n++] = xstrdup(s);
	}
	return 0;
}

/* ---- basic_auth_users --------------------------------------------------- */

/* The cost of a bcrypt hash ($2a$, $2b$ or $2y$, as htpasswd -B writes), or -1. */
static int bcrypt_cost(const char *h, size_t len)
{
	static const char alphabet[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost;

	if (len != BCRYPT_LEN || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    !isdigit((unsigned char)h[4]) || !isdigit((unsigned char)h[5]) || h[6] != '$')
		return -1;
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return -1;
	for (size_t i = 7; i < len; i++)
		if (!strchr(alphabet, h[i]))
			return -1;
	return cost;
}

static int load_users(struct wctx *v, struct prom_web *w, json_t *users)
{
	const char *name;
	json_t *hash;
	char path[256], setting[CRYPT_GENSALT_OUTPUT_SIZE];
	int maxcost = 0;

	if (!users || json_is_null(users))
		return 0;
	if (!json_is_object(users))
		WFAIL(v, "basic_auth_users", 0, "expected a mapping of user name to bcrypt hash, got %s",
		      doc_kind(users));
	w->users = xcalloc(json_object_size(users) + 1, sizeof(*w->users));
	json_object_foreach(users, name, hash) {
		struct web_user *u = &w->users[w->nusers];
		int cost;

		doc_path_key(path, sizeof(path), "basic_auth_users", name);
		if (strchr(name, ':'))
			WFAIL(v, path, 1, "a user name cannot contain ':' (basic authentication splits on it)");
		if (!json_is_string(hash))
			WFAIL(v, path, 0, "expected a bcrypt hash, got %s", doc_kind(hash));
		cost = bcrypt_cost(json_string_value(hash), json_string_length(hash));
		if (cost < 0)
			WFAIL(v, path, 0, "not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost from 04 to 31 and "
					  "53 more characters, as `htpasswd -nBC 10 USER` writes");
		u->name = xstrdup(name);
		u->hash = xstrdup(json_string_value(hash));
		gnutls_hash_fast(GNUTLS_DIG_SHA256, name, strlen(name), u->digest);
		w->nusers++;
		if (cost > maxcost)
			maxcost = cost;
	}
	if (w->nusers == 0)
		return 0;
	/* A setting (salt and cost, no hash) is all crypt_r needs to do the same work. */
	if (!crypt_gensalt_rn("$2b$", (unsigned long)maxcost, NULL, 0, setting, sizeof(setting)) ||
	    strlen(setting) >= sizeof(w->dummy))
		WFAIL(v, "basic_auth_users", 0, "crypt_gensalt: %s", strerror(errno));
	snprintf(w->dummy, sizeof(w->dummy), "%s", setting);
	if (gnutls_rnd(GNUTLS_RND_KEY, w->cache_secret, sizeof(w->cache_secret)) < 0)
		WFAIL(v, "basic_auth_users", 0, "no random bytes for the credential cache");
	return 0;
}

/* ---- load / free -------------------------------------------------------- */

int prom_web_load(const char *path, struct prom_web **out, char **err)
{
	static const char *const keys[] = { "tls_server_config", "http_server_config", "basic_auth_users",
					    "rate_limit", NULL };
	struct prom_web *w = NULL;
	struct doc d = { 0 };
	struct wctx v = { .d = &d, .err = err };
	const char *slash = strrchr(path, '/');
	char *text = xmalloc(DOC_MAX_BYTES + 1), *dir, why[96];
	ssize_t n;
	int rc;

	*out = NULL;
	*err = NULL;
	dir = slash ? xasprintf("%.*s", slash == path ? 1 : (int)(slash - path), path) : xstrdup("");
	v.dir = dir;
	n = read_regular_file(path, text, DOC_MAX_BYTES + 1);
	if (n < 0) {
		*err = n == -EFBIG ? xasprintf("%s: larger than %d bytes", path, DOC_MAX_BYTES)
				   : xasprintf("%s: %s", path, read_error(path, n, why, sizeof(why)));
		rc = n == -EFBIG ? -EINVAL : (int)n;
		goto out;
	}
	/* exporter-toolkit's files are YAML whatever their name. */
	if ((rc = doc_load_mem(path, text, (size_t)n, 1, &d, err)))
		goto out;

	w = xcalloc(1, sizeof(*w));
	pthread_mutex_init(&w->lock, NULL);
	rc = -EINVAL;
	if (!json_is_object(d.root) && !json_is_null(d.root)) {
		*err = doc_error(&d, "", 0, "expected a mapping, got %s", doc_kind(d.root));
		goto out;
	}
	if (json_is_object(d.root)) {
		if (check_keys(&v, "", d.root, keys))
			goto out;
		if (json_object_get(d.root, "rate_limit")) {
			*err = doc_error(&d, "rate_limit", 1,
					 "not supported by accel-prom; remove it (a reverse proxy can limit rates)");
			goto out;
		}
	}
	if (load_tls(&v, w, json_object_get(d.root, "tls_server_config")) ||
	    load_http(&v, w, json_object_get(d.root, "http_server_config")) ||
	    load_users(&v, w, json_object_get(d.root, "basic_auth_users")))
		goto out;
	if (w->nusers && !w->tls)
		log_warn("prom: %s: basic_auth_users without tls_server_config: passwords cross the network in "
			 "clear text", path);
	rc = 0;
	*out = w;
	w = NULL;
out:
	prom_web_free(w);
	if (d.file)
		doc_free(&d);
	explicit_bzero(text, n > 0 ? (size_t)n : 0);
	free(text);
	free(dir);
	return rc;
}

void prom_web_free(struct prom_web *w)
{
	if (!w)
		return;
	free(w->cert_pem);
	free_secret(w->key_pem);
	free(w->ca_pem);
	if (w->trust)
		gnutls_x509_trust_list_deinit(w->trust, 1);
	free_strv(w->sans);
	free_strv(w->headers);
	for (size_t i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free_secret(w->users[i].hash);
	}
	free(w->users);
	pthread_mutex_destroy(&w->lock);
	explicit_bzero(w, sizeof(*w));
	free(w);
}

int prom_web_tls(const struct prom_web *w, struct prom_web_tls *tls)
{
	memset(tls, 0, sizeof(*tls));
	if (!w || !w->tls)
		return 0;
	tls->cert_pem = w->cert_pem;
	tls->key_pem = w->key_pem;
	tls->ca_pem = w->ca_pem;
	tls->verify_client = w->auth == AUTH_REQUIRE_ANY || w->auth == AUTH_VERIFY_IF_GIVEN ||
			     w->auth == AUTH_REQUIRE_VERIFY;
	tls->priorities = w->priorities;
	return 1;
}

const char *const *prom_web_headers(const struct prom_web *w)
{
	static const char *const none[] = { NULL };

	return w && w->headers ? (const char *const *)w->headers : none;
}

/* ---- client certificates ------------------------------------------------ */

/* The certificate has one of client_allowed_sans (DNS, IP, e-mail or URI) as a SAN. */
static int san_allowed(const struct prom_web *w, gnutls_x509_crt_t crt)
{
	for (unsigned idx = 0;; idx++) {
		char buf[1024], ip[INET6_ADDRSTRLEN];
		size_t size = sizeof(buf) - 1;
		unsigned critical;
		const char *s = buf;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, idx, buf, &size, &critical);

		if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			return 0;
		if (type < 0)
			continue; /* too long for buf, or unparsable: cannot match */
		buf[size] = '\0';
		if (type == GNUTLS_SAN_IPADDRESS) {
			if (!inet_ntop(size == 4 ? AF_INET : AF_INET6, buf, ip, sizeof(ip)) || (size != 4 && size != 16))
				continue;
			s = ip;
		} else if (type != GNUTLS_SAN_DNSNAME && type != GNUTLS_SAN_RFC822NAME && type != GNUTLS_SAN_URI) {
			continue;
		} else if (strlen(buf) != size) {
			continue; /* embedded NUL */
		}
		for (size_t i = 0; i < w->nsans; i++)
			if (strcmp(w->sans[i], s) == 0)
				return 1;
	}
}

int prom_web_check_client(const struct prom_web *w, void *gnutls_session)
{
	gnutls_session_t session = gnutls_session;
	gnutls_x509_crt_t crts[CHAIN_MAX];
	const gnutls_datum_t *peers;
	unsigned npeers = 0, n = 0, status = 0;
	int ok = 0;

	if (!w || !w->tls || w->auth == AUTH_NONE || w->auth == AUTH_REQUEST)
		return 1;
	if (!session)
		return 0;
	peers = gnutls_certificate_get_peers(session, &npeers);
	if (!peers || npeers == 0) {
		if (w->auth == AUTH_VERIFY_IF_GIVEN)
			return 1;
		log_info("prom: client refused: no client certificate");
		return 0;
	}
	if (npeers > CHAIN_MAX) {
		log_info("prom: client refused: a chain of %u certificates (at most %d)", npeers, CHAIN_MAX);
		return 0;
	}
	for (n = 0; n < npeers; n++) {
		gnutls_x509_crt_init(&crts[n]);
		if (gnutls_x509_crt_import(crts[n], &peers[n], GNUTLS_X509_FMT_DER) < 0) {
			gnutls_x509_crt_deinit(crts[n]);
			log_info("prom: client refused: unparsable certificate");
			goto out;
		}
	}
	if (w->auth == AUTH_VERIFY_IF_GIVEN || w->auth == AUTH_REQUIRE_VERIFY) {
		gnutls_typed_vdata_st purpose = { .type = GNUTLS_DT_KEY_PURPOSE_OID,
						  .data = (unsigned char *)GNUTLS_KP_TLS_WWW_CLIENT };
		int rc = gnutls_x509_trust_list_verify_crt2(w->trust, crts, n, &purpose, 1, 0, &status, NULL);

		if (rc < 0 || status) {
			gnutls_datum_t why = { NULL, 0 };

			if (rc >= 0 && gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &why, 0) >= 0)
				log_info("prom: client refused: %s", (const char *)why.data);
			else
				log_info("prom: client refused: %s", gnutls_strerror(rc));
			gnutls_free(why.data);
			goto out;
		}
	}
	if (w->nsans && !san_allowed(w, crts[0])) {
		log_info("prom: client refused: no subject alternative name in client_allowed_sans");
		goto out;
	}
	ok = 1;
out:
	for (unsigned i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	return ok;
}

/* ---- basic authentication ----------------------------------------------- */

static int b64_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/*
 * Strict base64 (RFC 4648 section 4, padded, canonical: the unused bits of
 * the last character are zero). The byte count, or -1.
 */
static long b64_decode(const char *s, size_t n, unsigned char *out, size_t size)
{
	size_t o = 0;

	if (n == 0 || n % 4)
		return -1;
	for (size_t i = 0; i < n; i += 4) {
		int a = b64_value((unsigned char)s[i]), b = b64_value((unsigned char)s[i + 1]);
		int last = i + 4 == n;
		int c = s[i + 2] == '=' && last ? -2 : b64_value((unsigned char)s[i + 2]);
		int d = s[i + 3] == '=' && last ? -2 : b64_value((unsigned char)s[i + 3]);

		if (a < 0 || b < 0 || c == -1 || d == -1 || (c == -2 && d != -2))
			return -1;
		if (o + 3 > size)
			return -1;
		out[o++] = (unsigned char)(a << 2 | b >> 4);
		if (c == -2) {
			if (b & 0x0f)
				return -1;
			break;
		}
		out[o++] = (unsigned char)((b & 0x0f) << 4 | c >> 2);
		if (d == -2) {
			if (c & 0x03)
				return -1;
			break;
		}
		out[o++] = (unsigned char)((c & 0x03) << 6 | d);
	}
	return (long)o;
}

/*
 * "Basic <base64>" (scheme case-insensitive, spaces around) decoded into
 * cred; the byte count, or -1 for anything else.
 */
static long parse_basic(const char *h, unsigned char *cred, size_t size)
{
	size_t n;

	while (*h == ' ' || *h == '\t')
		h++;
	if (strncasecmp(h, "Basic", 5) || (h[5] != ' ' && h[5] != '\t'))
		return -1;
	h += 5;
	while (*h == ' ' || *h == '\t')
		h++;
	for (n = 0; h[n] && h[n] != ' ' && h[n] != '\t'; n++)
		if (n > 4 * ((size + 2) / 3))
			return -1;
	for (size_t i = n; h[i]; i++)
		if (h[i] != ' ' && h[i] != '\t')
			return -1;
	return b64_decode(h, n, cred, size);
}

/* 1 when key is cached (and marks it used). */
static int cache_lookup(struct prom_web *w, const unsigned char *key)
{
	int hit = 0;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		if (w->cache[i].used && ct_equal(w->cache[i].key, key, DIGEST_LEN)) {
			w->cache[i].used = ++w->clock;
			hit = 1;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return hit;
}

/* Remember key, in an empty slot or in place of the least recently used. */
static void cache_insert(struct prom_web *w, const unsigned char *key)
{
	size_t victim = 0;

	pthread_mutex_lock(&w->lock);
	for (size_t i = 0; i < CACHE_SLOTS; i++) {
		if (w->cache[i].used && ct_equal(w->cache[i].key, key, DIGEST_LEN)) {
			victim = i; /* another thread verified the same pair meanwhile */
			break;
		}
		if (w->cache[i].used < w->cache[victim].used)
			victim = i;
	}
	memcpy(w->cache[victim].key, key, DIGEST_LEN);
	w->cache[victim].used = ++w->clock;
	pthread_mutex_unlock(&w->lock);
}

int prom_web_authorize(struct prom_web *w, const char *authorization)
{
	unsigned char cred[CRED_MAX + 1], key[DIGEST_LEN], digest[DIGEST_LEN];
	struct crypt_data *data = NULL;
	const char *target;
	unsigned char *colon;
	long n;
	size_t ulen;
	int found = 0, ok = 0;
	unsigned idx = 0;

	if (!w || w->nusers == 0)
		return 1;
	if (!authorization)
		return 0;
	n = parse_basic(authorization, cred, CRED_MAX);
	if (n < 0)
		goto out;
	colon = memchr(cred, ':', (size_t)n);
	/* A NUL would cut the password short for crypt_r. */
	if (!colon || memchr(cred, '\0', (size_t)n))
		goto out;
	ulen = (size_t)(colon - cred);
	if ((size_t)n - ulen - 1 > PASSWORD_MAX)
		goto out;

	gnutls_hmac_fast(GNUTLS_MAC_SHA256, w->cache_secret, sizeof(w->cache_secret), cred, (size_t)n, key);
	if (cache_lookup(w, key)) {
		ok = 1;
		goto out;
	}

	/* Which user, without an early exit. */
	gnutls_hash_fast(GNUTLS_DIG_SHA256, cred, ulen, digest);
	for (size_t i = 0; i < w->nusers; i++) {
		unsigned eq = (unsigned)ct_equal(digest, w->users[i].digest, DIGEST_LEN);
		unsigned mask = 0u - eq;

		idx = (idx & ~mask) | ((unsigned)i & mask);
		found |= (int)eq;
	}
	target = found ? w->users[idx].hash : w->dummy;

	cred[n] = '\0';
	data = xcalloc(1, sizeof(*data)); /* ~32 KiB: not for a thread's stack */
	{
		/* Unknown users pay the same bcrypt and the same comparison (w->dummy is zero-padded). */
		const char *h = crypt_r((const char *)colon + 1, target, data);
		int eq = h && strlen(h) == BCRYPT_LEN && ct_equal(h, target, BCRYPT_LEN);

		ok = found & eq;
	}
	if (ok)
		cache_insert(w, key);
out:
	if (data) {
		explicit_bzero(data, sizeof(*data));
		free(data);
	}
	explicit_bzero(cred, sizeof(cred));
	explicit_bzero(key, sizeof(key));
	if (!ok)
		log_debug("prom: basic authentication refused");
	return ok;
}
