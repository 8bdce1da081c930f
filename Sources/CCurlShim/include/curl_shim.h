/*
 * The libcurl shim of uplinkd: typed, non-variadic wrappers for curl_easy_setopt,
 * curl_easy_getinfo and curl_multi_setopt (variadic, so Swift cannot call them), one
 * per argument type, and the one share object uplinkd needs. Each only forwards.
 */
#ifndef UPLINKD_CURL_SHIM_H
#define UPLINKD_CURL_SHIM_H

#include <curl/curl.h>

typedef size_t (*uplinkd_write_callback)(char *data, size_t size, size_t count, void *user);
typedef int (*uplinkd_socket_callback)(CURL *easy, curl_socket_t fd, int what, void *user, void *socket_user);
typedef int (*uplinkd_timer_callback)(CURLM *multi, long timeout_ms, void *user);
typedef curl_socket_t (*uplinkd_open_socket_callback)(void *user, curlsocktype purpose, struct curl_sockaddr *address);
typedef int (*uplinkd_close_socket_callback)(void *user, curl_socket_t fd);

/* curl_global_init, with TLS (OpenSSL, libcurl's backend) set up in full only when
 * tls_due is non-zero: without it the process must make no TLS connection. */
CURLcode uplinkd_global_init(int tls_due);

CURLcode uplinkd_easy_set_long(CURL *easy, CURLoption option, long value);
CURLcode uplinkd_easy_set_string(CURL *easy, CURLoption option, const char *value);
CURLcode uplinkd_easy_set_pointer(CURL *easy, CURLoption option, void *value);
CURLcode uplinkd_easy_set_slist(CURL *easy, CURLoption option, struct curl_slist *value);
CURLcode uplinkd_easy_set_write_callback(CURL *easy, uplinkd_write_callback callback, void *user);
/* Who opens and closes the transfer's sockets (to read TCP_INFO before the close).
 * libcurl keeps close_user with the connection, which can outlive the easy handle. */
CURLcode uplinkd_easy_set_socket_callbacks(CURL *easy, uplinkd_open_socket_callback open_socket, void *open_user,
                                           uplinkd_close_socket_callback close_socket, void *close_user);

CURLcode uplinkd_easy_get_long(CURL *easy, CURLINFO info, long *value);
CURLcode uplinkd_easy_get_string(CURL *easy, CURLINFO info, char **value);
CURLcode uplinkd_easy_get_offset(CURL *easy, CURLINFO info, curl_off_t *value);

CURLMcode uplinkd_multi_set_socket_callback(CURLM *multi, uplinkd_socket_callback callback, void *user);
CURLMcode uplinkd_multi_set_timer_callback(CURLM *multi, uplinkd_timer_callback callback, void *user);

/* A share object whose DNS cache is used instead of the multi handle's, so the
 * addresses pinned for one uplink (CURLOPT_RESOLVE) are never seen by another. */
CURLSH *uplinkd_share_new_dns(void);

#endif
