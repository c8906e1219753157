/* SPDX-License-Identifier: MIT */
/* accel-top's /metrics input; see top_url.h. */
#include "top_url.h"
#include "../../common/expo_parse.h"
#include "../../common/log.h"
#include "../../common/schema.h"
#include "../../common/timeutil.h"
#include "../../common/util.h"

#include <curl/curl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BODY_CAP (64u << 20) /* bytes of one /metrics answer */
#define TABLE_MIN 1024        /* counter series slots, grown at half full */

struct prev {
	char *series; /* NULL: an empty slot */
	double value;
};

struct top_url {
	const char *url;
	int64_t interval_ms;
	CURL *h;
	struct buf body;
	struct prev *tab;
	size_t ntab, nused;
	/* within one apply */
	struct top_model *m;
	int64_t now_ms;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static struct prev *slot(struct prev *tab, size_t n, const char *series)
{
	size_t i = (size_t)hash(series) & (n - 1);

	while (tab[i].series && strcmp(tab[i].series, series))
		i = (i + 1) & (n - 1);
	return &tab[i];
}

/* The previous value of a counter series (NAN at its first sight); its value becomes v. */
static double swap_prev(struct top_url *u, const char *series, double v)
{
	struct prev *p;
	double old;

	if (2 * (u->nused + 1) > u->ntab) {
		size_t n = u->ntab ? 2 * u->ntab : TABLE_MIN;
		struct prev *t = xcalloc(n, sizeof(*t));

		for (size_t i = 0; i < u->ntab; i++)
			if (u->tab[i].series)
				*slot(t, n, u->tab[i].series) = u->tab[i];
		free(u->tab);
		u->tab = t;
		u->ntab = n;
	}
	p = slot(u->tab, u->ntab, series);
	if (!p->series) {
		p->series = xstrdup(series);
		u->nused++;
		old = NAN;
	} else {
		old = p->value;
	}
	p->value = v;
	return old;
}

static const struct family *family(const char *name)
{
	return map_family(name);
}

static void on_expo(const struct expo_sample *x, void *ud)
{
	struct top_url *u = ud;
	const struct family *f = family(x->name);
	struct sample s;
	size_t k = 0;

	if (!f || isnan(x->value))
		return;
	memset(&s, 0, sizeof(s));
	s.fam = f;
	s.group = "";
	s.entity = "";
	s.host = "";
	/* instance labels first, as the mapping orders them */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < x->nlabels && k < SAMPLE_MAX_LABELS; i++) {
			const struct schema_label *l = schema_label(x->labels[i].name);
			int inst = l && l->kind == LK_INSTANCE;

			if (inst != (pass == 0))
				continue;
			s.labels[k++] = (struct label){ x->labels[i].name, x->labels[i].value };
			if (inst)
				s.ninstance = k;
			if (!strcmp(x->labels[i].name, "device_type"))
				s.device_type = x->labels[i].value;
			else if (!strcmp(x->labels[i].name, "device"))
				s.device = x->labels[i].value;
			else if (!strcmp(x->labels[i].name, "runtime_tag"))
				s.runtime_tag = x->labels[i].value;
		}
	s.nlabels = k;
	s.value = x->value;
	if (f->type == METRIC_COUNTER) {
		double old = swap_prev(u, x->series, x->value);

		s.value = isnan(old) ? 0 : x->value >= old ? x->value - old : x->value;
	}
	s.ts_ms = u->now_ms;
	s.period = (double)u->interval_ms / 1000.0;
	top_model_sample(u->m, &s);
}

struct top_url *top_url_new(const char *url, int64_t interval_ms)
{
	struct top_url *u = xcalloc(1, sizeof(*u));

	u->url = url;
	u->interval_ms = interval_ms;
	buf_init(&u->body, BODY_CAP);
	return u;
}

void top_url_free(struct top_url *u)
{
	if (!u)
		return;
	if (u->h)
		curl_easy_cleanup(u->h);
	buf_free(&u->body);
	for (size_t i = 0; i < u->ntab; i++)
		free(u->tab[i].series);
	free(u->tab);
	free(u);
}

size_t top_url_apply(struct top_url *u, struct top_model *m, const char *text, size_t len)
{
	char err[256];
	size_t bad;

	u->m = m;
	u->now_ms = clock_real_ns() / 1000000;
	top_model_begin(m);
	m->format = FORMAT_ACCEL;
	bad = expo_parse(NULL, text, len, on_expo, u, err, sizeof(err)); /* a parser for this poll alone */
	if (bad)
		log_warn("top: %s: %zu bad lines skipped; the first: %s", u->url, bad, err);
	top_model_end(m, clock_mono_ns());
	return bad;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct buf *b = ud;

	return buf_add(b, p, size * n) ? 0 : size * n; /* 0: over the cap, the transfer fails */
}

int top_url_poll(struct top_url *u, struct top_model *m, char *err, size_t errsz)
{
	char ebuf[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;
	long timeout = u->interval_ms > 2000 ? (long)u->interval_ms : 2000;

	if (!u->h) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		if (!(u->h = curl_easy_init())) {
			snprintf(err, errsz, "%s: cannot start libcurl", u->url);
			return -1;
		}
	}
	buf_reset(&u->body);
	curl_easy_setopt(u->h, CURLOPT_URL, u->url);
	curl_easy_setopt(u->h, CURLOPT_USERAGENT, "accel-top/" ACCEL_VERSION);
	curl_easy_setopt(u->h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(u->h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(u->h, CURLOPT_WRITEDATA, &u->body);
	curl_easy_setopt(u->h, CURLOPT_TIMEOUT_MS, timeout);
	curl_easy_setopt(u->h, CURLOPT_CONNECTTIMEOUT_MS, timeout);
	curl_easy_setopt(u->h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(u->h, CURLOPT_ERRORBUFFER, ebuf);
	rc = curl_easy_perform(u->h);
	if (rc != CURLE_OK) {
		snprintf(err, errsz, "%s: %s", u->url,
			 rc == CURLE_WRITE_ERROR ? "the answer is over 64 MiB" : *ebuf ? ebuf : curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(u->h, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		snprintf(err, errsz, "%s: HTTP %ld", u->url, code);
		return -1;
	}
	top_url_apply(u, m, u->body.data ? u->body.data : "", u->body.len);
	return 0;
}
