/* SPDX-License-Identifier: MIT */
/*
 * accel-prom's web configuration (sinks/prom/prom_web.c): a table of good and bad
 * web config files with the exact messages; basic authentication (accepted,
 * refused, malformed, cached, as slow for unknown users as for known ones);
 * and TLS end to end: a libmicrohttpd server set up from prom_web_tls, as
 * accel-prom does, and a GnuTLS client with and without client certificates.
 *
 * Runs in a temporary directory holding copies of the certificates of
 * tests/fixtures/prom_web (made with the openssl CLI, valid for 100 years),
 * so that the config files name them relative to themselves.
 */
#include "../../common/log.h"
#include "../../sinks/prom/prom_web.h"
#include "tap.h"

#include <arpa/inet.h>
#include <crypt.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <limits.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define FIXTURES "tests/fixtures/prom_web"

/* `htpasswd -nbBC 10 alice scrape-me-7` and friends; the passwords are not secret. */
#define ALICE_HASH "$2y$10$hdZ9a9bi3eNTqld0Y2oJUOiRJCH/tYL74apJXq.HWf8lB2BYnopxG"
#define ALICE_PASS "scrape-me-7"
#define BOB_HASH "$2y$10$lflNOECAErLgO3mk23oNCO00wNTl41fBDACgq8NTld42DeP9Wan4m"
#define BOB_PASS "b0b:has:colons"
#define CAROL_HASH "$2y$04$1kNKD/Mr.dDcKwW8Aaysa.1FLdIYb8o457Ykf7ilTR03823h/4EGa" /* cost 4 */
#define CAROL_PASS "cheap"
/* alice's hash under the $2b$ prefix: the same bcrypt. */
#define DAVE_HASH "$2b$10$hdZ9a9bi3eNTqld0Y2oJUOiRJCH/tYL74apJXq.HWf8lB2BYnopxG"

#define USERS                                                                            \
	"basic_auth_users:\n  alice: " ALICE_HASH "\n  bob: '" BOB_HASH "'\n  carol: " CAROL_HASH \
	"\n  dave: " DAVE_HASH "\n"

#define TLS_OK "tls_server_config:\n  cert_file: server.pem\n  key_file: server.key\n"

static void write_file(const char *name, const char *text)
{
	FILE *f = fopen(name, "w");

	if (!f || fputs(text, f) < 0 || fclose(f)) {
		perror(name);
		exit(2);
	}
}

static void copy_file(const char *from, const char *to)
{
	char buf[8192];
	FILE *in = fopen(from, "r");
	size_t n;

	if (!in) {
		perror(from);
		exit(2);
	}
	n = fread(buf, 1, sizeof(buf) - 1, in);
	fclose(in);
	buf[n] = '\0';
	write_file(to, buf);
}

/* Write text as name, load it: the error (new string) or NULL with *out set. */
static char *load(const char *name, const char *text, struct prom_web **out)
{
	struct prom_web *w = NULL;
	char *err = NULL;
	int rc;

	write_file(name, text);
	rc = prom_web_load(name, &w, &err);
	if (rc != 0 && !err)
		return strdup("(failed without a message)");
	if (rc == 0 && err)
		return strdup("(succeeded with a message)");
	*out = w;
	return err;
}

/* ---- config files ------------------------------------------------------- */

