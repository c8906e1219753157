/* SPDX-License-Identifier: MIT */
/*
 * The libcurl function table (http.h) of a program that links libcurl: the
 * only file that names libcurl's symbols, so a program that never calls
 * http_curl_linked() (accel-monitor) links no libcurl.
 */
#include "http.h"

const struct http_curl *http_curl_linked(void)
{
	static const struct http_curl api = {
		.global_init = curl_global_init,
		.global_cleanup = curl_global_cleanup,
		.easy_init = curl_easy_init,
		.easy_reset = curl_easy_reset,
		.easy_setopt = curl_easy_setopt,
		.easy_getinfo = curl_easy_getinfo,
		.easy_perform = curl_easy_perform,
		.easy_cleanup = curl_easy_cleanup,
		.easy_strerror = curl_easy_strerror,
		.slist_append = curl_slist_append,
		.slist_free_all = curl_slist_free_all,
		.multi_init = curl_multi_init,
		.multi_setopt = curl_multi_setopt,
		.multi_add_handle = curl_multi_add_handle,
		.multi_remove_handle = curl_multi_remove_handle,
		.multi_socket_action = curl_multi_socket_action,
		.multi_info_read = curl_multi_info_read,
		.multi_assign = curl_multi_assign,
		.multi_cleanup = curl_multi_cleanup,
		.share_init = curl_share_init,
		.share_setopt = curl_share_setopt,
		.share_cleanup = curl_share_cleanup,
	};

	return &api;
}
