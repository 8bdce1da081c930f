#include "curl_shim.h"

#include <openssl/ssl.h>

CURLcode uplinkd_global_init(int tls_due) {
    if (!tls_due) {
        /* libcurl's OpenSSL backend asks on its first use for OpenSSL's configuration
         * file, every cipher and digest name and the error strings; OpenSSL does each
         * once per process, as the first caller says. A process that will make no TLS
         * connection says "none of them" first, and that OpenSSL needs no clean-up at
         * exit (the kernel frees a one-shot process). */
        OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_LOAD_SSL_STRINGS
                         | OPENSSL_INIT_NO_LOAD_CRYPTO_STRINGS | OPENSSL_INIT_NO_ADD_ALL_CIPHERS
                         | OPENSSL_INIT_NO_ADD_ALL_DIGESTS | OPENSSL_INIT_NO_ATEXIT, NULL);
    }
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

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

CURLcode uplinkd_easy_set_socket_callbacks(CURL *easy, uplinkd_open_socket_callback open_socket, void *open_user,
                                           uplinkd_close_socket_callback close_socket, void *close_user) {
    CURLcode code = curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    if (code == CURLE_OK) code = curl_easy_setopt(easy, CURLOPT_OPENSOCKETDATA, open_user);
    if (code == CURLE_OK) code = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    if (code == CURLE_OK) code = curl_easy_setopt(easy, CURLOPT_CLOSESOCKETDATA, close_user);
    return code;
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

CURLSH *uplinkd_share_new_dns(void) {
    CURLSH *share = curl_share_init();
    if (share && curl_share_setopt(share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS) != CURLSHE_OK) {
        curl_share_cleanup(share);
        return NULL;
    }
    return share;
}
