/* SPDX-License-Identifier: MIT */
/*
 * The producer's HTTP helper: "accel-monitor --http-helper LEVEL", started
 * by http_async.c with a socket as its stdin and stdout. It loads libcurl
 * (http_curl_load: the producer links none), reads requests (http_wire.h)
 * and runs each with the one HTTP client (common/http.h) on its own event
 * loop (loop.h), libcurl's multi interface driven by the loop's watches
 * and timers: one multi handle per connection the producer named, so each
 * endpoint keeps its own connection alive, and a slow server delays only
 * its own answer. A "kubelet_pods" request's PodList is reduced here to
 * what the producer needs (kubelet.h), so the producer never parses it.
 *
 * It ends at the end of its input (the producer ended it, or exited); a
 * request still running then is abandoned.
 */
#ifndef ACCEL_HTTP_HELPER_H
#define ACCEL_HTTP_HELPER_H

#define HTTP_HELPER_ARG "--http-helper"

/* The helper's main: argv[1] is HTTP_HELPER_ARG, argv[2] the log level. Returns the exit status. */
int http_helper_main(int argc, char **argv);

#endif
