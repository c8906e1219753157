/* SPDX-License-Identifier: MIT */
/*
 * Who each device is allocated to (monitor/host/owners.c): the kubelet's
 * pod-resources answer mapped onto the devices the collectors reported.
 * Each answer is a real protobuf message, packed with the generated code
 * (podres_api.pb-c.h) and decoded by podres_table_decode() as the client
 * decodes the kubelet's; the devices are struct dev_ident as the
 * collectors' devices ops fill them (dev_list_add). Each case compares the
 * whole "allocations" object.
 *
 * Covered: NVIDIA GPUs by UUID and by index, time-sliced replicas to one
 * container and to two, MIG devices by UUID and "<gpu>:<mig>", look-alike
 * ids ("1" against index 10 and "10:1", "01"), the DRA driver's "gpu-N" and
 * "gpu-N-mig-..." names ("gpu-20" against GPU 2), other DRA drivers and
 * other vendors' resources; AMD by PCI address (any case, with or without
 * the domain, either side) and by UUID; Neuron devices, NeuronCores (answer
 * order, across two devices, past the last core, a device with none);
 * kinds with no rules; the source's error; the cache (same object, new
 * object) and *fresh; an id that names no device logged once over several
 * answers, and nothing logged for unmapped resources, kinds not reported
 * or records with no pod; records with no pod never owners.
 */
#include "../../common/log.h"
#include "../../common/util.h"
#include "../../monitor/core/collector.h"
#include "../../monitor/host/owners.h"
#include "../../monitor/host/podres_api.pb-c.h"
#include "../../monitor/host/podres_table.h"
#include "tap.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Device ids as the drivers write them. */
#define U0 "GPU-4a7e1c2b-8d3f-4e5a-9b6c-0d1e2f3a4b50"
#define U1 "GPU-4a7e1c2b-8d3f-4e5a-9b6c-0d1e2f3a4b51"
#define U2 "GPU-4a7e1c2b-8d3f-4e5a-9b6c-0d1e2f3a4b52"
#define U10 "GPU-4a7e1c2b-8d3f-4e5a-9b6c-0d1e2f3a4b5a"
#define U20 "GPU-4a7e1c2b-8d3f-4e5a-9b6c-0d1e2f3a4b64"
#define M00 "MIG-7c1d2e3f-0a1b-5c2d-8e3f-4a5b6c7d8e00"
#define M01 "MIG-7c1d2e3f-0a1b-5c2d-8e3f-4a5b6c7d8e01"
#define M101 "MIG-7c1d2e3f-0a1b-5c2d-8e3f-4a5b6c7d8ea1"
#define A0 "e1c2a33f61e4f0b5"
#define A1 "9d04b7c2a51f3e68"

/* One row of an answer: a device plugin's ids (res set) or one DRA device (res NULL) given to a container. */
struct row {
	const char *ns, *pod, *ctr;
	const char *res;     /* the plugin's resource name; NULL: a DRA claim's device */
	const char *ids[6];  /* the plugin's ids, NULL-terminated */
	const char *claim, *claim_ns, *driver, *pool, *device;
};

/* A plugin's ids (at most 5), a DRA claim's device. */
#define DEV(ns, pod, ctr, res, ...) { ns, pod, ctr, res, { __VA_ARGS__, NULL }, NULL, NULL, NULL, NULL, NULL }
#define CLAIM(ns, pod, ctr, claim, claim_ns, driver, pool, device)                                              \
	{ ns, pod, ctr, NULL, { NULL }, claim, claim_ns, driver, pool, device }
#define ROWS(...) (const struct row[]){ __VA_ARGS__ }, sizeof((const struct row[]){ __VA_ARGS__ }) / sizeof(struct row)
#define MAXR 16

static char *s(const char *v)
{
	return (char *)(v ? v : "");
}

static size_t nids(const struct row *w)
{
	size_t n = 0;

	while (n < ARRAY_SIZE(w->ids) && w->ids[n])
		n++;
	return n;
}

static struct podres_table *decode(enum podres_kind kind, const uint8_t *buf, size_t len)
{
	struct podres_table *t;
	char err[256];

	if (podres_table_decode(kind, buf, len, 1000, &t, err, sizeof(err))) {
		printf("Bail out! podres_table_decode: %s\n", err);
		exit(2);
	}
	return t;
}

/*
 * A List answer of rows (at most MAXR), packed and decoded: consecutive rows
 * of one pod are one PodResources, of one container one ContainerResources.
 */
static struct podres_table *list_of(const struct row *rows, size_t n)
{
	V1__PodResources pods[MAXR], *podp[MAXR];
	V1__ContainerResources ctrs[MAXR], *ctrp[MAXR];
	V1__ContainerDevices devs[MAXR], *devp[MAXR];
	V1__DynamicResource dyn[MAXR], *dynp[MAXR];
	V1__ClaimResource cr[MAXR], *crp[MAXR];
	V1__ListPodResourcesResponse r = V1__LIST_POD_RESOURCES_RESPONSE__INIT;
	V1__PodResources *p = NULL;
	V1__ContainerResources *c = NULL;
	size_t np = 0, nc = 0, nd = 0, ny = 0, len;
	struct podres_table *t;
	uint8_t *buf;

