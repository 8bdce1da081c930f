/*
 * The one C shim of uplinkd: typed, non-variadic wrappers for the C calls Swift
 * cannot make directly (curl_easy_setopt, curl_easy_getinfo and curl_multi_setopt
 * are variadic; syscall() is variadic). Each wrapper does nothing but forward.
 */
#ifndef UPLINKD_SHIM_H
#define UPLINKD_SHIM_H

#include <curl/curl.h>
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

/* pidfd_open(2): lets the event loop wait for a child with poll instead of SIGCHLD games. */
int uplinkd_pidfd_open(pid_t pid);

#endif