static const struct {
	const char *name;
	const char *text;
	const char *error; /* NULL: must load */
} cases[] = {
	{ "tls.yml", TLS_OK, NULL },
	{ "users.yml", USERS, NULL },
	{ "both.yaml", TLS_OK "  min_version: TLS13\n  client_auth_type: RequireAndVerifyClientCert\n"
		       "  client_ca_file: ca.pem\n" USERS, NULL },
	{ "json-style.conf", "{\"tls_server_config\": {\"cert_file\": \"server.pem\", \"key_file\": \"server.key\"}}", NULL },
	{ "empty-tls.yml", "tls_server_config: {}\nbasic_auth_users:\n", NULL },
	{ "nothing.yml", "~\n", NULL },
	{ "headers.yml", "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: DENY\n"
			 "    Strict-Transport-Security: max-age=31536000\n    X-XSS-Protection: ''\n", NULL },
	{ "legacy.yml", TLS_OK "  client_auth_type: RequireClientCert\n  client_ca_file: ca.pem\n", NULL },
	{ "request.yml", TLS_OK "  client_auth_type: RequestClientCert\n", NULL },
	{ "sub/up.yml", "tls_server_config:\n  cert_file: ../server.pem\n  key_file: ../server.key\n", NULL },

	{ "typo.yml", "tls_server_confg:\n  cert_file: server.pem\n",
	  "typo.yml:1:1: tls_server_confg: unknown key \"tls_server_confg\"; known: tls_server_config, "
	  "http_server_config, basic_auth_users, rate_limit" },
	{ "tlskey.yml", TLS_OK "  certfile: x.pem\n",
	  "tlskey.yml:4:3: tls_server_config.certfile: unknown key \"certfile\"; known: cert, key, client_ca, "
	  "cert_file, key_file, client_auth_type, client_ca_file, client_allowed_sans, min_version, max_version, "
	  "cipher_suites, prefer_server_cipher_suites, curve_preferences" },
	{ "nokey.yml", "tls_server_config:\n  cert_file: server.pem\n",
	  "nokey.yml:2:3: tls_server_config: needs key_file (or key)" },
	{ "nocert.yml", "tls_server_config:\n  key_file: server.key\n",
	  "nocert.yml:2:3: tls_server_config: needs cert_file (or cert)" },
	{ "missing.yml", "tls_server_config:\n  cert_file: nosuch.pem\n  key_file: server.key\n",
	  "missing.yml:2:14: tls_server_config.cert_file: cannot read nosuch.pem: No such file or directory" },
	{ "sub/rel.yml", TLS_OK,
	  "sub/rel.yml:2:14: tls_server_config.cert_file: cannot read sub/server.pem: No such file or directory" },
	{ "dir.yml", "tls_server_config:\n  cert_file: sub\n  key_file: server.key\n",
	  "dir.yml:2:14: tls_server_config.cert_file: cannot read sub: a directory, not a regular file" },
	/* A FIFO where a file belongs is refused at once (it used to hang accel-prom at start). */
	{ "fifo.yml", "tls_server_config:\n  cert_file: fifo.pem\n  key_file: server.key\n",
	  "fifo.yml:2:14: tls_server_config.cert_file: cannot read fifo.pem: a FIFO, not a regular file" },
	{ "fifokey.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: fifo.pem\n",
	  "fifokey.yml:3:13: tls_server_config.key_file: cannot read fifo.pem: a FIFO, not a regular file" },
	{ "fifoca.yml", TLS_OK "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: fifo.pem\n",
	  "fifoca.yml:5:19: tls_server_config.client_ca_file: cannot read fifo.pem: a FIFO, not a regular file" },
	{ "empty-name.yml", "tls_server_config:\n  cert_file: ''\n  key_file: server.key\n",
	  "empty-name.yml:2:14: tls_server_config.cert_file: empty file name" },
	{ "mismatch.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: client.key\n",
	  "mismatch.yml:3:13: tls_server_config.key_file: the private key does not match the certificate" },
	{ "notcert.yml", "tls_server_config:\n  cert_file: server.key\n  key_file: server.key\n",
	  "notcert.yml:2:14: tls_server_config.cert_file: no PEM certificate found" },
	{ "notkey.yml", "tls_server_config:\n  cert_file: server.pem\n  key_file: server.pem\n",
	  "notkey.yml:3:13: tls_server_config.key_file: no PEM private key found" },
	{ "encrypted.yml", "tls_server_config:\n  cert_file: client.pem\n  key_file: encrypted.key\n",
	  "encrypted.yml:3:13: tls_server_config.key_file: an encrypted private key: accel-prom takes unencrypted "
	  "ones (openssl pkey -in KEY -out PLAIN)" },
	{ "twice.yml", TLS_OK "  cert: \"-----BEGIN CERTIFICATE-----\"\n",
	  "twice.yml:4:3: tls_server_config.cert: give cert or cert_file, not both" },
	{ "auth.yml", TLS_OK "  client_auth_type: RequireAndVerifyClientCerts\n",
	  "auth.yml:4:21: tls_server_config.client_auth_type: unknown client_auth_type "
	  "\"RequireAndVerifyClientCerts\"; known: NoClientCert, RequestClientCert, RequireAnyClientCert, "
	  "VerifyClientCertIfGiven, RequireAndVerifyClientCert" },
	{ "noca.yml", TLS_OK "  client_auth_type: RequireAndVerifyClientCert\n",
	  "noca.yml:4:21: tls_server_config.client_auth_type: RequireAndVerifyClientCert needs client_ca_file "
	  "(or client_ca): accel-prom asks clients for a certificate only with a CA to name" },
	{ "caonly.yml", TLS_OK "  client_ca_file: ca.pem\n",
	  "caonly.yml:4:3: tls_server_config.client_ca_file: a client CA without client_auth_type (set it to "
	  "RequireAndVerifyClientCert)" },
	{ "badca.yml", TLS_OK "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: server.key\n",
	  "badca.yml:5:19: tls_server_config.client_ca_file: no PEM certificate found" },
	{ "sans.yml", TLS_OK "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n"
		      "  client_allowed_sans: [a.example]\n",
	  "sans.yml:6:3: tls_server_config.client_allowed_sans: needs client_auth_type RequireAnyClientCert or "
	  "RequireAndVerifyClientCert" },
	{ "version.yml", TLS_OK "  min_version: TLS1.2\n",
	  "version.yml:4:16: tls_server_config.min_version: unknown TLS version \"TLS1.2\"; known: TLS10, TLS11, "
	  "TLS12, TLS13" },
	{ "minmax.yml", TLS_OK "  min_version: TLS13\n  max_version: TLS12\n",
	  "minmax.yml:4:16: tls_server_config.min_version: min_version TLS13 is above max_version TLS12" },
	{ "ciphers.yml", TLS_OK "  cipher_suites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]\n",
	  "ciphers.yml:4:3: tls_server_config.cipher_suites: not supported by accel-prom (GnuTLS's NORMAL suites "
	  "are used); remove it, or set min_version: TLS13" },
	{ "curve.yml", TLS_OK "  curve_preferences: [X25519, CurveP257]\n",
	  "curve.yml:4:31: tls_server_config.curve_preferences[1]: unknown curve \"CurveP257\"; known: CurveP256, "
	  "CurveP384, CurveP521, X25519" },
	{ "prefer.yml", TLS_OK "  prefer_server_cipher_suites: 1\n",
	  "prefer.yml:4:32: tls_server_config.prefer_server_cipher_suites: expected true or false, got a number" },
	{ "tlslist.yml", "tls_server_config: [server.pem]\n",
	  "tlslist.yml:1:20: tls_server_config: expected a mapping, got an array" },
	{ "plain.yml", "basic_auth_users:\n  alice: scrape-me-7\n",
	  "plain.yml:2:10: basic_auth_users.alice: not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost from 04 "
	  "to 31 and 53 more characters, as `htpasswd -nBC 10 USER` writes" },
	{ "md5.yml", "basic_auth_users:\n  alice: $apr1$lZL6V/ci$eIMz/iKDkbtys/uU7LEK00\n",
	  "md5.yml:2:10: basic_auth_users.alice: not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost from 04 "
	  "to 31 and 53 more characters, as `htpasswd -nBC 10 USER` writes" },
	{ "cost.yml", "basic_auth_users:\n  alice: $2y$03$hdZ9a9bi3eNTqld0Y2oJUOiRJCH/tYL74apJXq.HWf8lB2BYnopxG\n",
	  "cost.yml:2:10: basic_auth_users.alice: not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost from 04 "
	  "to 31 and 53 more characters, as `htpasswd -nBC 10 USER` writes" },
	{ "short.yml", "basic_auth_users:\n  alice: $2y$10$hdZ9a9bi3eNTqld0Y2oJUOiRJCH\n",
	  "short.yml:2:10: basic_auth_users.alice: not a bcrypt hash: expected $2a$, $2b$ or $2y$, a cost from 04 "
	  "to 31 and 53 more characters, as `htpasswd -nBC 10 USER` writes" },
	{ "colon.yml", "basic_auth_users:\n  'al:ice': " ALICE_HASH "\n",
	  "colon.yml:2:3: basic_auth_users.al:ice: a user name cannot contain ':' (basic authentication splits on "
	  "it)" },
	{ "userlist.yml", "basic_auth_users:\n  - alice\n",
	  "userlist.yml:2:3: basic_auth_users: expected a mapping of user name to bcrypt hash, got an array" },
	{ "nohash.yml", "basic_auth_users:\n  alice:\n",
	  "nohash.yml:2:9: basic_auth_users.alice: expected a bcrypt hash, got null" },
	{ "rate.yml", "rate_limit:\n  interval: 1s\n  burst: 20\n",
	  "rate.yml:1:1: rate_limit: not supported by accel-prom; remove it (a reverse proxy can limit rates)" },
	{ "header.yml", "http_server_config:\n  headers:\n    X-Powered-By: accel\n",
	  "header.yml:3:5: http_server_config.headers.X-Powered-By: header \"X-Powered-By\" is not allowed; "
	  "allowed: Content-Security-Policy, X-Frame-Options, X-Content-Type-Options, X-XSS-Protection, "
	  "Strict-Transport-Security" },
	{ "frame.yml", "http_server_config:\n  headers:\n    X-Frame-Options: allow\n",
	  "frame.yml:3:22: http_server_config.headers.X-Frame-Options: invalid value \"allow\"; allowed: deny, "
	  "sameorigin" },
	{ "crlf.yml", "http_server_config:\n  headers:\n    Content-Security-Policy: \"a\\r\\nSet-Cookie: x\"\n",
	  "crlf.yml:3:30: http_server_config.headers.Content-Security-Policy: a header value is one line" },
	{ "http2.yml", "http_server_config:\n  http2: maybe\n",
	  "http2.yml:2:10: http_server_config.http2: expected true or false, got a string" },
	{ "syntax.yml", "tls_server_config:\n  cert_file: [server.pem\n",
	  "syntax.yml:3:1: did not find expected ',' or ']' while parsing a flow sequence" },
	{ "root.yml", "- tls_server_config\n", "root.yml:1:1: expected a mapping, got an array" },
};

