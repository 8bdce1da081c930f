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

/* What a channel's sockets carried, at the IP level: every datagram or segment with
 * its IP and UDP/TCP headers. */
struct uplinkd_ares_traffic {
    unsigned long long ip_bytes;
    /* The sockets seen, to know each one's family and protocol. */
    int sockets[16];
    unsigned char ipv6[16];
    unsigned char stream[16];
    int count;
};

/* Makes the channel's sockets count into `traffic` (which must outlive the channel).
 * They are created non-blocking and close-on-exec; binding to the interface stays
 * with the socket-configure callback, which c-ares still calls before connect. */
void uplinkd_ares_count_traffic(ares_channel channel, struct uplinkd_ares_traffic *traffic);

#endif
