/*
 * The c-ares shim of uplinkd: the fixed option set of a lookup channel, since
 * struct ares_options with its option mask is easier to get right in C.
 */
#ifndef UPLINKD_ARES_SHIM_H
#define UPLINKD_ARES_SHIM_H

#include <ares.h>

/* A c-ares channel for uplinkd's lookups: DNS only (no /etc/hosts), no search
 * domains, the given per-try timeout and tries, sockets reported through
 * sock_state_cb. Servers and the socket callback are set by the caller. */
int uplinkd_ares_channel_new(ares_channel *channel, int per_try_timeout_ms, int tries,
                             ares_sock_state_cb sock_state_cb, void *sock_state_data);

#endif
