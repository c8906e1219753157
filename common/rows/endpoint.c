/* SPDX-License-Identifier: MIT */
/*
 * The rows of the endpoint collector (monitor/endpoint/coll_endpoint.c): the fields it writes, the
 * families it adds and the rules that map them (common/rows.h says what
 * rows are). Data only: the mapping library and the collector both read it.
 */
#include "../rows.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

static const struct family endpoint_families[] = {
	/* per model and version, and the devices a server reports on (report-format §6.5) */
	GAUGE("inference_queue_latency_seconds", "Inference queue time percentiles, seconds", "seconds"),
	GAUGE("inference_time_to_first_token_seconds", "Inference time to first token percentiles, seconds", "seconds"),
	GAUGE("inference_time_per_output_token_seconds",
	      "Inference time per output token percentiles, seconds", "seconds"),
	HISTOGRAM("accel_model_request_duration_seconds",
		  "End-to-end request time of a model version, histogram of the server's buckets, seconds", "seconds"),
	HISTOGRAM("accel_model_queue_duration_seconds",
		  "Queue time of a model version's requests, histogram of the server's buckets, seconds", "seconds"),
	HISTOGRAM("accel_model_time_to_first_token_seconds",
		  "Time to first token of a model version, histogram of the server's buckets, seconds", "seconds"),
	HISTOGRAM("accel_model_time_per_output_token_seconds",
		  "Time per output token of a model version, histogram of the server's buckets, seconds", "seconds"),
	GAUGE("inference_request_mean_seconds", "Mean request time over the period, seconds", "seconds"),
	GAUGE("inference_queue_mean_seconds", "Mean queue time per request over the period, seconds", "seconds"),
	GAUGE("inference_compute_input_mean_seconds",
	      "Mean input processing time per request over the period, seconds", "seconds"),
	GAUGE("inference_compute_infer_mean_seconds",
	      "Mean model execution time per request over the period, seconds", "seconds"),
	GAUGE("inference_compute_output_mean_seconds",
	      "Mean output processing time per request over the period, seconds", "seconds"),
	GAUGE("inference_time_to_first_token_mean_seconds",
	      "Mean time to first token over the period, seconds", "seconds"),
	GAUGE("inference_time_per_output_token_mean_seconds",
	      "Mean time per output token over the period, seconds", "seconds"),
	COUNTER("inference_request_duration_seconds_total",
	        "Request time of completed requests, cumulative, seconds", "seconds"),
	COUNTER("inference_queue_duration_seconds_total",
	        "Queue time of completed requests, cumulative, seconds", "seconds"),
	COUNTER("inference_compute_input_duration_seconds_total",
	        "Input processing time of completed requests, cumulative, seconds", "seconds"),
	COUNTER("inference_compute_infer_duration_seconds_total",
	        "Model execution time of completed requests, cumulative, seconds", "seconds"),
	COUNTER("inference_compute_output_duration_seconds_total",
	        "Output processing time of completed requests, cumulative, seconds", "seconds"),
	GAUGE("inference_requests_in_flight", "Requests being executed at the latest scrape", "count"),
	GAUGE("inference_requests_pending", "Requests waiting in the server's queue at the latest scrape", "count"),
	GAUGE("inference_batch_size", "Mean inferences per model execution over the period", "count"),
	COUNTER("inference_tokens_total", "Prompt and generated tokens", "count"),
	GAUGE("inference_kv_cache_usage_ratio", "KV-cache blocks in use at the latest scrape, as a ratio", "ratio"),
	GAUGE("inference_server_device_utilization_ratio",
	      "Utilization of a device the inference server reports on, as a ratio", "ratio"),
	GAUGE("inference_server_device_memory_used_bytes",
	      "Memory used on a device the inference server reports on, bytes", "bytes"),
	GAUGE("inference_server_device_memory_total_bytes",
	      "Memory total of a device the inference server reports on, bytes", "bytes"),
	GAUGE("inference_server_device_power_watts",
	      "Power draw of a device the inference server reports on, watts", "watts"),
	GAUGE("inference_server_device_power_limit_watts",
	      "Power limit of a device the inference server reports on, watts", "watts"),
	GAUGE("inference_server_device_temperature_celsius",
	      "Temperature of a device the inference server reports on, degrees Celsius", "celsius"),
	COUNTER("inference_server_device_energy_joules_total",
	        "Energy consumed by a device the inference server reports on, joules", "joules"),
	/* energy per model (docs/energy.md) */
	COUNTER("inference_server_energy_joules_total",
		"Accelerator energy of the inference server's processes or devices, joules", "joules"),
	COUNTER("inference_energy_joules_total", "Accelerator energy attributed to a model version, joules",
		"joules"),
	GAUGE("inference_energy_per_request_joules",
	      "Accelerator energy per completed request of a model version over the period, joules", "joules"),
	GAUGE("inference_tokens_per_joule",
	      "Generated tokens per joule of accelerator energy of a model version over the period", ""),
};

/* One model version's field, labelled model and version (report-format §6.5). */
#define MODEL_RULE(field, family, labels) \
	{ SC_RUNTIME, "execution_stats", "models.*.*." field, family, "model,version" labels, NULL, 0, 0 }
