/*
 * The c-ares shim of uplinkd: the fixed option set of a lookup channel, since
 * struct ares_options with its option mask is easier to get right in C.
 */
#ifndef UPLINKD_ARES_SHIM_H
#define UPLINKD_ARES_SHIM_H

#include <ares.h>

/* c-ares's status codes as plain ints whatever the version: macros up to c-ares
 * 1.19 (Debian 12), members of the enum ares_status_t from 1.20 on (Debian 13),
 * which Swift imports as different types. Callbacks and calls hand back an int;
 * DNSFailure+CAres.swift turns it into a Swift value at the edge. */
static const int uplinkd_ares_success = ARES_SUCCESS;
static const int uplinkd_ares_enodata = ARES_ENODATA;
static const int uplinkd_ares_enotfound = ARES_ENOTFOUND;
static const int uplinkd_ares_etimeout = ARES_ETIMEOUT;
static const int uplinkd_ares_eservfail = ARES_ESERVFAIL;
static const int uplinkd_ares_erefused = ARES_EREFUSED;
static const int uplinkd_ares_ebadresp = ARES_EBADRESP;
static const int uplinkd_ares_econnrefused = ARES_ECONNREFUSED;
static const int uplinkd_ares_eformerr = ARES_EFORMERR;

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
