#include "ares_shim.h"

#include <stddef.h>

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
