/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's configuration (sinks/otlp/otlp_conf.c): the OpenTelemetry
 * exporter variables and the flags over them. The endpoint's path rules
 * (a base URL gets /v1/metrics after its path, a signal URL is used as is,
 * "/" when it has none), the precedence (flag, METRICS_ variable, general
 * variable, default; each variable as a whole), the key=value lists
 * (trimmed, percent-decoded, later keys winning, --header replacing by name),
 * and every bad value refused with a message naming its variable or flag.
 * The variables come from a table here (otlp_conf_load's env hook), and once
 * from the real environment, which tap.h cleared of OTEL_* before main.
 */
#include "../../sinks/otlp/otlp_conf.h"
#include "tap.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The variables of the case being run: NAME=VALUE strings, NULL-terminated. */
static const char *const *cur_env;

static const char *table_env(const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; cur_env && cur_env[i]; i++)
		if (!strncmp(cur_env[i], name, n) && cur_env[i][n] == '=')
			return cur_env[i] + n + 1;
	return NULL;
}

static struct otlp_conf_flags no_flags(void)
{
	return (struct otlp_conf_flags){ .timeout_ms = -1 };
}

/* Load with the variables env and the flags f: rc; the configuration in c (freed by the caller). */
static int load(struct otlp_conf *c, const char *const *env, const struct otlp_conf_flags *f, char *err, size_t errsz)
{
	struct otlp_conf_flags none = no_flags();

	cur_env = env;
	err[0] = 0;
	return otlp_conf_load(c, f ? f : &none, table_env, err, errsz);
}

static const char *header(const struct otlp_conf *c, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; i < c->nheaders; i++)
		if (!strncasecmp(c->headers[i], name, n) && c->headers[i][n] == ':')
			return c->headers[i] + n + 2;
	return NULL;
}

static const char *resource(const struct otlp_conf *c, const char *key)
{
	for (size_t i = 0; i < c->nresource; i++)
		if (!strcmp(c->resource[i].key, key))
			return c->resource[i].value;
	return NULL;
}