static void test_configs(void)
{
	struct prom_web *w = NULL;
	struct prom_web_tls tls;
	char *err;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w = NULL;
		err = load(cases[i].name, cases[i].text, &w);
		is_str(err, cases[i].error, cases[i].name);
		if (err && cases[i].error == NULL)
			printf("#   (%s)\n", err);
		ok(!!w == !cases[i].error, "%s: %s", cases[i].name, cases[i].error ? "no object" : "an object");
		free(err);
		prom_web_free(w);
	}

	/* No secret in any message: a refused hash is never quoted. */
	err = load("leak.yml", "basic_auth_users:\n  alice: $2y$10$tooshortSECRETSECRET\n", &w);
	ok(err && !strstr(err, "SECRET"), "a refused hash is not quoted");
	free(err);

	err = NULL;
	ok(prom_web_load("nosuch.yml", &w, &err) == -ENOENT, "missing web config: -ENOENT");
	is_str(err, "nosuch.yml: No such file or directory", "missing web config: message");
	free(err);
	err = NULL;
	ok(prom_web_load("fifo.pem", &w, &err) == -EINVAL, "web config that is a FIFO: -EINVAL, at once");
	is_str(err, "fifo.pem: a FIFO, not a regular file", "web config that is a FIFO: message");
	free(err);

	/* What accel-prom hands libmicrohttpd. */
	w = NULL;
	free(load("tls.yml", TLS_OK, &w));
	is_int(prom_web_tls(w, &tls), 1, "tls.yml: TLS on");
	is_str(tls.priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:%SERVER_PRECEDENCE",
	       "tls.yml: default priorities (TLS 1.2 and 1.3)");
	ok(tls.cert_pem && strstr(tls.cert_pem, "BEGIN CERTIFICATE"), "tls.yml: certificate in memory");
	ok(tls.key_pem && strstr(tls.key_pem, "PRIVATE KEY"), "tls.yml: key in memory");
	ok(tls.ca_pem == NULL && tls.verify_client == 0, "tls.yml: no client CA, no client check");
	is_int(prom_web_authorize(w, NULL), 1, "tls.yml: no users, no authentication");
	is_int(prom_web_check_client(w, NULL), 1, "tls.yml: no client check");
	ok(prom_web_headers(w)[0] == NULL, "tls.yml: no extra headers");
	prom_web_free(w);

	w = NULL;
	free(load("mtls.yml",
		  TLS_OK "  min_version: TLS13\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
			 "  curve_preferences: [X25519, CurveP256]\n  prefer_server_cipher_suites: false\n",
		  &w));
	is_int(prom_web_tls(w, &tls), 1, "mtls.yml: TLS on");
	is_str(tls.priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.3:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1",
	       "mtls.yml: TLS 1.3 only, curves in order, client's preference");
	ok(tls.ca_pem && strstr(tls.ca_pem, "BEGIN CERTIFICATE") && tls.verify_client, "mtls.yml: client CA, checked");
	is_int(prom_web_check_client(w, NULL), 0, "mtls.yml: no session, refused");
	prom_web_free(w);

	w = NULL;
	free(load("users.yml", USERS, &w));
	is_int(prom_web_tls(w, &tls), 0, "users.yml: no TLS");
	ok(tls.cert_pem == NULL && tls.priorities == NULL, "users.yml: nothing filled");
	prom_web_free(w);

	w = NULL;
	free(load("headers.yml", cases[6].text, &w));
	{
		const char *const *h = prom_web_headers(w);

		ok(h[0] && !strcmp(h[0], "X-Frame-Options") && !strcmp(h[1], "DENY") &&
			   !strcmp(h[2], "Strict-Transport-Security") && !strcmp(h[3], "max-age=31536000") && !h[4],
		   "headers.yml: two headers, the blank one left out");
	}
	prom_web_free(w);
	prom_web_free(NULL);
}