/* A mean per request times that model version's completed requests: a cumulative duration (a counter). */
#define DURATION_RULE(phase, family)                                                                       \
	{ SC_RUNTIME, "execution_stats", "models.*.*.mean_seconds." phase, family, "model,version", NULL, 0, 0, \
	  .weight = "execution_summary.completed" }
/* A device the server reports on (its own GPU metrics), labelled by its id. */
#define SERVER_DEVICE_RULE(field, family) \
	{ SC_RUNTIME, "execution_stats", "server_devices.*." field, family, "device", NULL, 0, 0 }

static const struct map_rule endpoint_rules[] = {
	/* TorchServe's host-level HTTP errors are in no model: kept at runtime level next to the models' (the
	 * runtime-level sums, without models, are common's: neuron-monitor's execution_stats has them too) */
	{ SC_RUNTIME, "execution_stats", "error_summary.{http_4xx,http_5xx}", "execution_errors_total", "error_type",
	  NULL, 0, 0, .only_with = "models" },
	/* per model and version (report-format §6.5) */
	MODEL_RULE("execution_summary.*", "execution_status_total", ",status_type"),
	MODEL_RULE("error_summary.*", "execution_errors_total", ",error_type"),
	MODEL_RULE("latency_stats.total_latency.*", "execution_latency_seconds", ",percentile"),
	MODEL_RULE("latency_stats.queue.*", "inference_queue_latency_seconds", ",percentile"),
	MODEL_RULE("latency_stats.time_to_first_token.*", "inference_time_to_first_token_seconds", ",percentile"),
	MODEL_RULE("latency_stats.time_per_output_token.*", "inference_time_per_output_token_seconds", ",percentile"),
	/* the period's buckets ("latency_histograms": true); the runtime-level merged one is their sum: not mapped */
	MODEL_RULE("latency_histograms.total_latency", "accel_model_request_duration_seconds", ""),
	MODEL_RULE("latency_histograms.queue", "accel_model_queue_duration_seconds", ""),
	MODEL_RULE("latency_histograms.time_to_first_token", "accel_model_time_to_first_token_seconds", ""),
	MODEL_RULE("latency_histograms.time_per_output_token", "accel_model_time_per_output_token_seconds", ""),
	MODEL_RULE("mean_seconds.request", "inference_request_mean_seconds", ""),
	MODEL_RULE("mean_seconds.queue", "inference_queue_mean_seconds", ""),
	MODEL_RULE("mean_seconds.compute_input", "inference_compute_input_mean_seconds", ""),
	MODEL_RULE("mean_seconds.compute_infer", "inference_compute_infer_mean_seconds", ""),
	MODEL_RULE("mean_seconds.compute_output", "inference_compute_output_mean_seconds", ""),
	MODEL_RULE("mean_seconds.time_to_first_token", "inference_time_to_first_token_mean_seconds", ""),
	MODEL_RULE("mean_seconds.time_per_output_token", "inference_time_per_output_token_mean_seconds", ""),
	DURATION_RULE("request", "inference_request_duration_seconds_total"),
	DURATION_RULE("queue", "inference_queue_duration_seconds_total"),
	DURATION_RULE("compute_input", "inference_compute_input_duration_seconds_total"),
	DURATION_RULE("compute_infer", "inference_compute_infer_duration_seconds_total"),
	DURATION_RULE("compute_output", "inference_compute_output_duration_seconds_total"),
	MODEL_RULE("requests_in_flight", "inference_requests_in_flight", ""),
	MODEL_RULE("requests_pending", "inference_requests_pending", ""),
	MODEL_RULE("batch_size", "inference_batch_size", ""),
	MODEL_RULE("tokens.{prompt,generation}", "inference_tokens_total", ",kind"),
	MODEL_RULE("kv_cache_usage_ratio", "inference_kv_cache_usage_ratio", ""),
	SERVER_DEVICE_RULE("utilization_ratio", "inference_server_device_utilization_ratio"),
	SERVER_DEVICE_RULE("memory_used_bytes", "inference_server_device_memory_used_bytes"),
	SERVER_DEVICE_RULE("memory_total_bytes", "inference_server_device_memory_total_bytes"),
	SERVER_DEVICE_RULE("power_watts", "inference_server_device_power_watts"),
	SERVER_DEVICE_RULE("power_limit_watts", "inference_server_device_power_limit_watts"),
	SERVER_DEVICE_RULE("temperature_celsius", "inference_server_device_temperature_celsius"),
	SERVER_DEVICE_RULE("energy_joules", "inference_server_device_energy_joules_total"),
	/* energy per model (docs/energy.md) */
	{ SC_RUNTIME, "execution_stats", "energy_joules", "inference_server_energy_joules_total", "", NULL, 0, 0 },
	MODEL_RULE("energy_joules", "inference_energy_joules_total", ""),
	MODEL_RULE("energy_per_request_joules", "inference_energy_per_request_joules", ""),
	MODEL_RULE("tokens_per_joule", "inference_tokens_per_joule", ""),
};
#undef MODEL_RULE
#undef DURATION_RULE
#undef SERVER_DEVICE_RULE

const struct map_rows endpoint_rows = {
	"endpoint", __FILE__, ROWS_FAMILIES(endpoint_families), ROWS_RULES(endpoint_rules),
};