static void endpoints(void)
{
	static const struct {
		const char *env[3];
		const char *flag_base, *flag_full;
		const char *want, *from;
	} cases[] = {
		{ { NULL }, NULL, NULL, "http://localhost:4318/v1/metrics", "the default endpoint" },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318" }, NULL, NULL, "http://c:4318/v1/metrics",
		  "OTEL_EXPORTER_OTLP_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318/" }, NULL, NULL, "http://c:4318/v1/metrics",
		  "OTEL_EXPORTER_OTLP_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=https://c/otlp" }, NULL, NULL, "https://c/otlp/v1/metrics",
		  "OTEL_EXPORTER_OTLP_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=https://c/otlp/" }, NULL, NULL, "https://c/otlp/v1/metrics",
		  "OTEL_EXPORTER_OTLP_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://c:4318/custom" }, NULL, NULL, "http://c:4318/custom",
		  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://c:4318" }, NULL, NULL, "http://c:4318/",
		  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://c:4318?x=1" }, NULL, NULL, "http://c:4318/?x=1",
		  "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://general:1", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://m:2/x" },
		  NULL, NULL, "http://m:2/x", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://general:1", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=" }, NULL, NULL,
		  "http://general:1/v1/metrics", "OTEL_EXPORTER_OTLP_ENDPOINT" },
		{ { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://m:2/x" }, "http://flag:3", NULL,
		  "http://flag:3/v1/metrics", "--endpoint" },
		{ { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=http://m:2/x" }, "http://flag:3", "http://full:4/p",
		  "http://full:4/p", "--metrics-endpoint" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct otlp_conf_flags f = no_flags();
		struct otlp_conf c;
		char err[512];

		f.endpoint = cases[i].flag_base;
		f.metrics_endpoint = cases[i].flag_full;
		is_int(load(&c, cases[i].env, &f, err, sizeof(err)), 0, "endpoint case loads");
		is_str(c.url ? c.url : "(null)", cases[i].want, "endpoint: the URL");
		is_str(c.url_from ? c.url_from : "(null)", cases[i].from, "endpoint: where it came from");
		otlp_conf_free(&c);
	}
}

static void defaults_and_precedence(void)
{
	struct otlp_conf c;
	char err[512];

	is_int(load(&c, NULL, NULL, err, sizeof(err)), 0, "nothing set loads");
	is_int(c.timeout_ms, 10000, "default timeout 10 s");
	is_int(c.gzip, 1, "default compression gzip");
	is_int(c.encoding, OTLP_PROTOBUF, "default protocol http/protobuf");
	ok(!c.ca_file && !c.cert_file && !c.key_file && !c.service_name, "no files, no service name");
	is_int(c.nheaders, 0, "no headers");
	otlp_conf_free(&c);

	{
		const char *env[] = { "OTEL_EXPORTER_OTLP_TIMEOUT=500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT=700",
				      "OTEL_EXPORTER_OTLP_COMPRESSION=none", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
				      "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/json", "OTEL_SERVICE_NAME=svc", NULL };
		struct otlp_conf_flags f = no_flags();

		is_int(load(&c, env, NULL, err, sizeof(err)), 0, "variables load");
		is_int(c.timeout_ms, 700, "METRICS_TIMEOUT wins over TIMEOUT");
		is_int(c.gzip, 0, "COMPRESSION=none");
		is_int(c.encoding, OTLP_JSON, "METRICS_PROTOCOL wins over PROTOCOL");
		is_str(c.service_name, "svc", "OTEL_SERVICE_NAME");
		otlp_conf_free(&c);

		f.timeout_ms = 2500;
		f.compression = "gzip";
		f.protocol = "http/protobuf";
		f.service_name = "flag-svc";
		is_int(load(&c, env, &f, err, sizeof(err)), 0, "variables and flags load");
		is_int(c.timeout_ms, 2500, "--timeout wins");
		is_int(c.gzip, 1, "--compression wins");
		is_int(c.encoding, OTLP_PROTOBUF, "--protocol wins");
		is_str(c.service_name, "flag-svc", "--service-name wins");
		otlp_conf_free(&c);
	}
}

static void lists(void)
{
	struct otlp_conf c;
	char err[512];

	{
		const char *env[] = { "OTEL_EXPORTER_OTLP_HEADERS= api-key = s%20e%2Ccret ,x-tenant=a%3Db,,",
				      "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=prod,k8s.node.name=n%C3%A9,"
				      "service.name=from-attrs,deployment.environment=staging",
				      NULL };
		const char *hflags[] = { "X-Tenant: flag", "Authorization: Bearer t" };
		const char *rflags[] = { "team=ml", "deployment.environment=dev" };
		struct otlp_conf_flags f = no_flags();

		is_int(load(&c, env, NULL, err, sizeof(err)), 0, "lists load");
		is_str(header(&c, "api-key"), "s e,cret", "a header trimmed and percent-decoded");
		is_str(header(&c, "x-tenant"), "a=b", "an encoded '=' in a value");
		is_int(c.nheaders, 2, "empty items skipped");
		is_str(resource(&c, "k8s.node.name"), "n\xc3\xa9", "a resource value percent-decoded (UTF-8)");
		is_str(resource(&c, "deployment.environment"), "staging", "a later key wins in the variable");
		is_str(resource(&c, "service.name"), "from-attrs", "service.name stays an attribute");
		is_int(c.nresource, 3, "three distinct keys");
		otlp_conf_free(&c);

		f.headers = hflags;
		f.nheaders = 2;
		f.resource = rflags;
		f.nresource = 2;
		is_int(load(&c, env, &f, err, sizeof(err)), 0, "lists with flags load");
		is_str(header(&c, "x-tenant"), "flag", "--header replaces a header of the same name (any case)");
		is_str(header(&c, "authorization"), "Bearer t", "--header adds one");
		is_int(c.nheaders, 3, "three headers");
		is_str(resource(&c, "deployment.environment"), "dev", "--resource-attribute wins over the variable");
		is_str(resource(&c, "team"), "ml", "--resource-attribute adds one");
		otlp_conf_free(&c);
	}
	{
		const char *env[] = { "OTEL_EXPORTER_OTLP_HEADERS=a=1,b=2", "OTEL_EXPORTER_OTLP_METRICS_HEADERS=c=3",
				      NULL };

		is_int(load(&c, env, NULL, err, sizeof(err)), 0, "both header variables load");
		ok(!header(&c, "a") && !header(&c, "b") && header(&c, "c"),
		   "METRICS_HEADERS replaces HEADERS as a whole (a: %s, c: %s)", header(&c, "a") ? "set" : "unset",
		   header(&c, "c") ? "set" : "unset");
		otlp_conf_free(&c);
	}
}

static const char *const no_colon[] = { "NoColon" };
static const char *const no_key[] = { "=v" };

static void bad_values(void)
{
	static const struct {
		const char *env[2];
		struct otlp_conf_flags f;
		const char *says[2]; /* in the message */
	} cases[] = {
		{ { "OTEL_EXPORTER_OTLP_PROTOCOL=grpc" }, { .timeout_ms = -1 }, { "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc is not supported" } },
		{ { NULL }, { .timeout_ms = -1, .protocol = "grpc" }, { "--protocol", "grpc is not supported" } },
		{ { "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL=http/xml" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "expected http/protobuf or http/json" } },
		{ { "OTEL_EXPORTER_OTLP_COMPRESSION=zstd" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_COMPRESSION", "expected gzip or none" } },
		{ { NULL }, { .timeout_ms = -1, .compression = "GZIP" }, { "--compression", "expected gzip or none" } },
		{ { "OTEL_EXPORTER_OTLP_TIMEOUT=10s" }, { .timeout_ms = -1 }, { "OTEL_EXPORTER_OTLP_TIMEOUT", "milliseconds" } },
		{ { "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT=0" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT", "from 1 to" } },
		{ { "OTEL_EXPORTER_OTLP_TIMEOUT=-5" }, { .timeout_ms = -1 }, { "OTEL_EXPORTER_OTLP_TIMEOUT", "milliseconds" } },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_ENDPOINT", "expected an http:// or https:// URL (with its scheme)" } },
		{ { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT=grpc://c:4317" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "expected an http:// or https:// URL" } },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://" }, { .timeout_ms = -1 }, { "OTEL_EXPORTER_OTLP_ENDPOINT", "no host" } },
		{ { "OTEL_EXPORTER_OTLP_ENDPOINT=http://c/x?q=1" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_ENDPOINT", "a base URL with a query" } },
		{ { NULL }, { .timeout_ms = -1, .endpoint = "http://c 1:4318" }, { "--endpoint", "a space or control" } },
		{ { NULL }, { .timeout_ms = -1, .metrics_endpoint = "http://c/x#frag" }, { "--metrics-endpoint", "fragment" } },
		{ { "OTEL_EXPORTER_OTLP_HEADERS=a=1,novalue" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_HEADERS", "\"novalue\" at byte 4: expected key=value" } },
		{ { "OTEL_EXPORTER_OTLP_METRICS_HEADERS=k=50%" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_METRICS_HEADERS", "the value of \"k\" at byte 4: a '%' not followed" } },
		{ { "OTEL_EXPORTER_OTLP_HEADERS=k=a%0D%0AX-Evil: 1" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_HEADERS", "header \"k\"" } },
		{ { "OTEL_EXPORTER_OTLP_HEADERS=bad name=1" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_HEADERS", "header \"bad name\"" } },
		{ { "OTEL_EXPORTER_OTLP_HEADERS==1" }, { .timeout_ms = -1 }, { "OTEL_EXPORTER_OTLP_HEADERS", "an empty key" } },
		{ { "OTEL_RESOURCE_ATTRIBUTES=a=%zz" }, { .timeout_ms = -1 },
		  { "OTEL_RESOURCE_ATTRIBUTES", "the value of \"a\" at byte 2" } },
		{ { "OTEL_RESOURCE_ATTRIBUTES=a=x%00y" }, { .timeout_ms = -1 }, { "OTEL_RESOURCE_ATTRIBUTES", "%00" } },
		{ { NULL }, { .timeout_ms = -1, .headers = no_colon, .nheaders = 1 },
		  { "--header \"NoColon\"", "expected \"Name: value\"" } },
		{ { NULL }, { .timeout_ms = -1, .resource = no_key, .nresource = 1 },
		  { "--resource-attribute \"=v\"", "expected KEY=VALUE" } },
		{ { "OTEL_EXPORTER_OTLP_CERTIFICATE=/nonexistent/ca.pem" }, { .timeout_ms = -1 },
		  { "OTEL_EXPORTER_OTLP_CERTIFICATE: /nonexistent/ca.pem", "No such file" } },
		{ { NULL }, { .timeout_ms = -1, .key_file = "/nonexistent/k.pem" }, { "--key-file: /nonexistent/k.pem", "No such file" } },
		{ { "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE=/dev/null" }, { .timeout_ms = -1 },
		  { "go together", "the key (--key-file, OTEL_EXPORTER_OTLP_CLIENT_KEY) is missing" } },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct otlp_conf c;
		char err[512];
		int rc = load(&c, cases[i].env, &cases[i].f, err, sizeof(err));

		is_int(rc, -EINVAL, "a bad value is refused");
		ok(strstr(err, cases[i].says[0]) && strstr(err, cases[i].says[1]),
		   "... and the message names it and says what is wrong: \"%s\"", err);
		ok(!c.url && !c.nheaders && !c.nresource, "... and nothing is left allocated");
	}
}

static void percent(void)
{
	char out[16];
	size_t bad = 99;

	is_int(otlp_percent_decode("a%41%2c%2C", 10, out, sizeof(out), &bad), 0, "percent-decode");
	is_str(out, "aA,,", "hex digits in either case");
	is_int(otlp_percent_decode("ab%4", 4, out, sizeof(out), &bad), -EINVAL, "a '%' cut short");
	is_int(bad, 2, "... at its offset");
	is_int(otlp_percent_decode("%", 1, out, sizeof(out), &bad), -EINVAL, "a lone '%'");
	is_int(otlp_percent_decode("0123456789abcdefXYZ", 19, out, sizeof(out), &bad), -E2BIG, "too long for dst");
}

static void real_environment(void)
{
	struct otlp_conf_flags f = no_flags();
	struct otlp_conf c;
	char err[512];

	setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://from-env:4318", 1);
	setenv("OTEL_RESOURCE_ATTRIBUTES", "host.name=h1", 1);
	is_int(otlp_conf_load(&c, &f, NULL, err, sizeof(err)), 0, "the real environment (env NULL: getenv)");
	is_str(c.url, "http://from-env:4318/v1/metrics", "OTEL_EXPORTER_OTLP_ENDPOINT from the environment");
	is_str(resource(&c, "host.name"), "h1", "OTEL_RESOURCE_ATTRIBUTES from the environment");
	otlp_conf_free(&c);
	unsetenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	unsetenv("OTEL_RESOURCE_ATTRIBUTES");
}

int main(void)
{
	endpoints();
	defaults_and_precedence();
	lists();
	bad_values();
	percent();
	real_environment();
	return done_testing();
}
