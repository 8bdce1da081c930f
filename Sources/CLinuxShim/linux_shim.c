#define _GNU_SOURCE
#include "linux_shim.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <linux/tcp.h>
#include <unistd.h>

int uplinkd_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int uplinkd_pipe2(int fds[2], int flags) {
    return pipe2(fds, flags);
}

int uplinkd_accept4(int fd, int flags) {
    return accept4(fd, NULL, NULL, flags);
}

int uplinkd_tcp_totals(int fd, struct uplinkd_tcp_totals *totals) {
    struct tcp_info info;
    socklen_t length = sizeof info;
    memset(&info, 0, sizeof info);
    if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return -1;
    if (length < offsetof(struct tcp_info, tcpi_bytes_retrans)) {
        errno = ENOTSUP;
        return -1;
    }
    struct sockaddr_storage local;
    socklen_t local_length = sizeof local;
    int ipv6 = getsockname(fd, (struct sockaddr *)&local, &local_length) == 0 && local.ss_family == AF_INET6;
    unsigned int header = (ipv6 ? 40 : 20) + 20 + ((info.tcpi_options & TCPI_OPT_TIMESTAMPS) ? 12 : 0);
    /* A SYN carries 8 more option bytes (MSS, SACK permitted, window scale) than the
     * segments after it; both directions sent one if the connection was made. */
    unsigned int syn_options = info.tcpi_segs_in > 0 ? 8 : 0;
    totals->ip_bytes_sent = info.tcpi_bytes_sent + (unsigned long long)info.tcpi_segs_out * header + 8;
    totals->ip_bytes_received = info.tcpi_bytes_received + (unsigned long long)info.tcpi_segs_in * header + syn_options;
    totals->segments_sent = info.tcpi_segs_out;
    totals->segments_received = info.tcpi_segs_in;
    totals->header_bytes = header;
    totals->rtt_us = info.tcpi_rtt;
    return 0;
}

long uplinkd_send_datagram(int fd, const char *path, size_t path_length,
                           const void *data, size_t length) {
    struct sockaddr_un address;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (path_length == 0 || path_length >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(address.sun_path, path, path_length);
    if (address.sun_path[0] == '@')
        address.sun_path[0] = 0;
    socklen_t address_length = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + path_length);
    /* MSG_DONTWAIT: a full queue at systemd's end must never block the event loop. */
    return (long)sendto(fd, data, length, MSG_NOSIGNAL | MSG_DONTWAIT, (const struct sockaddr *)&address, address_length);
}

int uplinkd_clock_synchronised(void) {
    struct timex query;
    memset(&query, 0, sizeof query);
    int state = adjtimex(&query);
    if (state == -1) return -1;
    return state != TIME_ERROR && !(query.status & STA_UNSYNC);
}
