/*
 * The one C shim of uplinkd: typed, non-variadic wrappers for the C calls Swift
 * cannot make directly (curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt
 * are variadic; syscall() is variadic), plus the fixed option set of a c-ares
 * channel (struct ares_options with its mask is easier to get right in C). Each
 * wrapper does nothing but forward.
 */
#ifndef UPLINKD_SHIM_H
#define UPLINKD_SHIM_H

#include <curl/curl.h>
#include <ares.h>
#include <sys/types.h>
#include <sys/epoll.h>      /* not part of the Glibc module map */
#include <sys/signalfd.h>   /* likewise */
#include <signal.h>
#include <sys/eventfd.h>

typedef size_t (*uplinkd_write_callback)(char *data, size_t size, size_t count, void *user);
typedef int (*uplinkd_socket_callback)(CURL *easy, curl_socket_t fd, int what, void *user, void *socket_user);
typedef int (*uplinkd_timer_callback)(CURLM *multi, long timeout_ms, void *user);

CURLcode uplinkd_easy_set_long(CURL *easy, CURLoption option, long value);
CURLcode uplinkd_easy_set_string(CURL *easy, CURLoption option, const char *value);
CURLcode uplinkd_easy_set_pointer(CURL *easy, CURLoption option, void *value);
CURLcode uplinkd_easy_set_slist(CURL *easy, CURLoption option, struct curl_slist *value);
CURLcode uplinkd_easy_set_write_callback(CURL *easy, uplinkd_write_callback callback, void *user);

CURLcode uplinkd_easy_get_long(CURL *easy, CURLINFO info, long *value);
CURLcode uplinkd_easy_get_string(CURL *easy, CURLINFO info, char **value);
CURLcode uplinkd_easy_get_offset(CURL *easy, CURLINFO info, curl_off_t *value);
CURLcode uplinkd_easy_get_pointer(CURL *easy, CURLINFO info, void **value);

CURLMcode uplinkd_multi_set_socket_callback(CURLM *multi, uplinkd_socket_callback callback, void *user);
CURLMcode uplinkd_multi_set_timer_callback(CURLM *multi, uplinkd_timer_callback callback, void *user);

/* A share object whose DNS cache is used instead of the multi handle's, so the
 * addresses pinned for one uplink (CURLOPT_RESOLVE) are never seen by another. */
CURLSH *uplinkd_share_new_dns(void);

/* A c-ares channel for uplinkd's lookups: DNS only (no /etc/hosts), no search
 * domains, the given per-try timeout and tries, sockets reported through
 * sock_state_cb. Servers and the socket callback are set by the caller. */
int uplinkd_ares_channel_new(ares_channel *channel, int per_try_timeout_ms, int tries,
                             ares_sock_state_cb sock_state_cb, void *sock_state_data);

/* pidfd_open(2): lets the event loop wait for a child with poll instead of SIGCHLD games. */
int uplinkd_pidfd_open(pid_t pid);

#endif