/* ---- basic authentication ----------------------------------------------- */

static void b64(const char *in, size_t n, char *out)
{
	static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)in[i] << 16;

		if (i + 1 < n)
			v |= (unsigned char)in[i + 1] << 8;
		if (i + 2 < n)
			v |= (unsigned char)in[i + 2];
		out[o++] = a[v >> 18 & 63];
		out[o++] = a[v >> 12 & 63];
		out[o++] = i + 1 < n ? a[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? a[v & 63] : '=';
	}
	out[o] = '\0';
}

/* "Basic base64(user:pass)" into a static buffer; n: bytes of user:pass (may hold a NUL). */
static const char *basic_n(const char *userpass, size_t n)
{
	static char h[8192];

	strcpy(h, "Basic ");
	b64(userpass, n, h + 6);
	return h;
}

static const char *basic(const char *userpass)
{
	return basic_n(userpass, strlen(userpass));
}

/* Seconds one authorize call takes; *res its result. */
/*
 * The CPU time one authorization costs this thread (seconds): bcrypt runs in
 * the caller, so this compares the work done, whatever else the machine does.
 */
static double timed(struct prom_web *w, const char *h, int *res)
{
	struct timespec a, b;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
	*res = prom_web_authorize(w, h);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static void *hammer(void *arg)
{
	struct prom_web *w = arg;
	long bad = 0;

	for (int i = 0; i < 200; i++) {
		char h[128];

		strcpy(h, "Basic ");
		b64("alice:" ALICE_PASS, strlen("alice:" ALICE_PASS), h + 6);
		bad += prom_web_authorize(w, h) != 1;
	}
	return (void *)bad;
}

static void test_authorize(void)
{
	struct prom_web *w = NULL;
	double first, second, wrong = 1e9, unknown = 1e9, t;
	int r;
	char big[4096];
	char *err = load("auth.yml", USERS, &w);

	is_str(err, NULL, "auth.yml loads");
	free(err);
	if (!w)
		return;

	is_int(prom_web_authorize(w, NULL), 0, "no Authorization header: refused");
	first = timed(w, basic("alice:" ALICE_PASS), &r);
	is_int(r, 1, "alice with her password: accepted");
	second = timed(w, basic("alice:" ALICE_PASS), &r);
	is_int(r, 1, "alice again: accepted");
	ok(second < first / 10, "alice again is cached: %.6f s after %.6f s", second, first);
	is_int(prom_web_authorize(w, "basic   " "YWxpY2U6c2NyYXBlLW1lLTc=" "  "), 1,
	       "scheme in lower case, spaces around the credentials: accepted");

	is_int(prom_web_authorize(w, basic("alice:scrape-me-8")), 0, "alice, wrong password: refused");
	is_int(prom_web_authorize(w, basic("alice:" ALICE_PASS "x")), 0, "alice, password with a suffix: refused");
	is_int(prom_web_authorize(w, basic("alice:scrape-me-")), 0, "alice, password prefix: refused");
	is_int(prom_web_authorize(w, basic("alice:")), 0, "alice, empty password: refused");
	is_int(prom_web_authorize(w, basic("Alice:" ALICE_PASS)), 0, "user names are case-sensitive");
	is_int(prom_web_authorize(w, basic("mallory:" ALICE_PASS)), 0, "unknown user: refused");
	is_int(prom_web_authorize(w, basic("bob:" BOB_PASS)), 1, "bob, colons in the password: accepted");
	is_int(prom_web_authorize(w, basic("carol:" CAROL_PASS)), 1, "carol (cost 4): accepted");
	is_int(prom_web_authorize(w, basic("dave:" ALICE_PASS)), 1, "dave ($2b$ hash): accepted");
	is_int(prom_web_authorize(w, basic("carol:" ALICE_PASS)), 0, "carol with alice's password: refused");
	is_int(prom_web_authorize(w, basic_n("alice:" ALICE_PASS "\0x", strlen("alice:" ALICE_PASS) + 2)), 0,
	       "a NUL after the password: refused");
	memset(big, 'p', 100);
	memcpy(big, "alice:", 6);
	big[100] = '\0';
	is_int(prom_web_authorize(w, basic(big)), 0, "a password over 72 bytes: refused");

	/* Malformed headers. */
	static const char *const bad[] = {
		"",
		"Basic",
		"Basic ",
		"Basics YWxpY2U6c2NyYXBlLW1lLTc=",
		"Bearer YWxpY2U6c2NyYXBlLW1lLTc=",
		"Digest username=\"alice\"",
		"YWxpY2U6c2NyYXBlLW1lLTc=",
		"Basic YWxpY2U6c2NyYXBlLW1lLTc",       /* no padding */
		"Basic YWxpY2U6c2NyYXBlLW1lLTc==",     /* too much padding */
		"Basic YWxpY2U6c2NyYXBlLW1lLTd=",      /* non-canonical last character */
		"Basic YWxp Y2U6c2NyYXBlLW1lLTc=",     /* space inside */
		"Basic YWxpY2U6c2NyYXBlLW1lLTc= x",    /* trailing garbage */
		"Basic YWxpY2U6c2NyYXBlLW1lLTc=\r\n",  /* CR LF */
		"Basic YWxpY2U=c2NyYXBlLW1lLTc=",      /* padding inside */
		"Basic YWxpY2U-c2NyYXBlLW1lLTc=",      /* base64url */
		"Basic YWxpY2U",                       /* "alice", no colon, bad length */
		"Basic YWxpY2U=",                      /* "alice", no colon */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		is_int(prom_web_authorize(w, bad[i]), 0, bad[i][0] ? bad[i] : "(empty header)");
	memset(big, 'A', sizeof(big) - 1);
	memcpy(big, "Basic ", 6);
	big[sizeof(big) - 1] = '\0';
	is_int(prom_web_authorize(w, big), 0, "a 4 KiB header: refused");

	/* Timing: an unknown user pays bcrypt like a known one (CPU time, best of 3 each). */
	for (int i = 0; i < 3; i++) {
		t = timed(w, basic("alice:wrong-password"), &r);
		wrong = t < wrong ? t : wrong;
		t = timed(w, basic("nobody-here:wrong-password"), &r);
		unknown = t < unknown ? t : unknown;
	}
	ok(unknown > wrong / 2 && unknown < wrong * 2, "unknown user %.4f s, known user %.4f s", unknown, wrong);
	ok(wrong > second * 10, "a wrong password is never cached (%.6f s)", wrong);

	/* Threads share the cache. */
	{
		pthread_t th[4];
		long bad_total = 0;

		for (int i = 0; i < 4; i++)
			pthread_create(&th[i], NULL, hammer, w);
		for (int i = 0; i < 4; i++) {
			void *res;

			pthread_join(th[i], &res);
			bad_total += (long)res;
		}
		is_int(bad_total, 0, "4 threads x 200 cached checks: all accepted");
	}
	prom_web_free(w);
}

/* More users than cache slots: eviction keeps every answer right. */
static void test_cache_bound(void)
{
	char *text = malloc(100 * 128), setting[CRYPT_GENSALT_OUTPUT_SIZE], up[64];
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	struct prom_web *w = NULL;
	size_t n = 0;
	int bad = 0;
	char *err;

	n += (size_t)sprintf(text + n, "basic_auth_users:\n");
	for (int i = 0; i < 100; i++) {
		char pw[16];

		snprintf(pw, sizeof(pw), "pw%d", i);
		crypt_gensalt_rn("$2b$", 4, NULL, 0, setting, sizeof(setting));
		n += (size_t)sprintf(text + n, "  u%d: %s\n", i, crypt_r(pw, setting, cd));
	}
	err = load("many.yml", text, &w);
	is_str(err, NULL, "many.yml (100 users, cost 4) loads");
	free(err);
	for (int round = 0; round < 2 && w; round++) {
		for (int i = 0; i < 100; i++) {
			snprintf(up, sizeof(up), "u%d:pw%d", i, i);
			bad += prom_web_authorize(w, basic(up)) != 1;
			snprintf(up, sizeof(up), "u%d:pw%d", i, i + 1);
			bad += prom_web_authorize(w, basic(up)) != 0;
		}
	}
	is_int(bad, 0, "100 users twice through a 64-slot cache: every answer right");
	prom_web_free(w);
	free(cd);
	free(text);
}

/* ---- TLS end to end ----------------------------------------------------- */

static enum MHD_Result handler(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			       const char *version, const char *upload, size_t *upload_size, void **ptr)
{
	struct prom_web *w = cls;
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	struct MHD_Response *resp;
	unsigned status = MHD_HTTP_OK;
	enum MHD_Result ret;

	(void)url, (void)method, (void)version, (void)upload, (void)upload_size, (void)ptr;
	if (!prom_web_check_client(w, ci ? ci->tls_session : NULL))
		status = MHD_HTTP_FORBIDDEN;
	else if (!prom_web_authorize(w, MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization")))
		status = MHD_HTTP_UNAUTHORIZED;
	resp = MHD_create_response_from_buffer(3, (void *)"ok\n", MHD_RESPMEM_PERSISTENT);
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(resp, "WWW-Authenticate", "Basic realm=\"accel-prom\"");
	for (const char *const *h = prom_web_headers(w); h[0]; h += 2)
		MHD_add_response_header(resp, h[0], h[1]);
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* An HTTPS server the way accel-prom sets one up; its port in *port. */
static struct MHD_Daemon *serve(struct prom_web *w, unsigned *port)
{
	struct prom_web_tls tls;
	struct MHD_OptionItem opts[8];
	struct MHD_Daemon *d;
	int n = 0;

	if (!prom_web_tls(w, &tls))
		return NULL;
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, (void *)tls.cert_pem };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, (void *)tls.key_pem };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)tls.priorities };
	if (tls.ca_pem)
		opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0, (void *)tls.ca_pem };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_CONNECTION_TIMEOUT, 10, NULL };
	opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	d = MHD_start_daemon(MHD_USE_TLS | MHD_USE_INTERNAL_POLLING_THREAD, 0, NULL, NULL,
			     handler, w, MHD_OPTION_ARRAY, opts, MHD_OPTION_END);
	if (d)
		*port = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT)->port;
	return d;
}

