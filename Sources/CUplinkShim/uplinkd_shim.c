#include "uplinkd_shim.h"

#include <sys/syscall.h>
#include <unistd.h>

CURLcode uplinkd_easy_set_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode uplinkd_easy_set_string(CURL *easy, CURLoption option, const char *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode uplinkd_easy_set_pointer(CURL *easy, CURLoption option, void *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode uplinkd_easy_set_slist(CURL *easy, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(easy, option, value);
}

CURLcode uplinkd_easy_set_write_callback(CURL *easy, uplinkd_write_callback callback, void *user) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(easy, CURLOPT_WRITEDATA, user);
}

CURLcode uplinkd_easy_get_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode uplinkd_easy_get_string(CURL *easy, CURLINFO info, char **value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode uplinkd_easy_get_offset(CURL *easy, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLcode uplinkd_easy_get_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}

CURLMcode uplinkd_multi_set_socket_callback(CURLM *multi, uplinkd_socket_callback callback, void *user) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, callback);
    if (code != CURLM_OK) return code;
    return curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, user);
}

CURLMcode uplinkd_multi_set_timer_callback(CURLM *multi, uplinkd_timer_callback callback, void *user) {
    CURLMcode code = curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, callback);
    if (code != CURLM_OK) return code;
    return curl_multi_setopt(multi, CURLMOPT_TIMERDATA, user);
}

int uplinkd_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

CURLSH *uplinkd_share_new_dns(void) {
    CURLSH *share = curl_share_init();
    if (share && curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK) {
        curl_share_cleanup(share);
        return NULL;
    }
    return share;
}

int uplinkd_ares_channel_new(ares_channel *channel, int per_try_timeout_ms, int tries,
                             ares_sock_state_cb sock_state_cb, void *sock_state_data) {
    struct ares_options options = {0};
    static char dns_only[] = "b";
    options.timeout = per_try_timeout_ms;
    options.tries = tries;
    options.flags = ARES_FLAG_NOSEARCH | ARES_FLAG_NOALIASES;
    options.lookups = dns_only;
    options.ndomains = 0;
    options.domains = NULL;
    options.sock_state_cb = sock_state_cb;
    options.sock_state_cb_data = sock_state_data;
    int mask = ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES | ARES_OPT_FLAGS | ARES_OPT_LOOKUPS | ARES_OPT_DOMAINS
             | ARES_OPT_SOCK_STATE_CB;
    return ares_init_options(channel, &options, mask);
}