	if (n > MAXR) {
		printf("Bail out! more than %d rows\n", MAXR);
		exit(2);
	}
	for (size_t i = 0; i < n; i++) {
		const struct row *w = &rows[i];
		int newpod = !p || strcmp(p->name, s(w->pod)) || strcmp(p->namespace_, s(w->ns));

		if (newpod) {
			p = &pods[np];
			v1__pod_resources__init(p);
			p->name = s(w->pod);
			p->namespace_ = s(w->ns);
			p->containers = &ctrp[nc];
			podp[np++] = p;
		}
		if (newpod || strcmp(c->name, s(w->ctr))) {
			c = &ctrs[nc];
			v1__container_resources__init(c);
			c->name = s(w->ctr);
			c->devices = &devp[nd];
			c->dynamic_resources = &dynp[ny];
			ctrp[nc++] = c;
			p->n_containers++;
		}
		if (w->res) {
			v1__container_devices__init(&devs[nd]);
			devs[nd].resource_name = s(w->res);
			devs[nd].device_ids = (char **)w->ids;
			devs[nd].n_device_ids = nids(w);
			devp[nd] = &devs[nd];
			nd++;
			c->n_devices++;
		} else {
			v1__claim_resource__init(&cr[ny]);
			cr[ny].driver_name = s(w->driver);
			cr[ny].pool_name = s(w->pool);
			cr[ny].device_name = s(w->device);
			crp[ny] = &cr[ny];
			v1__dynamic_resource__init(&dyn[ny]);
			dyn[ny].claim_name = s(w->claim);
			dyn[ny].claim_namespace = s(w->claim_ns);
			dyn[ny].claim_resources = &crp[ny];
			dyn[ny].n_claim_resources = 1;
			dynp[ny] = &dyn[ny];
			ny++;
			c->n_dynamic_resources++;
		}
	}
	r.n_pod_resources = np;
	r.pod_resources = podp;
	len = v1__list_pod_resources_response__get_packed_size(&r);
	buf = xmalloc(len ? len : 1);
	v1__list_pod_resources_response__pack(&r, buf);
	t = decode(PODRES_LIST, buf, len);
	free(buf);
	return t;
}

/* A GetAllocatableResources answer: each row's resource and ids (no pod). */
static struct podres_table *allocatable_of(const struct row *rows, size_t n)
{
	V1__ContainerDevices devs[MAXR], *devp[MAXR];
	V1__AllocatableResourcesResponse r = V1__ALLOCATABLE_RESOURCES_RESPONSE__INIT;
	struct podres_table *t;
	uint8_t *buf;
	size_t len;

	for (size_t i = 0; i < n && i < MAXR; i++) {
		v1__container_devices__init(&devs[i]);
		devs[i].resource_name = s(rows[i].res);
		devs[i].device_ids = (char **)rows[i].ids;
		devs[i].n_device_ids = nids(&rows[i]);
		devp[i] = &devs[i];
	}
	r.n_devices = n < MAXR ? n : MAXR;
	r.devices = devp;
	len = v1__allocatable_resources_response__get_packed_size(&r);
	buf = xmalloc(len ? len : 1);
	v1__allocatable_resources_response__pack(&r, buf);
	t = decode(PODRES_ALLOCATABLE, buf, len);
	free(buf);
	return t;
}

/* ---- devices, as the collectors' devices ops list them --------------------------------------------- */

static struct dev_ident *dev(struct dev_list *l, const char *type, int index, const char *uuid, const char *pci)
{
	struct dev_ident *d;
	char key[16];

	snprintf(key, sizeof(key), "%d", index);
	d = dev_list_add(l, type, key);
	d->index = index;
	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->pci_bus_id, sizeof(d->pci_bus_id), "%s", pci);
	return d;
}

/* A MIG instance of GPU index, its sub-th MIG device (as nv_mig_idents lists it). */
static void mig(struct dev_list *l, const char *key, int index, int sub, const char *uuid)
{
	struct dev_ident *d = dev_list_add(l, "nvidia", key);

	snprintf(d->uuid, sizeof(d->uuid), "%s", uuid);
	snprintf(d->parent, sizeof(d->parent), "%d", index);
	d->index = index;
	d->sub = sub;
}

static void neuron(struct dev_list *l, int index, unsigned core_base, unsigned cores)
{
	struct dev_ident *d = dev(l, "neuron", index, "", "");

	d->core_base = core_base;
	d->cores = cores;
}

/* GPUs 0, 1, 2, 10 and 20; MIG devices 0 and 1 of GPU 0, MIG device 1 of GPU 10. */
static void nvidia_fleet(struct dev_list *l)
{
	dev(l, "nvidia", 0, U0, "00000000:01:00.0");
	mig(l, "0/7/0", 0, 0, M00);
	mig(l, "0/8/0", 0, 1, M01);
	dev(l, "nvidia", 1, U1, "00000000:02:00.0");
	dev(l, "nvidia", 2, U2, "00000000:03:00.0");
	dev(l, "nvidia", 10, U10, "00000000:81:00.0");
	mig(l, "10/9/0", 10, 1, M101);
	dev(l, "nvidia", 20, U20, "00000000:c1:00.0");
}

static void amd_pair(struct dev_list *l)
{
	dev(l, "amdgpu", 0, A0, "0000:43:00.0");
	dev(l, "amdgpu", 1, A1, "0000:c3:00.0");
}

/* NeuronCores 0-1 on device 0, 2-3 on device 1. */
static void neuron_pair(struct dev_list *l)
{
	neuron(l, 0, 0, 2);
	neuron(l, 1, 2, 2);
}

/* ---- comparing ------------------------------------------------------------------------------------- */

/* JSON written with ' for " (the cases read better so), parsed. */
static json_t *jq(const char *text)
{
	char *buf = xstrdup(text);
	json_error_t e;
	json_t *j;

	for (char *c = buf; *c; c++)
		if (*c == '\'')
			*c = '"';
	if (!(j = json_loads(buf, 0, &e))) {
		printf("Bail out! the expected JSON, line %d column %d: %s: %s\n", e.line, e.column, e.text, buf);
		exit(2);
	}
	free(buf);
	return j;
}

static void is_json(json_t *got, const char *want_text, const char *name)
{
	json_t *want = jq(want_text);

	if (!ok(got && json_equal(got, want), "%s", name)) {
		char *g = got ? json_dumps(got, JSON_SORT_KEYS) : NULL, *w = json_dumps(want, JSON_SORT_KEYS);

		fprintf(stderr, "#   got:      %s\n#   expected: %s\n", g ? g : "(null)", w);
		free(g);
		free(w);
	}
	json_decref(want);
}