static int dial(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { 5, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * GET / over TLS (priorities: the client's; cert/key: its certificate or
 * NULL; auth: an Authorization value or NULL). The HTTP status, or -1 when
 * the handshake fails or no response comes. The server is verified against
 * ca.pem as "localhost".
 */
static int https_get(unsigned port, const char *prio, const char *cert, const char *key, const char *auth)
{
	gnutls_certificate_credentials_t cred;
	gnutls_session_t s;
	char req[1024], resp[256];
	int fd, rc, status = -1;
	ssize_t n;

	gnutls_certificate_allocate_credentials(&cred);
	gnutls_certificate_set_x509_trust_file(cred, "ca.pem", GNUTLS_X509_FMT_PEM);
	if (cert && gnutls_certificate_set_x509_key_file(cred, cert, key, GNUTLS_X509_FMT_PEM) < 0)
		printf("# cannot load %s\n", cert);
	gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NO_SIGNAL);
	gnutls_priority_set_direct(s, prio, NULL);
	gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, cred);
	gnutls_server_name_set(s, GNUTLS_NAME_DNS, "localhost", 9);
	gnutls_session_set_verify_cert(s, "localhost", 0);
	gnutls_handshake_set_timeout(s, 5000);
	fd = dial(port);
	if (fd < 0)
		goto out;
	gnutls_transport_set_int(s, fd);
	do
		rc = gnutls_handshake(s);
	while (rc < 0 && !gnutls_error_is_fatal(rc));
	if (rc < 0)
		goto out;
	snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n%s%s%s\r\n",
		 auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "");
	if (gnutls_record_send(s, req, strlen(req)) < 0)
		goto out;
	do
		n = gnutls_record_recv(s, resp, sizeof(resp) - 1);
	while (n == GNUTLS_E_AGAIN || n == GNUTLS_E_INTERRUPTED);
	if (n > 0) {
		resp[n] = '\0';
		if (sscanf(resp, "HTTP/1.%*d %d", &status) != 1)
			status = -1;
	}
	gnutls_bye(s, GNUTLS_SHUT_WR);
