/* SPDX-License-Identifier: MIT */
/*
 * Endpoint runtimes: an inference server's (or any exporter's) Prometheus
 * text or OpenMetrics endpoint, "http://..." or "https://...", scraped on
 * the producer's event loop (scrape.h) and read by infer.h into
 * execution_stats. When the URL's host is this machine, the process
 * listening on its port (the host layer's sockets, host.h) is the runtime's
 * pid, and runtime_vcpu_usage and memory_used are measured by the host
 * layer's process meter (host_process_sample), as a pid: runtime's are, so
 * they are the same numbers a pid: runtime reports.
 *
 * One scrape per endpoint at a time: every due group's fetch joins the
 * transfer in flight or starts one, and all of them are answered when it
 * ends. A failed scrape (refused, timeout, HTTP error, body over the cap,
 * TLS, an exposition that does not parse) is the entry's "error",
 * "<URL>: what happened", and every due group's. The scrape for a report
 * starts the timeout ahead of it (default: the group's period, at most
 * 10 s; never earlier than the previous report) and ends by the time the
 * report is written: one still running then is overdue and reports
 * "<URL>: timeout after X s" (never the monitor's bare "no answer"), and
 * every other group stays on time.
 *
 * Device facts: an application that serves prometheus_ncs2_exporter's
 * ncs2_temperature_celsius{name} (the stick's temperature is readable only
 * in the process holding it) has each reading published, with the
 * listening pid, in the host layer's device facts (host_facts_publish) as
 * soon as the scrape is in, so the ncs2 device collector puts it on the
 * stick that process holds, in the same cycle.
 *
 * The block's own keys (server, timeout, max_body_bytes, tls,
 * bearer_token_file, basic_auth, passthrough, latency_histograms) are
 * parsed here; see
 * docs/report-format.md and README's configuration section.
 */
#include "../../common/doc.h"
#include "../../common/http.h"
#include "../../common/log.h"
#include "../../common/timeutil.h"
#include "../../common/expo_parse.h"
#include "../core/collector.h"
#include "../config/config.h"
#include "../host/host.h"
#include "bounds.h"
#include "infer.h"
#include "model_energy.h"
#include "scrape.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EP_DEFAULT_MAX_BODY (4u << 20)   /* bytes */
#define EP_MAX_MAX_BODY (1u << 30)       /* bytes */
#define EP_MAX_DEFAULT_TIMEOUT_MS 10000  /* the default timeout: the smallest period, at most this */
#define EP_MAX_TIMEOUT_MS (3600 * 1000)
#define EP_MAX_FACTS 16                  /* device facts published per scrape */
/*
 * libcurl's own timeout falls this long after the report a transfer is for:
 * a backstop only, the report's overdue() ends the transfer first.
 */
#define EP_GRACE_NS (250 * NS_PER_MS)
/*
 * The listener's container object is read again after this (its names may
 * appear later: container.c looks for them every 10 s), or at once when
 * another process listens.
 */
#define EP_CTR_TTL_NS (10 * NS_PER_S)

/* What the block's own keys say (cfg_runtime.own). */
struct ep_cfg {
	char *server;            /* NULL: recognised from the families served */
	int server_id;           /* enum infer_server */
	int64_t timeout_ms;      /* 0: the default */
	int64_t max_body;        /* bytes */
	int tls;                 /* a "tls" object was given */
	char *ca_file, *cert_file, *key_file, *server_name;
	int insecure;
	char *bearer_token_file;
	char *username, *password_file; /* basic_auth (username NULL: none) */
	int passthrough;
	int histograms;          /* "latency_histograms": execution_stats also carries the period's buckets */
};

static const char *const ep_keys[] = { "server", "timeout", "max_body_bytes", "tls", "bearer_token_file",
				       "basic_auth", "passthrough", "latency_histograms", NULL };

/* ---- configuration --------------------------------------------------------------------------- */

static void ep_config_free(void *own)
{
	struct ep_cfg *c = own;

	if (!c)
		return;
	free(c->server);
	free(c->ca_file);
	free(c->cert_file);
	free(c->key_file);
	free(c->server_name);
	free(c->bearer_token_file);
	free(c->username);
	free(c->password_file);
	free(c);
}

/* A string member of a sub-object: a new copy in *out (left alone when absent). */
static int sub_string(const struct cfg_block *b, const char *key, const char *what, char **out)
{
	const char *s = NULL;

	if (cfg_block_string(b, key, what, &s))
		return -EINVAL;
	if (s)
		*out = xstrdup(s);
	return 0;
}