/* The allocations of one answer for devices l, from a new owners table: {"error": "", "devices": devices}. */
static void expect(const struct row *rows, size_t n, const struct dev_list *l, const char *devices, const char *name)
{
	struct owners *o = owners_new();
	struct podres_table *t = list_of(rows, n);
	char want[4096];
	json_t *got;
	int fresh;

	if (podres_table_size(t) == 0) {
		printf("Bail out! %s: the answer holds no record\n", name);
		exit(2);
	}
	snprintf(want, sizeof(want), "{'error': '', 'devices': %s}", devices);
	got = owners_report(o, l->d, l->n, t, 1, NULL, NULL, "", &fresh);
	is_json(got, want, name);
	json_decref(got);
	podres_table_free(t);
	owners_free(o);
}

/* ---- stderr into a file for the while ------------------------------------------------------------- */

static char log_path[64];
static int log_saved = -1;

static void capture_start(void)
{
	int fd;

	fflush(stderr);
	snprintf(log_path, sizeof(log_path), "/tmp/test_owners.XXXXXX");
	fd = mkstemp(log_path);
	log_saved = dup(2);
	if (fd < 0 || log_saved < 0 || dup2(fd, 2) < 0) {
		printf("Bail out! redirect stderr to %s\n", log_path);
		exit(2);
	}
	close(fd);
	log_init("test_owners", LOG_LVL_WARN);
}

/* What was logged since capture_start (into buf); stderr back. */
static const char *capture_end(char *buf, size_t size)
{
	FILE *f;
	size_t n = 0;

	fflush(stderr);
	dup2(log_saved, 2);
	close(log_saved);
	log_init("test_owners", LOG_LVL_SILENT);
	if ((f = fopen(log_path, "r"))) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = 0;
	unlink(log_path);
	return buf;
}

/* Lines of text holding needle. */
static int lines_with(const char *text, const char *needle)
{
	int n = 0;

	while (*text) {
		const char *end = strchr(text, '\n');
		size_t len = end ? (size_t)(end - text) : strlen(text);

		if (memmem(text, len, needle, strlen(needle)))
			n++;
		text += len + (end ? 1 : 0);
	}
	return n;
}

/* ---- NVIDIA -------------------------------------------------------------------------------------- */

static void test_nvidia(void)
{
	struct dev_list l = { 0 };

	nvidia_fleet(&l);
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", U1)), &l,
	       "{'nvidia': {'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', "
	       "'device_ids': ['" U1 "']}]}}",
	       "nvidia: a GPU by its UUID");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", "1")), &l,
	       "{'nvidia': {'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', "
	       "'device_ids': ['1']}]}}",
	       "nvidia: a GPU by its index; \"1\" is not GPU 10, nor MIG \"10:1\", nor \"0:1\"");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", U2 "::1", U2 "::3")), &l,
	       "{'nvidia': {'2': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', "
	       "'device_ids': ['" U2 "::1', '" U2 "::3']}]}}",
	       "nvidia: two replicas of a GPU to one container: one owner with both ids");
	expect(ROWS(DEV("ml", "z-pod", "w", "nvidia.com/gpu", U2 "::3"),
		    DEV("ml", "a-pod", "w", "nvidia.com/gpu", U2 "::1")),
	       &l,
	       "{'nvidia': {'2': [{'namespace': 'ml', 'pod': 'z-pod', 'container': 'w', 'resource': 'nvidia.com/gpu', "
	       "'device_ids': ['" U2 "::3']}, {'namespace': 'ml', 'pod': 'a-pod', 'container': 'w', "
	       "'resource': 'nvidia.com/gpu', 'device_ids': ['" U2 "::1']}]}}",
	       "nvidia: replicas of a GPU to two containers: two owners, in the answer's order");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", "1::0"),
		    DEV("ml", "train", "side", "nvidia.com/gpu", "1::1")),
	       &l,
	       "{'nvidia': {'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', "
	       "'device_ids': ['1::0']}, {'namespace': 'ml', 'pod': 'train', 'container': 'side', "
	       "'resource': 'nvidia.com/gpu', 'device_ids': ['1::1']}]}}",
	       "nvidia: replicas of an index-named GPU to two containers of one pod");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/mig-1g.10gb", M01)), &l,
	       "{'nvidia': {'0/8/0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'nvidia.com/mig-1g.10gb', 'device_ids': ['" M01 "']}]}}",
	       "nvidia: a MIG device by its UUID, not its GPU nor its sibling");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/mig-1g.10gb", "0:1")), &l,
	       "{'nvidia': {'0/8/0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'nvidia.com/mig-1g.10gb', 'device_ids': ['0:1']}]}}",
	       "nvidia: a MIG device by \"<gpu>:<mig index>\", not its GPU nor its sibling");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/mig-1g.10gb", "10:1")), &l,
	       "{'nvidia': {'10/9/0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'nvidia.com/mig-1g.10gb', 'device_ids': ['10:1']}]}}",
	       "nvidia: \"10:1\" is GPU 10's MIG device 1, not GPU 10 nor GPU 1");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", U0)), &l,
	       "{'nvidia': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', "
	       "'device_ids': ['" U0 "']}]}}",
	       "nvidia: a GPU's UUID names the GPU, not its MIG devices");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", "01", "001", "1 ", "+1")), &l, "{}",
	       "nvidia: \"01\", \"001\", \"1 \" and \"+1\" name no GPU");
	dev_list_free(&l);
}

#define DRA_OWNER(dev_name)                                                                                     \
	"{'namespace': 'ml', 'pod': 'infer', 'container': 'main', 'dra_claim_name': 'gpu-claim', "              \
	"'dra_claim_namespace': 'ml', 'dra_driver_name': 'gpu.nvidia.com', 'dra_pool_name': 'node-1', "         \
	"'dra_device_name': '" dev_name "'}"

