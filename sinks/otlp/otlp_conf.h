/* SPDX-License-Identifier: MIT */
/*
 * accel-otlp's configuration: the standard OpenTelemetry exporter variables,
 * read as the OpenTelemetry specification says (protocol/exporter.md,
 * sdk-environment-variables.md), then the command line's flags over them.
 *
 *   what            flag                  variables (METRICS_ first)                      default
 *   URL             --metrics-endpoint    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, as is      -
 *                   --endpoint            OTEL_EXPORTER_OTLP_ENDPOINT + "/v1/metrics"     http://localhost:4318
 *   headers         --header "N: v"       OTEL_EXPORTER_OTLP[_METRICS]_HEADERS            none
 *   timeout         --timeout DUR         OTEL_EXPORTER_OTLP[_METRICS]_TIMEOUT (ms)       10000 ms
 *   compression     --compression         OTEL_EXPORTER_OTLP[_METRICS]_COMPRESSION        gzip
 *   protocol        --protocol            OTEL_EXPORTER_OTLP[_METRICS]_PROTOCOL           http/protobuf
 *   CA              --ca-file             OTEL_EXPORTER_OTLP[_METRICS]_CERTIFICATE        the system's
 *   client cert     --cert-file           OTEL_EXPORTER_OTLP[_METRICS]_CLIENT_CERTIFICATE none
 *   client key      --key-file            OTEL_EXPORTER_OTLP[_METRICS]_CLIENT_KEY         none
 *   resource        --resource-attribute  OTEL_RESOURCE_ATTRIBUTES                        none
 *   service.name    --service-name        OTEL_SERVICE_NAME                               the encoder's
 *
 * A flag wins over every variable; a METRICS_ variable over the general one
 * (each variable as a whole: OTEL_EXPORTER_OTLP_METRICS_HEADERS replaces
 * OTEL_EXPORTER_OTLP_HEADERS, it does not add to it); a variable set to the
 * empty string is unset. Among the URLs: --metrics-endpoint, then
 * --endpoint, then the METRICS_ variable, then the general one. A URL used
 * as is gets the path "/" when it has none; a base URL gets "/v1/metrics"
 * after its path (one slash between). Header and resource lists are
 * comma-separated key=value pairs (W3C Baggage without properties), keys and
 * values trimmed, values percent-decoded; --header adds to them and replaces
 * a header of the same name (case-insensitive), --resource-attribute adds to
 * OTEL_RESOURCE_ATTRIBUTES and a later key replaces an earlier one. The
 * compression is gzip unless "none" (the collector's default; the
 * specification's default would be none, which costs several times the
 * bytes on the wire). "grpc" is refused with a message: accel-otlp speaks
 * OTLP/HTTP only.
 *
 * A bad value is a configuration error whose message names the variable or
 * flag and says what is wrong with it.
 */
#ifndef ACCEL_OTLP_CONF_H
#define ACCEL_OTLP_CONF_H

#include "otlp_enc.h"

#include <stddef.h>
#include <stdint.h>

#define OTLP_DEFAULT_ENDPOINT "http://localhost:4318"
#define OTLP_DEFAULT_TIMEOUT_MS 10000
#define OTLP_HEADERS_MAX 64   /* headers, from all sources together */
#define OTLP_RESOURCE_MAX 128 /* resource attributes, from all sources together */

/* What the command line gave (all borrowed; NULL or -1: not given). */
struct otlp_conf_flags {
	const char *endpoint;         /* --endpoint: a base URL */
	const char *metrics_endpoint; /* --metrics-endpoint: used as is */
	const char *const *headers;   /* --header "Name: value", each */
	size_t nheaders;
	int64_t timeout_ms;           /* --timeout; -1: not given */
	const char *compression;      /* --compression gzip|none */
	const char *protocol;         /* --protocol http/protobuf|http/json|grpc */
	const char *ca_file, *cert_file, *key_file;
	const char *const *resource;  /* --resource-attribute KEY=VALUE, each */
	size_t nresource;
	const char *service_name;
};

/* The configuration in effect (every string owned: otlp_conf_free). */
struct otlp_conf {
	char *url;               /* where the requests go */
	const char *url_from;    /* which flag or variable (or "the default") set it, for messages; static */
	char *headers[OTLP_HEADERS_MAX]; /* "Name: value" */
	size_t nheaders;
	int64_t timeout_ms;
	int gzip;
	enum otlp_encoding encoding;
	char *ca_file, *cert_file, *key_file; /* NULL: none */
	struct otlp_kv resource[OTLP_RESOURCE_MAX]; /* keys and values owned */
	size_t nresource;
	char *service_name;      /* NULL: none given */
};

/*
 * Fill c from the variables (read through env: getenv when NULL) and the
 * flags. 0, or -EINVAL with err naming the flag or variable and what is wrong
 * (c is then freed and zeroed).
 */
int otlp_conf_load(struct otlp_conf *c, const struct otlp_conf_flags *f, const char *(*env)(const char *name),
		   char *err, size_t errsz);
void otlp_conf_free(struct otlp_conf *c); /* safe on a zeroed or freed one */

/*
 * Percent-decode src (len bytes) into dst (size bytes, NUL-terminated): "%XX"
 * is the byte 0xXX. 0, or -EINVAL with *bad at the offending offset (a '%'
 * not followed by two hex digits, or %00, which a C string cannot hold),
 * -E2BIG when it does not fit.
 */
int otlp_percent_decode(const char *src, size_t len, char *dst, size_t size, size_t *bad);

#endif