static int sub_bool(const struct cfg_block *b, const char *key, int *out)
{
	json_t *v = json_object_get(b->obj, key);

	if (!v)
		return 0;
	if (!json_is_boolean(v))
		return cfg_block_error(b, key, 0, "expected true or false, got %s", doc_kind(v));
	*out = json_is_true(v);
	return 0;
}

/* A nested object of the block (tls, basic_auth) as a block of its own; 0 when absent. */
static int sub_block(const struct cfg_block *b, const char *key, const char *const *keys, char *path, size_t size,
		     struct cfg_block *out)
{
	json_t *o = json_object_get(b->obj, key);

	if (!o)
		return 0;
	if (!json_is_object(o)) {
		cfg_block_error(b, key, 0, "expected an object, got %s", doc_kind(o));
		return -1;
	}
	doc_path_key(path, size, b->path, key);
	*out = (struct cfg_block){ .doc = b->doc, .path = path, .obj = o, .err = b->err };
	*b->err = doc_check_keys(b->doc, path, o, keys);
	return *b->err ? -1 : 1;
}

static int ep_config_keys(const struct cfg_block *b, const struct scrape_url *u, struct ep_cfg *c)
{
	static const char *const tls_keys[] = { "ca_file", "cert_file", "key_file", "server_name",
						"insecure_skip_verify", NULL };
	static const char *const basic_keys[] = { "username", "password_file", NULL };
	char path[256], q[LOG_QUOTE_BUF];
	struct cfg_block sb;
	const char *server = NULL, *bad;
	json_t *v;
	int r;

	if (cfg_block_string(b, "server", "a server name", &server))
		return -EINVAL;
	if (server) {
		c->server_id = infer_server_parse(server);
		if (c->server_id < 0 || c->server_id == INFER_AUTO)
			return cfg_block_error(b, "server", 0,
					       "unknown server \"%s\"; known: triton, vllm, tgi, torchserve, ovms, "
					       "prometheus (or no \"server\": recognised from the families served)",
					       log_quote(q, sizeof(q), server, (size_t)-1));
		c->server = xstrdup(server);
	}
	if ((v = json_object_get(b->obj, "timeout"))) {
		const char *why = NULL;
		int64_t ms = 0;

		if (json_is_string(v)) {
			if (duration_parse(json_string_value(v), &ms, &why))
				return cfg_block_error(b, "timeout", 0, "invalid duration \"%s\": %s",
						       log_quote(q, sizeof(q), json_string_value(v), (size_t)-1), why);
		} else if (json_is_number(v) && json_number_value(v) >= 0 && json_number_value(v) <= 1e7) {
			ms = (int64_t)(json_number_value(v) * 1000.0 + 0.5);
		} else {
			return cfg_block_error(b, "timeout", 0,
					       "expected a duration such as \"2s\" or a number of seconds, got %s",
					       json_is_number(v) ? "a number out of range" : doc_kind(v));
		}
		if (ms < 1 || ms > EP_MAX_TIMEOUT_MS)
			return cfg_block_error(b, "timeout", 0, "timeout out of range: %lld ms; 1ms to 1h",
					       (long long)ms);
		c->timeout_ms = ms;
	}
	c->max_body = EP_DEFAULT_MAX_BODY;
	if ((v = json_object_get(b->obj, "max_body_bytes"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > EP_MAX_MAX_BODY)
			return cfg_block_error(b, "max_body_bytes", 0, "expected a number of bytes from 1 to %u, got %s",
					       EP_MAX_MAX_BODY, json_is_integer(v) ? "one out of range" : doc_kind(v));
		c->max_body = json_integer_value(v);
	}
	if ((r = sub_block(b, "tls", tls_keys, path, sizeof(path), &sb)) < 0)
		return -EINVAL;
	if (r) {
		if (!u->https)
			return cfg_block_error(b, "tls", 1, "\"tls\" is for https:// addresses");
		c->tls = 1;
		if (sub_string(&sb, "ca_file", "a file name", &c->ca_file) ||
		    sub_string(&sb, "cert_file", "a file name", &c->cert_file) ||
		    sub_string(&sb, "key_file", "a file name", &c->key_file) ||
		    sub_string(&sb, "server_name", "a host name", &c->server_name) ||
		    sub_bool(&sb, "insecure_skip_verify", &c->insecure))
			return -EINVAL;
		if (c->server_name && http_host_name_check(c->server_name, &bad))
			return cfg_block_error(&sb, "server_name", 0, "invalid host name \"%s\": %s",
					       log_quote(q, sizeof(q), c->server_name, (size_t)-1), bad);
		if (!c->cert_file != !c->key_file)
			return cfg_block_error(&sb, c->cert_file ? "cert_file" : "key_file", 1,
					       "a client certificate needs both \"cert_file\" and \"key_file\"");
	}
	if (sub_string(b, "bearer_token_file", "a file name", &c->bearer_token_file))
		return -EINVAL;
	if ((r = sub_block(b, "basic_auth", basic_keys, path, sizeof(path), &sb)) < 0)
		return -EINVAL;
	if (r) {
		if (c->bearer_token_file)
			return cfg_block_error(b, "basic_auth", 1, "use either \"bearer_token_file\" or \"basic_auth\"");
		if (sub_string(&sb, "username", "a user name", &c->username) ||
		    sub_string(&sb, "password_file", "a file name", &c->password_file))
			return -EINVAL;
		if (!c->username)
			return cfg_block_error(&sb, NULL, 0, "missing \"username\"");
	}
	if (sub_bool(b, "latency_histograms", &c->histograms))
		return -EINVAL;
	return sub_bool(b, "passthrough", &c->passthrough);
}

/* Config: "http://HOST[:PORT]/PATH" or "https://...", and the block's own keys. */
static int ep_config(const struct cfg_block *b)
{
	struct ep_cfg *c = xcalloc(1, sizeof(*c));
	struct scrape_url u;
	const char *why;
	char q[LOG_QUOTE_BUF];

	*b->own = c; /* cfg_free releases it whatever happens below */
	if (scrape_url_parse(b->rt->address, &u, &why))
		return cfg_block_error(b, "address", 0, "invalid address \"%s\": %s",
				       log_quote(q, sizeof(q), b->rt->address, (size_t)-1), why);
	return ep_config_keys(b, &u, c);
}

static void put_str(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

static void ep_config_print(const void *own, json_t *block)
{
	const struct ep_cfg *c = own;

	put_str(block, "server", c->server);
	if (c->timeout_ms)
		json_object_set_new(block, "timeout", json_real((double)c->timeout_ms / 1e3));
	json_object_set_new(block, "max_body_bytes", json_integer(c->max_body));
	if (c->tls) {
		json_t *t = json_object();

		put_str(t, "ca_file", c->ca_file);
		put_str(t, "cert_file", c->cert_file);
		put_str(t, "key_file", c->key_file);
		put_str(t, "server_name", c->server_name);
		json_object_set_new(t, "insecure_skip_verify", json_boolean(c->insecure));
		json_object_set_new(block, "tls", t);
	}
	put_str(block, "bearer_token_file", c->bearer_token_file);
	if (c->username) {
		json_t *a = json_pack("{s:s}", "username", c->username);

		put_str(a, "password_file", c->password_file);
		json_object_set_new(block, "basic_auth", a);
	}
	json_object_set_new(block, "passthrough", json_boolean(c->passthrough));
	if (c->histograms) /* shown when on: the effective configuration of existing setups is unchanged */
		json_object_set_new(block, "latency_histograms", json_true());
}

/* ---- the collector --------------------------------------------------------------------------- */

#define EP_MAX_WAITING (2 * GROUP_COUNT)

struct ep_state {
	struct host *host;             /* borrowed */
	const struct cfg_runtime *rt;  /* borrowed */
	const struct ep_cfg *c;        /* borrowed: rt->own */
	size_t index;
	struct scrape_url url;
	int64_t timeout_ns;            /* configured, or the default */
	int64_t min_period_ns;         /* the smallest of the runtime's group periods */
	int64_t xfer_timeout_ns;       /* the transfer in flight: the timeout in force (at most its group's period) */
	int64_t xfer_started_ns;       /* CLOCK_MONOTONIC: when it went out */
	struct scrape *sc;             /* NULL when libcurl could not be loaded */
	char load_err[256];
	struct infer *in;
	struct expo_parser *facts_parser; /* owned: publish_facts()'s, made on first use */
	struct mon_fetch *waiting[EP_MAX_WAITING]; /* the fetches the transfer in flight answers */
	size_t nwaiting;
	char err[768];                 /* the last scrape: "" when good, else "<URL>: what happened" */
	struct buf expo;               /* passthrough: the last good body */
	int have_expo;
	int64_t last_ns[GROUP_COUNT];  /* CLOCK_MONOTONIC: each group's previous collection */
	int first[GROUP_COUNT];        /* not fetched yet: its baseline is still the open's */
	/*
	 * CLOCK_MONOTONIC: the collection whose execution_stats last took infer's
	 * counts (0: none yet, last_ns says). A failed scrape leaves infer's
	 * baseline where it was, so the next group's counts and period both
	 * start here, not at the failed collection.
	 */
	int64_t stats_ns;
	/* The process listening on the port, and its measurements (host.h). */
	struct sock_owner so;
	struct proc_meter meter;
	pid_t tag_pid;                 /* the process whose comm is in tag */
	char tag[64];
	json_t *ctr;                   /* owned: the listener's "container" (NULL: on the host, or unknown) */
	pid_t ctr_pid;                 /* the listener it is of (0: none yet) */
	int64_t ctr_ns;                /* CLOCK_MONOTONIC: when it was read */
	struct server_energy energy;   /* the server's energy between two execution_stats (model_energy.h) */
};

static void set_err(struct ep_state *ep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ep->err = "<URL>: " + the message. */
static void set_err(struct ep_state *ep, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(ep->err, sizeof(ep->err), "%s: ", ep->rt->address);

	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(ep->err))
		vsnprintf(ep->err + n, sizeof(ep->err) - (size_t)n, fmt, ap);
	va_end(ap);
	utf8_sanitize(ep->err);
}

/* Start measuring the process listening at open (pid; 0: none yet), from its CPU time at now. */
static void listener_baseline(struct ep_state *ep, pid_t pid, const struct cycle *now)
{
	struct proc_info *p = NULL;

	if (pid && host_process(ep->host, pid, &p) == 0 && p && p->state != 'Z' && p->state != 'X')
		host_meter_start(ep->host, &ep->meter, p, now, 1);
}

static int ep_open(const struct mon_env *env, const struct coll_target *t, void **state)
{
	const struct cfg_runtime *rt = t->rt;
	struct ep_state *ep = xcalloc(1, sizeof(*ep));
	struct cycle now;
	const char *why;
	int64_t min_ms = EP_MAX_DEFAULT_TIMEOUT_MS;
	int rc;

	ep->host = env->host;
	ep->rt = rt;
	ep->c = rt->own;
	ep->index = t->index;
	*state = ep;
	scrape_url_parse(rt->address, &ep->url, &why); /* checked by the configuration */
	for (size_t i = 0; i < rt->ngroups; i++)
		if (rt->groups[i].period_ms < min_ms)
			min_ms = rt->groups[i].period_ms;
	ep->timeout_ns = (ep->c->timeout_ms ? ep->c->timeout_ms : min_ms) * NS_PER_MS;
	ep->min_period_ns = INT64_MAX;
	for (size_t i = 0; i < rt->ngroups; i++)
		if (rt->groups[i].period_ms * NS_PER_MS < ep->min_period_ns)
			ep->min_period_ns = rt->groups[i].period_ms * NS_PER_MS;
	if (ep->min_period_ns == INT64_MAX)
		ep->min_period_ns = ep->timeout_ns;
	ep->in = infer_new((enum infer_server)(ep->c->server ? ep->c->server_id : INFER_AUTO));
	infer_set_histograms(ep->in, ep->c->histograms);
	buf_init(&ep->expo, ep->c->max_body + 1);
	/* Each group's baseline: the first fetch tells it (its due time less its period); else now. */
	for (size_t g = 0; g < GROUP_COUNT; g++)
		ep->last_ns[g] = t->cy->mono_ns;
	for (size_t g = 0; g < GROUP_COUNT; g++)
		ep->first[g] = 1;
	rc = scrape_new(host_http(env->host), &ep->sc, ep->load_err, sizeof(ep->load_err));
	if (rc)
		log_warn("endpoint: %s: %s", rt->address, ep->load_err);
	/* The listening process's baseline, taken now. */
	now.mono_ns = clock_mono_ns();
	now.boot_ns = clock_boot_ns();
	now.real_ns = clock_real_ns();
	iso8601_format(now.real_ns, now.iso);
	sock_owner_init(&ep->so, ep->url.host, ep->url.port);
	if (ep->so.local && host_procfs_open(ep->host))
		log_debug("endpoint: %s: cannot open %s", rt->address, host_procfs(ep->host));
	else if (ep->so.local)
		listener_baseline(ep, host_listener(ep->host, &ep->so, now.mono_ns), &now);
	return rc;
}

static void ep_close(void *state)
{
	struct ep_state *ep = state;

	if (!ep)
		return;
	host_facts_publish(ep->host, ep, NULL, 0);
	scrape_free(ep->sc);
	infer_free(ep->in);
	expo_parser_free(ep->facts_parser);
	buf_free(&ep->expo);
	json_decref(ep->ctr);
	server_energy_free(&ep->energy);
	free(ep);
}

/*
 * The device families a server may serve about a device that only it can
 * read, published as facts (facts.h) for that device's collector: the
 * family, the label that names the device, and the fact.
 */
static const struct ep_fact_family {
	const char *family;
	const char *name_label;
	const char *device_type;
	const char *field;
} fact_families[] = {
	/* prometheus_ncs2_exporter's, which every inference application on a stick serves itself */
	{ "ncs2_temperature_celsius", "name", "ncs2", "temperature_celsius" },
};

struct fact_scan {
	const struct ep_fact_family *ff;
	struct fact *out;
	size_t n;
	const struct fact *proto; /* pid, times, source */
};

static void on_fact_sample(const struct expo_sample *smp, void *ud)
{
	struct fact_scan *fs = ud;
	const char *name = NULL;
	struct fact *f;

	if (strcmp(smp->name, fs->ff->family) || fs->n >= EP_MAX_FACTS)
		return;
	for (size_t i = 0; i < smp->nlabels; i++)
		if (!strcmp(smp->labels[i].name, fs->ff->name_label))
			name = smp->labels[i].value;
	/* The exporter writes 0 when the sensor cannot be read (no network loaded yet): no reading, never 0 °C. */
	if (!name || !name[0] || !isfinite(smp->value) || smp->value == 0)
		return;
	f = &fs->out[fs->n++];
	*f = *fs->proto;
	snprintf(f->device_type, sizeof(f->device_type), "%s", fs->ff->device_type);
	snprintf(f->name, sizeof(f->name), "%s", name);
	utf8_sanitize(f->name);
	snprintf(f->field, sizeof(f->field), "%s", fs->ff->field);
	f->value = smp->value;
}

/*
 * Publish the device facts a good scrape's body holds (replacing this
 * runtime's previous ones), for the device types a collector reads: only
 * the lines that start with a fact family's name are parsed again, so a
 * server without one costs a memmem (1 MB: about 0.1 ms). A fact
 * carries the listening pid (none: nothing is published, no stick could be
 * matched) and is good for two of the runtime's periods: by then the next
 * scrape has replaced or withdrawn it.
 */
static void publish_facts(struct ep_state *ep, const struct scrape_result *r)
{
	struct fact out[EP_MAX_FACTS], proto = { 0 };
	struct fact_scan fs = { .out = out, .proto = &proto };
	int64_t now = clock_mono_ns();
	char err[128];

	for (size_t k = 0; k < ARRAY_SIZE(fact_families); k++) {
		const char *fam = fact_families[k].family, *p = r->body, *end = r->body + r->len;
		size_t flen = strlen(fam);

		fs.ff = &fact_families[k];
		if (!host_facts_wanted(ep->host, fs.ff->device_type))
			continue; /* no collector of that device type is open: no one reads it */
		if (!proto.at_ns) { /* the listener looked up once, and only when a family is read */
			proto.pid = host_listener(ep->host, &ep->so, now);
			proto.at_ns = r->first_byte_ns ? r->first_byte_ns : now;
			proto.until_ns = proto.at_ns + 2 * ep->min_period_ns;
			snprintf(proto.source, sizeof(proto.source), "runtime %s", ep->rt->address);
			utf8_sanitize(proto.source);
		}
		if (!proto.pid)
			break;
		while (p < end && (p = memmem(p, (size_t)(end - p), fam, flen))) {
			const char *eol = memchr(p, '\n', (size_t)(end - p));

			if (!eol)
				eol = end;
			if (p == r->body || p[-1] == '\n') {
				if (!ep->facts_parser)
					ep->facts_parser = expo_parser_new();
				expo_parse(ep->facts_parser, p, (size_t)(eol - p), on_fact_sample, &fs, err, sizeof(err));
			}
			p = eol;
		}
	}
	host_facts_publish(ep->host, ep, out, fs.n);
}

/*
 * Answer every fetch waiting on the transfer, each with its share of the
 * loop CPU time (ns) the transfer and its parse took (self-timing).
 */
static void answer_all(struct ep_state *ep, int64_t cpu_ns)
{
	for (size_t i = 0; i < ep->nwaiting; i++) {
		ep->waiting[i]->loop_cpu_ns += cpu_ns / (int64_t)ep->nwaiting;
		mon_fetch_done(ep->waiting[i]);
	}
	ep->nwaiting = 0;
}

/* The transfer ended: read the body, answer every fetch waiting on it. */
static void ep_done(struct scrape *sc, void *data)
{
	struct ep_state *ep = data;
	const struct scrape_result *r = scrape_result(sc);
	char perr[256];
	int64_t cpu0 = clock_thread_cpu_ns();

	if (r->error[0]) {
		set_err(ep, "%s", r->error);
	} else if (infer_update(ep->in, r->body, r->len, r->first_byte_ns, perr, sizeof(perr))) {
		set_err(ep, "bad exposition: %s", perr);
	} else {
		ep->err[0] = '\0';
		if (ep->c->passthrough) {
			buf_reset(&ep->expo);
			ep->have_expo = buf_add(&ep->expo, r->body, r->len) == 0;
		}
	}
	if (ep->err[0])
		host_facts_publish(ep->host, ep, NULL, 0); /* no fresh reading: none is used */
	else
		publish_facts(ep, r);
	answer_all(ep, scrape_loop_cpu_ns(sc) + clock_thread_cpu_ns() - cpu0);
}

static void attach(struct ep_state *ep, struct mon_fetch *f)
{
	if (ep->nwaiting < EP_MAX_WAITING)
		ep->waiting[ep->nwaiting++] = f;
}

/*
 * The timeout in force for group id's scrapes: the configured one, or the
 * default (the smallest period, at most 10 s), at most the group's period.
 */
static int64_t group_timeout(const struct ep_state *ep, enum group_id id)
{
	int64_t t = ep->timeout_ns;

	for (size_t i = 0; i < ep->rt->ngroups; i++)
		if (ep->rt->groups[i].id == id && ep->rt->groups[i].period_ms * NS_PER_MS < t)
			t = ep->rt->groups[i].period_ms * NS_PER_MS;
	return t;
}

/*
 * The fetch op: join the transfer in flight, or start one that has until
 * f's report (the monitor starts it the timeout ahead: ep_lead).
 */
static int ep_fetch(void *state, struct mon_fetch *f)
{
	struct ep_state *ep = state;
	const struct ep_cfg *c = ep->c;
	struct scrape_opts o = { .url = ep->rt->address, .max_body = (size_t)c->max_body, .ca_file = c->ca_file,
				 .cert_file = c->cert_file, .key_file = c->key_file, .server_name = c->server_name,
				 .insecure = c->insecure, .bearer_token_file = c->bearer_token_file,
				 .username = c->username, .password_file = c->password_file };
	int64_t now = clock_mono_ns(), budget = f->deadline - now, timeout = group_timeout(ep, f->id);
	char e[512];
	int rc;

	if ((unsigned)f->id < GROUP_COUNT && ep->first[f->id]) {
		/* The monitor's baseline for the group: its first due time less its period. */
		for (size_t i = 0; i < ep->rt->ngroups; i++)
			if (ep->rt->groups[i].id == f->id && f->deadline - ep->rt->groups[i].period_ms * NS_PER_MS > ep->last_ns[f->id])
				ep->last_ns[f->id] = f->deadline - ep->rt->groups[i].period_ms * NS_PER_MS;
		ep->first[f->id] = 0;
	}
	if (!ep->sc) {
		set_err(ep, "%s", ep->load_err);
		return -ENOENT;
	}
	if (scrape_busy(ep->sc)) {
		attach(ep, f);
		return 0;
	}
	if (budget > timeout)
		budget = timeout;
	if (budget < NS_PER_MS) {
		set_err(ep, "timeout after 0 s (no time left before the report)");
		return -ETIME;
	}
	rc = scrape_start(ep->sc, &o, budget + EP_GRACE_NS, ep_done, ep, e, sizeof(e));
	if (rc) {
		set_err(ep, "%s", e);
		return rc;
	}
	ep->xfer_timeout_ns = timeout;
	ep->xfer_started_ns = now;
	attach(ep, f);
	return 0;
}

/*
 * The lead op: a group's scrape starts the timeout ahead of its report
 * (the monitor keeps it within the group's period), so the server has the
 * whole timeout: by default the group's period, at most 10 s.
 */
static int64_t ep_lead(void *state, enum group_id id, int64_t period_ns)
{
	struct ep_state *ep = state;

	(void)id;
	(void)period_ns;
	return ep->timeout_ns;
}

/* The abandon op: f's report is being written; the transfer goes on only for others still waiting. */
static void ep_abandon(void *state, struct mon_fetch *f)
{
	struct ep_state *ep = state;
	size_t k = 0;

	for (size_t i = 0; i < ep->nwaiting; i++)
		if (ep->waiting[i] != f)
			ep->waiting[k++] = ep->waiting[i];
	ep->nwaiting = k;
	if (!k && ep->sc)
		scrape_cancel(ep->sc);
}

/*
 * The overdue op: f's report is due and the scrape has not ended: the
 * timeout. The transfer is stopped, every fetch waiting on it is answered
 * with "<URL>: timeout after X s (no answer|mid-body)", and the readings it
 * published are withdrawn. X is the timeout in force; when the request went
 * out more than a tenth of it late (the producer was busy), the time it
 * really had, and it says so.
 */
static int ep_overdue(void *state, struct mon_fetch *f)
{
	struct ep_state *ep = state;
	int busy = ep->sc && scrape_busy(ep->sc);
	const char *what = busy && scrape_received(ep->sc) > 0 ? "mid-body" : "no answer";
	int64_t had = f->deadline - ep->xfer_started_ns, t = ep->xfer_timeout_ns;

	if (busy)
		scrape_cancel(ep->sc);
	if (!busy || had >= t - t / 10)
		set_err(ep, "timeout after %.3g s (%s)", (double)t / 1e9, what);
	else
		set_err(ep, "timeout after %.3g s (%s; the request went out late)",
			(double)((had > 0 ? had : 0) + NS_PER_MS / 2) / NS_PER_MS / 1e3, what);
	for (size_t i = 0; i < ep->nwaiting; i++) {
		/* What the stopped transfer took on the loop is still the endpoint's. */
		if (busy)
			ep->waiting[i]->loop_cpu_ns += scrape_loop_cpu_ns(ep->sc) / (int64_t)ep->nwaiting;
		if (ep->waiting[i] != f)
			mon_fetch_done(ep->waiting[i]);
	}
	ep->nwaiting = 0;
	host_facts_publish(ep->host, ep, NULL, 0);
	return 0;
}

static int is_process_group(enum group_id id)
{
	return id == GROUP_RUNTIME_VCPU_USAGE || id == GROUP_MEMORY_USED;
}

/*
 * runtime_vcpu_usage and memory_used of the listening process, as the host
 * layer measures them (host_process_sample), into rep.
 */
static void process_groups(struct ep_state *ep, pid_t pid, const struct cycle *cy, const enum group_id *due,
			   size_t ndue, json_t *rep)
{
	char why[160];
	int rc;

	if (pid) {
		rc = host_process_sample(ep->host, &ep->meter, pid, cy, due, ndue, rep);
		if (!rc)
			return;
		if (rc == -ESRCH)
			snprintf(why, sizeof(why), "process %d: no such process: %d", (int)pid, (int)pid);
		else
			snprintf(why, sizeof(why), "process %d: not found", (int)pid);
	} else {
		snprintf(why, sizeof(why), "no process: %s", ep->so.why);
	}
	for (size_t k = 0; k < ndue; k++) {
		json_t *g;

		if (!is_process_group(due[k]))
			continue;
		g = group_new((double)(cy->mono_ns - ep->last_ns[due[k]]) / 1e9, cy->iso);
		set_error(g, "%s", why);
		json_object_set_new(rep, group_name(due[k]), g);
	}
}

/* The listening process's pid (0: none) and comm, filtered by the runtime's tag_filter. */
static pid_t listener(struct ep_state *ep, const struct cycle *cy, char *tag, size_t size)
{
	struct proc_info *p = NULL;
	pid_t pid;

	tag[0] = '\0';
	pid = host_listener(ep->host, &ep->so, cy->mono_ns);
	if (!pid)
		return 0;
	/* The same process still holding the socket (host_listener checked): its comm is known. */
	if (pid != ep->tag_pid) {
		int rc = host_process_live(ep->host, pid, &p);

		if (rc) /* unreadable, not gone: say why */
			snprintf(ep->so.why, sizeof(ep->so.why), "cannot read process %d: %s", (int)pid, strerror(-rc));
		if (rc || !p)
			return 0;
		snprintf(ep->tag, sizeof(ep->tag), "%s", p->comm);
		utf8_sanitize(ep->tag);
		ep->tag_pid = pid;
	}
	snprintf(tag, size, "%s", ep->tag);
	if (ep->rt->tag_filter && regexec(&ep->rt->tag_re, tag, 0, NULL, 0)) {
		snprintf(ep->so.why, sizeof(ep->so.why), "its process (%s) does not match tag_filter", tag);
		tag[0] = '\0';
		return 0;
	}
	return pid;
}

static int ep_collect(void *state, const struct cycle *cy, const enum group_id *due, size_t ndue, json_t *out)
{
	struct ep_state *ep = state;
	char tag[64];
	pid_t pid = listener(ep, cy, tag, sizeof(tag));
	json_t *rep = json_object(), *ent;

	if (!ep->sc && !ep->err[0])
		set_err(ep, "%s", ep->load_err);
	ent = json_pack("{s:I, s:s, s:o, s:s, s:s, s:s, s:o}", "runtime_index", (json_int_t)ep->index, "address",
			ep->rt->address, "pid", pid ? json_integer(pid) : json_null(), "runtime_tag", tag, "server",
			infer_server_name(infer_server_of(ep->in)), "error", ep->err, "report", rep);
	if (pid) { /* the listening process's container, pod or unit, as a process runtime's (container.h) */
		/*
		 * The same process as the last cycle's (host_listener checked that
		 * it still holds the socket): its identity is the same, so its
		 * stat file is not read again for it each cycle.
		 */
		if (pid != ep->ctr_pid || cy->mono_ns - ep->ctr_ns >= EP_CTR_TTL_NS || cy->mono_ns < ep->ctr_ns) {
			json_decref(ep->ctr);
			ep->ctr = host_container_json(ep->host, pid);
			ep->ctr_pid = pid;
			ep->ctr_ns = cy->mono_ns;
		}
		if (ep->ctr)
			json_object_set_new(ent, "container", json_deep_copy(ep->ctr));
	} else {
		ep->ctr_pid = 0; /* a listener found again is read again */
	}
	if (ep->err[0]) {
		json_t *skip = json_object();

		for (size_t k = 0; k < ndue; k++) {
			json_t *g = group_new((double)(cy->mono_ns - ep->last_ns[due[k]]) / 1e9, cy->iso);

			set_error(g, "%s", ep->err);
			json_object_set_new(rep, group_name(due[k]), g);
		}
		/*
		 * The listener's groups carry the entry's error, and their period
		 * ends here: its meter takes this cycle's sample (not reported), so
		 * the next one covers one period, not this one's too.
		 */
		if (pid)
			host_process_sample(ep->host, &ep->meter, pid, cy, due, ndue, skip);
		json_decref(skip);
	} else {
		for (size_t k = 0; k < ndue; k++) {
			json_t *g;
			int64_t since;

			if (is_process_group(due[k]))
				continue;
			since = ep->last_ns[due[k]];
			if (due[k] == GROUP_EXECUTION_STATS && ep->stats_ns)
				since = ep->stats_ns; /* infer's baseline: after a failed scrape, two collections ago */
			g = group_new((double)(cy->mono_ns - since) / 1e9, cy->iso);
			if (due[k] == GROUP_EXECUTION_STATS) {
				struct infer_stats st;
				double j;
				const char *src;

				infer_execution_stats(ep->in, g, &st);
				ep->stats_ns = cy->mono_ns;
				/* the server's energy over the same period, split among its models */
				if (server_energy_take(&ep->energy, ep->host, pid, &st, &j, &src) == 0)
					model_energy_split(g, &st, j, src);
				{ /* what one endpoint adds to the report, bounded */
					struct buf scratch;

					buf_init(&scratch, BOUND_GROUP_BYTES);
					bound_group(g, &scratch);
					buf_free(&scratch);
				}
			} else {
				set_error(g, "%s is not available for endpoint runtimes", group_name(due[k]));
			}
			json_object_set_new(rep, group_name(due[k]), g);
		}
		process_groups(ep, pid, cy, due, ndue, rep);
		if (ep->c->passthrough && ep->have_expo) {
			char *text = xmalloc(ep->expo.len + 1);

			/* Valid UTF-8 for the JSON string: a NUL would end it early, so it goes too. */
			for (size_t i = 0; i < ep->expo.len; i++)
				text[i] = ep->expo.data[i] ? ep->expo.data[i] : '?';
			text[ep->expo.len] = '\0';
			json_object_set_new(ent, "exposition", json_stringn(utf8_sanitize(text), ep->expo.len));
			free(text);
		}
	}
	for (size_t k = 0; k < ndue; k++)
		ep->last_ns[due[k]] = cy->mono_ns;
	json_array_append_new(out, ent);
	return ep->err[0] ? -1 : 0; /* the entry's error */
}

const struct collector_ops coll_endpoint_ops = {
	.name = "endpoint",
	.rows = &endpoint_rows,
	.scope = COLL_RUNTIME,
	.schemes = (const char *const[]){ "http", "https", NULL },
	.keys = ep_keys,
	.config = ep_config,
	.config_print = ep_config_print,
	.config_free = ep_config_free,
	.open = ep_open,
	.collect = ep_collect,
	.close = ep_close,
	.fetch = ep_fetch,
	.abandon = ep_abandon,
	.fetch_timeout_ns = EP_MAX_DEFAULT_TIMEOUT_MS * NS_PER_MS, /* ep_lead says how far ahead */
	.lead = ep_lead,
	.overdue = ep_overdue,
};