static void test_nvidia_dra(void)
{
	struct dev_list l = { 0 };

	nvidia_fleet(&l);
	expect(ROWS(CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1", "gpu-2")),
	       &l, "{'nvidia': {'2': [" DRA_OWNER("gpu-2") "]}}", "nvidia DRA: \"gpu-2\" is GPU index 2");
	expect(ROWS(CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1",
		      "gpu-0-mig-1g10gb-19-0")),
	       &l, "{'nvidia': {'0': [" DRA_OWNER("gpu-0-mig-1g10gb-19-0") "]}}",
	       "nvidia DRA: \"gpu-0-mig-1g10gb-19-0\" is GPU 0, not its MIG devices");
	expect(ROWS(CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1", "gpu-20")),
	       &l, "{'nvidia': {'20': [" DRA_OWNER("gpu-20") "]}}", "nvidia DRA: \"gpu-20\" is GPU 20, not GPU 2");
	expect(ROWS(CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1",
		      "gpu-1-mig"),
		    CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1", "gpu-01"),
		    CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1", "1"),
		    CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.nvidia.com", "node-1", U1)),
	       &l, "{}", "nvidia DRA: \"gpu-1-mig\", \"gpu-01\", \"1\" and a UUID name no GPU");
	expect(ROWS(CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.intel.com", "node-1", "gpu-0"),
		    CLAIM("ml", "infer", "main", "gpu-claim", "ml", "gpu.amd.com", "node-1", "gpu-1")),
	       &l, "{}", "DRA: another driver's \"gpu-0\" maps nothing");
	dev_list_free(&l);
}

static void test_other_vendor(void)
{
	struct dev_list l = { 0 };

	dev(&l, "nvidia", 0, U0, "00000000:01:00.0");
	dev(&l, "amdgpu", 0, A0, "0000:43:00.0");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "0"),
		    DEV("ml", "train", "main", "intel.com/gpu", "0", U0),
		    DEV("ml", "train", "main", "aws.amazon.com/neuron", "0")),
	       &l, "{}", "amd.com/gpu, intel.com/gpu and aws.amazon.com/neuron \"0\" are not NVIDIA GPU 0 (nor AMD's)");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", U0),
		    DEV("ml", "train", "main", "nvidia.com/gpu", "0000:43:00.0", A0)),
	       &l, "{}", "an NVIDIA UUID under amd.com, AMD's address and UUID under nvidia.com: nothing");
	dev_list_free(&l);
}

/* ---- AMD ---------------------------------------------------------------------------------------- */

#define AMD_OWNER(id)                                                                                           \
	"{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'amd.com/gpu', 'device_ids': ['" id \
	"']}"

static void test_amd(void)
{
	struct dev_list l = { 0 }, bare = { 0 };

	amd_pair(&l);
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "0000:43:00.0")), &l,
	       "{'amdgpu': {'0': [" AMD_OWNER("0000:43:00.0") "]}}", "amd: a GPU by its PCI address");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "0000:C3:00.0")), &l,
	       "{'amdgpu': {'1': [" AMD_OWNER("0000:C3:00.0") "]}}", "amd: the PCI address in upper case");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "43:00.0")), &l,
	       "{'amdgpu': {'0': [" AMD_OWNER("43:00.0") "]}}", "amd: the id without the domain");
	dev(&bare, "amdgpu", 0, A0, "43:00.0");
	dev(&bare, "amdgpu", 1, A1, "C3:00.0");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "0000:43:00.0")), &bare,
	       "{'amdgpu': {'0': [" AMD_OWNER("0000:43:00.0") "]}}", "amd: the device's address without the domain");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "0000:c3:00.0")), &bare,
	       "{'amdgpu': {'1': [" AMD_OWNER("0000:c3:00.0") "]}}",
	       "amd: no domain on the device's side, the other case on the id's");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", A1)), &l,
	       "{'amdgpu': {'1': [" AMD_OWNER(A1) "]}}", "amd: a GPU by its UUID");
	expect(ROWS(DEV("ml", "train", "main", "amd.com/gpu", "0001:43:00.0", "3:00.0", "0000:43:00", "0")), &l,
	       "{}", "amd: another domain, a cut address and an index name no GPU");
	dev_list_free(&l);
	dev_list_free(&bare);
}

/* ---- Neuron ------------------------------------------------------------------------------------- */

static void test_neuron(void)
{
	struct dev_list l = { 0 }, nocores = { 0 };

	neuron_pair(&l);
	expect(ROWS(DEV("ml", "train", "main", "aws.amazon.com/neuron", "1")), &l,
	       "{'neuron': {'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'aws.amazon.com/neuron', 'device_ids': ['1']}]}}",
	       "neuron: aws.amazon.com/neuron by the device's index");
	expect(ROWS(DEV("ml", "train", "main", "aws.amazon.com/neurondevice", "0")), &l,
	       "{'neuron': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'aws.amazon.com/neurondevice', 'device_ids': ['0']}]}}",
	       "neuron: aws.amazon.com/neurondevice by the device's index");
	expect(ROWS(DEV("ml", "train", "main", "aws.amazon.com/neuroncore", "3", "2")), &l,
	       "{'neuron': {'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'aws.amazon.com/neuroncore', 'device_ids': ['3', '2'], 'neuroncores': [3, 2]}]}}",
	       "neuron: NeuronCores 3 and 2 are device 1's, listed in the answer's order");
	expect(ROWS(DEV("ml", "train", "main", "aws.amazon.com/neuroncore", "1", "2")), &l,
	       "{'neuron': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'aws.amazon.com/neuroncore', 'device_ids': ['1'], 'neuroncores': [1]}], "
	       "'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'aws.amazon.com/neuroncore', 'device_ids': ['2'], 'neuroncores': [2]}]}}",
	       "neuron: NeuronCores 1 and 2 of one container: each on its device");
	expect(ROWS(DEV("ml", "train", "main", "aws.amazon.com/neuroncore", "4", "01")), &l, "{}",
	       "neuron: NeuronCore 4 is past the last core (3); \"01\" is no core");
	neuron(&nocores, 0, 0, 2);
	neuron(&nocores, 1, 2, 0);
	neuron(&nocores, 2, 2, 2);
	expect(ROWS(DEV("ml", "train", "main", "aws.amazon.com/neuroncore", "2")), &nocores,
	       "{'neuron': {'2': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
	       "'resource': 'aws.amazon.com/neuroncore', 'device_ids': ['2'], 'neuroncores': [2]}]}}",
	       "neuron: a device with no NeuronCores takes no core id (its core_base is 2, core 2 is device 2's)");
	dev_list_free(&l);
	dev_list_free(&nocores);
}