out:
	if (fd >= 0)
		close(fd);
	gnutls_deinit(s);
	gnutls_certificate_free_credentials(cred);
	return status;
}

/* Plain HTTP to the TLS port: the bytes that come back (at most 255). */
static ssize_t plain_get(unsigned port, char *buf, size_t size)
{
	const char req[] = "GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
	int fd = dial(port);
	ssize_t n = -1;

	if (fd < 0)
		return -1;
	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) == (ssize_t)sizeof(req) - 1)
		n = recv(fd, buf, size - 1, 0);
	buf[n > 0 ? n : 0] = '\0';
	close(fd);
	return n;
}

#define TLS12 "NORMAL:-VERS-ALL:+VERS-TLS1.2"
#define TLS13 "NORMAL:-VERS-ALL:+VERS-TLS1.3"

static void test_tls(void)
{
	static const struct {
		const char *config;  /* appended to TLS_OK */
		const char *prio;    /* client's */
		const char *cert;    /* client certificate (key: same name, .key) */
		const char *auth;    /* Authorization */
		int status;          /* -1: no HTTP answer */
		const char *name;
	} tcases[] = {
		{ "", TLS12, NULL, NULL, 200, "TLS 1.2" },
		{ "", TLS13, NULL, NULL, 200, "TLS 1.3" },
		{ "  min_version: TLS13\n", TLS12, NULL, NULL, -1, "min_version TLS13: a TLS 1.2 client fails" },
		{ "  min_version: TLS13\n", TLS13, NULL, NULL, 200, "min_version TLS13: a TLS 1.3 client" },
		{ "  max_version: TLS12\n", TLS13, NULL, NULL, -1, "max_version TLS12: a TLS 1.3-only client fails" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS13, NULL,
		  "alice:" ALICE_PASS, 403, "mTLS: no client certificate: 403" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS13, "rogue",
		  "alice:" ALICE_PASS, 403, "mTLS: a certificate from an impostor CA of the same name: 403" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS13, "server",
		  "alice:" ALICE_PASS, 403, "mTLS: a certificate for servers only (extended key usage): 403" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS13, "client",
		  NULL, 401, "mTLS: the client certificate, no password: 401" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS13, "client",
		  "alice:nope", 401, "mTLS: the client certificate, wrong password: 401" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS13, "client",
		  "alice:" ALICE_PASS, 200, "mTLS: the client certificate and a password: 200" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n" USERS, TLS12, "client",
		  "alice:" ALICE_PASS, 200, "mTLS over TLS 1.2: 200" },
		{ "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n", TLS13, NULL, NULL, 200,
		  "VerifyClientCertIfGiven: none given: 200" },
		{ "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n", TLS13, "rogue", NULL, 403,
		  "VerifyClientCertIfGiven: a bad one: 403" },
		{ "  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.pem\n", TLS13, "client", NULL, 200,
		  "VerifyClientCertIfGiven: a good one: 200" },
		{ "  client_auth_type: RequireAnyClientCert\n  client_ca_file: ca.pem\n", TLS13, "rogue", NULL, 200,
		  "RequireAnyClientCert: any certificate: 200" },
		{ "  client_auth_type: RequireAnyClientCert\n  client_ca_file: ca.pem\n", TLS13, NULL, NULL, 403,
		  "RequireAnyClientCert: none: 403" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
		  "  client_allowed_sans: [other.example, prometheus.example]\n",
		  TLS13, "client", NULL, 200, "client_allowed_sans: DNS name listed: 200" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
		  "  client_allowed_sans: ['spiffe://example/prometheus']\n",
		  TLS13, "client", NULL, 200, "client_allowed_sans: URI listed: 200" },
		{ "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
		  "  client_allowed_sans: [other.example]\n",
		  TLS13, "client", NULL, 403, "client_allowed_sans: not listed: 403" },
	};

	for (size_t i = 0; i < sizeof(tcases) / sizeof(tcases[0]); i++) {
		char text[4096], cert[64], key[64];
		struct prom_web *w = NULL;
		struct MHD_Daemon *d;
		unsigned port = 0;
		char *err;

		snprintf(text, sizeof(text), "%s%s", TLS_OK, tcases[i].config);
		err = load("e2e.yml", text, &w);
		if (err) {
			ok(0, "%s: config: %s", tcases[i].name, err);
			free(err);
			continue;
		}
		d = serve(w, &port);
		if (!d) {
			ok(0, "%s: libmicrohttpd does not start", tcases[i].name);
			prom_web_free(w);
			continue;
		}
		snprintf(cert, sizeof(cert), "%s.pem", tcases[i].cert ? tcases[i].cert : "");
		snprintf(key, sizeof(key), "%s.key", tcases[i].cert ? tcases[i].cert : "");
		is_int(https_get(port, tcases[i].prio, tcases[i].cert ? cert : NULL, key,
				 tcases[i].auth ? basic(tcases[i].auth) : NULL),
		       tcases[i].status, tcases[i].name);
		if (i == 0) {
			char buf[256];

			plain_get(port, buf, sizeof(buf));
			ok(strncmp(buf, "HTTP/1.1 200", 12) != 0, "plain HTTP to the TLS port: no 200");
		}
		MHD_stop_daemon(d);
		prom_web_free(w);
	}
}

int main(void)
{
	static const char *const files[] = { "ca.pem", "server.pem", "server.key", "client.pem",
					     "client.key", "rogue.pem", "rogue.key", "encrypted.key" };
	char fix[PATH_MAX], dir[] = "/tmp/test_prom_web.XXXXXX", from[PATH_MAX + 32];

	signal(SIGPIPE, SIG_IGN);
	log_init("test_prom_web", 0);
	if (!realpath(FIXTURES, fix) || !mkdtemp(dir) || chdir(dir) || mkdir("sub", 0700)) {
		perror(FIXTURES);
		return 2;
	}
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(from, sizeof(from), "%s/%s", fix, files[i]);
		copy_file(from, files[i]);
	}

	if (mkfifo("fifo.pem", 0600)) {
		perror("mkfifo");
		return 2;
	}
	alarm(60); /* a FIFO read the old way would wait for a writer forever */
	test_configs();
	alarm(0);
	test_authorize();
	test_cache_bound();
	test_tls();

	snprintf(from, sizeof(from), "rm -rf -- '%s'", dir);
	if (chdir("/") || system(from) != 0)
		printf("# could not remove %s\n", dir);
	return done_testing();
}