/* ---- kinds without rules, errors, records without a pod ------------------------------------------- */

static void test_unmapped_kinds(void)
{
	struct dev_list l = { 0 };

	dev(&l, "ncs2", 0, "03e72485", "");
	dev(&l, "hwmon", 0, "", "0000:01:00.0");
	expect(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", "0"),
		    DEV("ml", "train", "main", "amd.com/gpu", "0000:01:00.0"),
		    DEV("ml", "train", "main", "aws.amazon.com/neuron", "0"),
		    DEV("ml", "train", "main", "intel.com/myriad", "0", "03e72485"),
		    CLAIM("ml", "train", "main", "c", "ml", "gpu.nvidia.com", "node-1", "gpu-0")),
	       &l, "{}", "ncs2 and hwmon devices get no owner");
	dev_list_free(&l);
}

static void test_error(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	struct podres_table *t = list_of(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", "0")));
	json_t *got;
	int fresh;

	dev(&l, "nvidia", 0, U0, "");
	dev(&l, "nvidia", 1, U1, "");
	got = owners_report(o, l.d, l.n, NULL, 0, NULL, NULL, "pod-resources: /run/kubelet.sock: No such file or directory", &fresh);
	is_json(got, "{'error': 'pod-resources: /run/kubelet.sock: No such file or directory', 'devices': {}}",
		"no answer yet: the error and no device");
	json_decref(got);
	got = owners_report(o, l.d, l.n, t, 1, NULL, NULL, "pod-resources: the last List failed: deadline exceeded", &fresh);
	is_json(got,
		"{'error': 'pod-resources: the last List failed: deadline exceeded', 'devices': {'nvidia': {'0': "
		"[{'namespace': 'ml', 'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', "
		"'device_ids': ['0']}]}}}",
		"an answer and an error: both");
	json_decref(got);
	got = owners_report(o, l.d, l.n, t, 1, NULL, NULL, NULL, &fresh);
	is_json(got,
		"{'error': '', 'devices': {'nvidia': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
		"'resource': 'nvidia.com/gpu', 'device_ids': ['0']}]}}}",
		"no error (NULL): \"error\" is \"\"");
	json_decref(got);
	podres_table_free(t);
	owners_free(o);
	dev_list_free(&l);
}

static void test_no_pod(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	struct podres_table *t;
	char text[4096];
	json_t *got;
	int fresh;

	nvidia_fleet(&l);
	amd_pair(&l);
	t = allocatable_of(ROWS(DEV(NULL, NULL, NULL, "nvidia.com/gpu", U0, "1", U20 "::2", "GPU-nowhere"),
				DEV(NULL, NULL, NULL, "amd.com/gpu", "0000:43:00.0", "0000:99:00.0")));
	is_int(podres_table_size(t), 6, "the allocatable answer holds 6 records");
	capture_start();
	got = owners_report(o, l.d, l.n, t, 1, NULL, NULL, "", &fresh);
	capture_end(text, sizeof(text));
	is_json(got, "{'error': '', 'devices': {}}", "an allocatable answer's records (no pod) are no owners");
	is_str(text, "", "... and none is logged, not even the ids of no device");
	json_decref(got);
	podres_table_free(t);
	t = list_of(ROWS(DEV("ml", "", "main", "nvidia.com/gpu", U0),
			 DEV("", "", "", "amd.com/gpu", "0000:43:00.0"),
			 CLAIM("ml", "", "", "c", "ml", "gpu.nvidia.com", "node-1", "gpu-1"),
			 DEV("ml", "train", "main", "nvidia.com/gpu", "1")));
	got = owners_report(o, l.d, l.n, t, 2, NULL, NULL, "", &fresh);
	is_json(got,
		"{'error': '', 'devices': {'nvidia': {'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
		"'resource': 'nvidia.com/gpu', 'device_ids': ['1']}]}}}",
		"a List's record with an empty pod name is no owner; the pod's next to it is");
	json_decref(got);
	podres_table_free(t);
	owners_free(o);
	dev_list_free(&l);
}

/* ---- the cache and *fresh ---------------------------------------------------------------------------- */

#define OWNS_0                                                                                                  \
	"{'error': '', 'devices': {'nvidia': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "  \
	"'resource': 'nvidia.com/gpu', 'device_ids': ['" U0 "']}]}}}"

/*
 * One more call from the caller who holds prev: a new object (want_new) or
 * prev again, *fresh want_fresh. Returns it (the caller's), prev released.
 */
static json_t *step(struct owners *o, const struct dev_list *l, const struct podres_table *t, unsigned long gen,
		    const char *err, json_t *prev, int want_new, int want_fresh, const char *what)
{
	json_t *b;
	char name[160];
	int fresh = -1;

	b = owners_report(o, l->d, l->n, t, gen, NULL, NULL, err, &fresh);
	ok(want_new ? b != prev : b == prev, "cache: %s: %s", what, want_new ? "a new object" : "the same object");
	snprintf(name, sizeof(name), "cache: %s: %s", what, want_fresh ? "fresh" : "not fresh");
	is_int(fresh, want_fresh, name);
	json_decref(prev);
	return b;
}

static void test_cache(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	struct podres_table *t = list_of(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", U0)));
	struct podres_table *t2 = list_of(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", U0)));
	struct podres_table *t3 = list_of(ROWS(DEV("ml", "train", "side", "nvidia.com/gpu", U0)));
	json_t *a, *b;
	int fresh = -1;

	dev(&l, "nvidia", 0, U0, "");
	dev(&l, "nvidia", 1, U1, "");
	a = owners_report(o, l.d, l.n, t, 1, NULL, NULL, "", &fresh);
	is_json(a, OWNS_0, "cache: the first call maps");
	is_int(fresh, 1, "cache: the first call: fresh");
	is_int(a->refcount, 2, "cache: the object is the caller's and the table's");
	b = owners_report(o, l.d, l.n, t, 1, NULL, NULL, "", &fresh);
	ok(b == a, "cache: the same gen, devices and error: the same object");
	is_int(a->refcount, 3, "cache: ... a new reference to it");
	is_int(fresh, 0, "cache: the same devices: not fresh");
	json_decref(b);
	a = step(o, &l, t, 1, NULL, a, 0, 0, "no error as NULL, as \"\" before");

	a = step(o, &l, t2, 2, "", a, 0, 0, "a new gen whose answer says the same, the same devices");
	is_json(a, OWNS_0, "cache: ... kept (a List that changed nothing builds nothing)");
	b = step(o, &l, t3, 3, "", json_incref(a), 1, 0, "a new gen whose answer differs");
	is_json(b, "{'error': '', 'devices': {'nvidia': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'side', "
		"'resource': 'nvidia.com/gpu', 'device_ids': ['" U0 "']}]}}}", "cache: ... mapped from the new answer");
	is_int(a->refcount, 1, "cache: the old object: the table let its reference go");
	json_decref(a);
	a = step(o, &l, t2, 4, "", b, 1, 0, "the first answer again");
	is_json(a, OWNS_0, "cache: ... mapped again");

	snprintf(l.d[0].uuid, sizeof(l.d[0].uuid), "%s", U2);
	a = step(o, &l, t2, 2, "", a, 1, 0, "a device's uuid changed, its key seen before");
	is_json(a, "{'error': '', 'devices': {}}", "cache: ... mapped again (the answer's UUID no longer names it)");
	snprintf(l.d[0].uuid, sizeof(l.d[0].uuid), "%s", U0);
	a = step(o, &l, t2, 2, "", a, 1, 0, "the uuid back");
	is_json(a, OWNS_0, "cache: ... mapped again");

	dev(&l, "nvidia", 2, U2, "");
	a = step(o, &l, t2, 2, "", a, 1, 1, "a device never seen before added");
	a = step(o, &l, t2, 2, "", a, 0, 0, "nothing changed since");
	l.n--;
	a = step(o, &l, t2, 2, "", a, 1, 0, "a device gone");
	dev(&l, "nvidia", 2, U2, "");
	a = step(o, &l, t2, 2, "", a, 1, 0, "a device seen before back");

	a = step(o, &l, t2, 2, "pod-resources: List: deadline exceeded", a, 1, 0, "a new error");
	is_json(a,
		"{'error': 'pod-resources: List: deadline exceeded', 'devices': {'nvidia': {'0': [{'namespace': 'ml', "
		"'pod': 'train', 'container': 'main', 'resource': 'nvidia.com/gpu', 'device_ids': ['" U0 "']}]}}}",
		"cache: ... with the error");
	a = step(o, &l, t2, 2, "pod-resources: List: deadline exceeded", a, 0, 0, "the same error again");
	a = step(o, &l, t2, 2, "", a, 1, 0, "the error gone");
	is_json(a, OWNS_0, "cache: ... with no error");

	/* The key of a type is not another type's: amdgpu "0" is new though nvidia "0" was seen. */
	dev(&l, "amdgpu", 0, A0, "0000:43:00.0");
	b = step(o, &l, t2, 2, "", json_incref(a), 1, 1, "amdgpu \"0\" after nvidia \"0\"");
	is_int(a->refcount, 1, "cache: an object replaced is the caller's alone");
	json_decref(a);
	json_decref(b);

	podres_table_free(t);
	podres_table_free(t2);
	podres_table_free(t3);
	owners_free(o);
	dev_list_free(&l);
}

/* ---- logging --------------------------------------------------------------------------------------- */

#define GHOST_NV "pod-resources: resource nvidia.com/gpu GPU-ffff (pod ml/ghost, container c) names no nvidia device"
#define GHOST_DRA                                                                                               \
	"pod-resources: DRA driver gpu.nvidia.com gpu-7 (pod ml/ghost, container c) names no nvidia device"

static void test_log_once(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	struct podres_table *t1 = list_of(
		ROWS(DEV("ml", "ghost", "c", "nvidia.com/gpu", "GPU-ffff"),
		     CLAIM("ml", "ghost", "c", "claim-a", "ml", "gpu.nvidia.com", "node-1", "gpu-7"),
		     DEV("ml", "rdma", "c", "rdma/hca", "mlx5_0"),
		     DEV("ml", "amd", "c", "amd.com/gpu", "0000:99:00.0"),
		     DEV("ml", "nrn", "c", "aws.amazon.com/neuroncore", "12"),
		     CLAIM("ml", "intel", "c", "claim-b", "ml", "gpu.intel.com", "node-1", "gpu-9"),
		     DEV("ml", "train", "main", "nvidia.com/gpu", U0, "1::4"),
		     CLAIM("ml", "train", "main", "claim-c", "ml", "gpu.nvidia.com", "node-1", "gpu-1")));
	struct podres_table *t2 = list_of(
		ROWS(DEV("ml", "ghost-2", "d", "nvidia.com/gpu", "GPU-ffff", "GPU-eeee"),
		     CLAIM("ml", "ghost-2", "d", "claim-d", "ml", "gpu.nvidia.com", "node-1", "gpu-7"),
		     DEV("ml", "rdma", "c", "rdma/hca", "mlx5_0")));
	char text[8192];
	json_t *a;
	int fresh;

	dev(&l, "nvidia", 0, U0, "");
	dev(&l, "nvidia", 1, U1, "");
	capture_start();
	json_decref(owners_report(o, l.d, l.n, t1, 1, NULL, NULL, "", &fresh));
	json_decref(owners_report(o, l.d, l.n, t2, 2, NULL, NULL, "", &fresh));
	json_decref(owners_report(o, l.d, l.n, t1, 3, NULL, NULL, "", &fresh));
	json_decref(owners_report(o, l.d, l.n, t2, 4, NULL, NULL, "", &fresh));
	capture_end(text, sizeof(text));
	is_int(lines_with(text, GHOST_NV), 1, "log: an nvidia.com id of no device, logged once over four answers");
	is_int(lines_with(text, "GPU-ffff"), 1, "log: ... even when another pod holds it");
	is_int(lines_with(text, GHOST_DRA), 1, "log: a gpu.nvidia.com DRA device of no GPU, logged once");
	is_int(lines_with(text, "gpu-7"), 1, "log: ... even when another claim holds it");
	is_int(lines_with(text, "nvidia.com/gpu GPU-eeee (pod ml/ghost-2, container d)"), 1,
	       "log: a new id of no device in a later answer is logged");
	is_int(lines_with(text, "mlx5_0"), 0, "log: an unmapped resource's id (rdma/hca) is not");
	is_int(lines_with(text, "0000:99:00.0"), 0, "log: amd.com with no AMD device reported is not");
	is_int(lines_with(text, "neuroncore"), 0, "log: aws.amazon.com/neuroncore with no Neuron device reported is not");
	is_int(lines_with(text, "gpu.intel.com"), 0, "log: another DRA driver's device is not");
	is_int(lines_with(text, "ml/train"), 0, "log: ids that name a device are not");
	is_int(lines_with(text, "names no"), 3, "log: three lines in all");
	if (lines_with(text, "names no") != 3)
		fprintf(stderr, "# logged:\n%s", text);

	dev(&l, "amdgpu", 0, A0, "0000:43:00.0");
	dev(&l, "neuron", 0, "", "")->cores = 2;
	capture_start();
	a = owners_report(o, l.d, l.n, t1, 5, NULL, NULL, "", &fresh);
	json_decref(owners_report(o, l.d, l.n, t2, 6, NULL, NULL, "", &fresh));
	capture_end(text, sizeof(text));
	is_int(lines_with(text, "pod-resources: resource amd.com/gpu 0000:99:00.0 (pod ml/amd, container c) names no "
				"amdgpu device"),
	       1, "log: the amd.com id once an AMD device is reported");
	is_int(lines_with(text, "pod-resources: resource aws.amazon.com/neuroncore 12 (pod ml/nrn, container c) names "
				"no neuron device"),
	       1, "log: the NeuronCore past the last core once a Neuron device is reported");
	is_int(lines_with(text, "names no"), 2, "log: and nothing logged before again");
	is_json(a,
		"{'error': '', 'devices': {'nvidia': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
		"'resource': 'nvidia.com/gpu', 'device_ids': ['" U0 "']}], '1': [{'namespace': 'ml', 'pod': 'train', "
		"'container': 'main', 'resource': 'nvidia.com/gpu', 'device_ids': ['1::4']}, {'namespace': 'ml', "
		"'pod': 'train', 'container': 'main', 'dra_claim_name': 'claim-c', 'dra_claim_namespace': 'ml', "
		"'dra_driver_name': 'gpu.nvidia.com', 'dra_pool_name': 'node-1', 'dra_device_name': 'gpu-1'}]}}}",
		"log: the answer's mapped ids beside them: a plugin's and a claim's owner of one GPU");
	json_decref(a);
	podres_table_free(t1);
	podres_table_free(t2);
	owners_free(o);
	dev_list_free(&l);
}

/*
 * The source's error cut in the middle of a character (podres keeps 511
 * bytes of "pod-resources <socket> <method>: <the server's grpc-message>"):
 * the report still says it, the cut byte replaced, and the next call with
 * nothing changed hands the same object out again.
 */
static void test_error_cut(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	char err[512], want[1200];
	size_t n;
	json_t *a, *b;
	int fresh;

	n = (size_t)snprintf(err, sizeof(err), "pod-resources /run/kubelet.sock /v1.PodResourcesLister/List: gRPC "
						"status 13 (INTERNAL): ");
	while (n + 2 < sizeof(err) - 1) {
		memcpy(err + n, "\xc3\xa9", 2); /* é */
		n += 2;
	}
	err[n++] = (char)0xc3; /* the first byte of one more, the second cut off */
	err[n] = 0;
	dev(&l, "nvidia", 0, U0, "");
	a = owners_report(o, l.d, l.n, NULL, 0, NULL, NULL, err, &fresh);
	err[n - 1] = '?';
	snprintf(want, sizeof(want), "{'error': '%s', 'devices': {}}", err);
	err[n - 1] = (char)0xc3;
	is_json(a, want, "an error cut inside a character: reported, the stray byte as '?'");
	b = owners_report(o, l.d, l.n, NULL, 0, NULL, NULL, err, &fresh);
	ok(b == a, "... and the same object the next time");
	json_decref(a);
	json_decref(b);
	owners_free(o);
	dev_list_free(&l);
}

/* The node's allocatable ids checked against the devices: one of a mapped kind that names none logged once. */
static void test_allocatable(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	struct podres_table *t, *t2, *t3, *t4;
	char text[4096];

	nvidia_fleet(&l);
	t = allocatable_of(ROWS(DEV(NULL, NULL, NULL, "nvidia.com/gpu", U0, "1", U20 "::2", "GPU-nowhere"),
				DEV(NULL, NULL, NULL, "amd.com/gpu", "0000:43:00.0"),
				DEV(NULL, NULL, NULL, "rdma/hca", "mlx5_0")));
	t2 = allocatable_of(ROWS(DEV(NULL, NULL, NULL, "nvidia.com/gpu", "GPU-nowhere", "GPU-elsewhere")));
	capture_start();
	owners_check_allocatable(o, l.d, l.n, t);
	owners_check_allocatable(o, l.d, l.n, t);
	owners_check_allocatable(o, l.d, l.n, NULL);
	capture_end(text, sizeof(text));
	ok(strstr(text, "pod-resources: the kubelet can allocate resource nvidia.com/gpu GPU-nowhere, which names no "
			"nvidia device this monitor reports") && !strstr(strstr(text, "GPU-nowhere") + 1, "GPU-nowhere"),
	   "an allocatable id of no device is logged once, however often the answer is checked");
	ok(!strstr(text, U0) && !strstr(text, "::2") && !strstr(text, "mlx5_0") && !strstr(text, "amd.com"),
	   "... not the ids of devices, other kinds' (rdma/hca) or a kind not reported (amd.com)");
	capture_start();
	owners_check_allocatable(o, l.d, l.n, t2);
	capture_end(text, sizeof(text));
	ok(strstr(text, "GPU-elsewhere") && !strstr(text, "GPU-nowhere"), "a new answer: only its new id is logged");
	/* An id with a terminal escape and a byte that is not UTF-8: quoted, and still once. */
	t3 = allocatable_of(ROWS(DEV(NULL, NULL, NULL, "nvidia.com/gpu", "GPU-\033[31mred\377")));
	t4 = allocatable_of(ROWS(DEV(NULL, NULL, NULL, "nvidia.com/gpu", "GPU-\033[31mred\377")));
	capture_start();
	owners_check_allocatable(o, l.d, l.n, t3);
	owners_check_allocatable(o, l.d, l.n, t4);
	capture_end(text, sizeof(text));
	ok(strstr(text, "GPU-\\u001b[31mred") && !strchr(text, '\033'), "an id's control characters are escaped");
	ok(strstr(text, "red") && !strstr(strstr(text, "red") + 1, "red"), "... and an id that is not UTF-8 is logged once");
	podres_table_free(t3);
	podres_table_free(t4);
	podres_table_free(t);
	podres_table_free(t2);
	owners_free(o);
	dev_list_free(&l);
}

/* struct owner_pods' uid over a test's answer: "ml/train" has uid_train's UID, other pods none. */
static const char *uid_train;

static const char *test_uid(void *ud, const char *ns, const char *pod)
{
	(void)ud;
	return !strcmp(ns, "ml") && !strcmp(pod, "train") ? uid_train : NULL;
}

/*
 * The owners' pods' UIDs come from who knows the pods (struct owner_pods),
 * typed, as the object is made; an answer that changes makes it again;
 * owners_pods lists each pod the owners name once.
 */
static void test_pod_uid(void)
{
	struct dev_list l = { 0 };
	struct owners *o = owners_new();
	struct podres_table *t = list_of(ROWS(DEV("ml", "train", "main", "nvidia.com/gpu", U0),
					      DEV("ml", "train", "side", "nvidia.com/gpu", U1),
					      DEV("dev", "nb", "main", "nvidia.com/gpu", U1)));
	const struct owner_pods pods = { test_uid, NULL };
	const struct owner_pod *op;
	json_t *a, *b;
	size_t n;
	int fresh;

	dev(&l, "nvidia", 0, U0, "");
	dev(&l, "nvidia", 1, U1, "");
	uid_train = "u-train";
	a = owners_report(o, l.d, l.n, t, 1, NULL, &pods, "", &fresh);
	is_json(a, "{'error': '', 'devices': {'nvidia': {'0': [{'namespace': 'ml', 'pod': 'train', 'container': 'main', "
		"'resource': 'nvidia.com/gpu', 'device_ids': ['" U0 "'], 'pod_uid': 'u-train'}], "
		"'1': [{'namespace': 'ml', 'pod': 'train', 'container': 'side', 'resource': 'nvidia.com/gpu', "
		"'device_ids': ['" U1 "'], 'pod_uid': 'u-train'}, {'namespace': 'dev', 'pod': 'nb', 'container': 'main', "
		"'resource': 'nvidia.com/gpu', 'device_ids': ['" U1 "']}]}}}",
		"pod_uid: the known pod's owners have its UID, the unknown one none");
	op = owners_pods(o, &n);
	ok(n == 2 && !strcmp(op[0].ns, "ml") && !strcmp(op[0].pod, "train") && !strcmp(op[1].ns, "dev") &&
		   !strcmp(op[1].pod, "nb"),
	   "owners_pods: each pod the owners name, once, in order");
	b = owners_report(o, l.d, l.n, t, 1, NULL, &pods, "", &fresh);
	ok(a == b, "pod_uid: the same UIDs: the same object");
	json_decref(b);
	uid_train = "u-train-2";
	b = owners_report(o, l.d, l.n, t, 1, NULL, &pods, "", &fresh);
	ok(a != b && !strcmp(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(
					json_object_get(b, "devices"), "nvidia"), "0"), 0), "pod_uid")), "u-train-2"),
	   "pod_uid: a UID that changed makes the object again");
	json_decref(b);
	uid_train = NULL;
	b = owners_report(o, l.d, l.n, t, 1, NULL, &pods, "", &fresh);
	{
		char *d = json_dumps(b, JSON_COMPACT);

		ok(d && !strstr(d, "pod_uid"), "pod_uid: a pod no longer known: none");
		free(d);
	}
	json_decref(b);
	json_decref(a);
	podres_table_free(t);
	owners_free(o);
	dev_list_free(&l);
}

int main(void)
{
	log_init("test_owners", LOG_LVL_SILENT); /* the mapping cases' ids of no device; test_log_once reads them */
	test_nvidia();
	test_nvidia_dra();
	test_other_vendor();
	test_amd();
	test_neuron();
	test_unmapped_kinds();
	test_error();
	test_no_pod();
	test_cache();
	test_pod_uid();
	test_log_once();
	test_error_cut();
	test_allocatable();
	return done_testing();
}
