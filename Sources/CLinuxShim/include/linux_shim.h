/*
 * The Linux system-call shim of uplinkd: the headers Swift's Glibc module map leaves
 * out (epoll, signalfd, eventfd), a typed wrapper for pidfd_open, which glibc 2.36
 * offers only through the variadic syscall(), and pipe2; and two helpers whose
 * structs are awkward from Swift: a TCP socket's bytes at the IP level (TCP_INFO) and
 * one datagram to a unix socket (sd_notify).
 */
#ifndef UPLINKD_LINUX_SHIM_H
#define UPLINKD_LINUX_SHIM_H

#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <signal.h>
#include <sys/socket.h>

/* SOCK_CLOEXEC, SOCK_DGRAM, SOCK_STREAM and SOCK_NONBLOCK are enum values behind macros that Swift does not
 * import the same way in every build. */
enum { UPLINKD_SOCK_CLOEXEC = SOCK_CLOEXEC, UPLINKD_SOCK_DGRAM = SOCK_DGRAM, UPLINKD_SOCK_STREAM = SOCK_STREAM,
       UPLINKD_SOCK_NONBLOCK = SOCK_NONBLOCK };

/* pidfd_open(2): lets the event loop wait for a child with epoll instead of SIGCHLD. */
int uplinkd_pidfd_open(pid_t pid);

/* pipe2(2), which glibc declares only under _GNU_SOURCE (not set for Swift's Glibc). */
int uplinkd_pipe2(int fds[2], int flags);

/* accept4(2) without the peer's address, for the same reason: the agent's MQTT relay
 * accepts its one client non-blocking and close-on-exec in one call. */
int uplinkd_accept4(int fd, int flags);

/* What a TCP socket carried at the IP level, from TCP_INFO: payload bytes (sent ones
 * with retransmissions) plus every segment's IP and TCP headers (options included) and
 * the SYN options. glibc's struct tcp_info stops before the byte counters, so the
 * kernel's own <linux/tcp.h> is read in the .c file only. */
struct uplinkd_tcp_totals {
    unsigned long long ip_bytes_sent;
    unsigned long long ip_bytes_received;
    unsigned int segments_sent;
    unsigned int segments_received;
    /* Bytes of IP and TCP headers of one segment on this socket (52, 72, 40 or 60). */
    unsigned int header_bytes;
    /* Smoothed round-trip time, microseconds. */
    unsigned int rtt_us;
};

/* 0 on success; -1 with errno set (not a TCP socket, or a kernel older than 4.19
 * without the byte counters: errno ENOTSUP). */
int uplinkd_tcp_totals(int fd, struct uplinkd_tcp_totals *totals);

/* Sends one datagram to a unix socket named by path (a leading '@' names an abstract
 * socket, as NOTIFY_SOCKET does): sockaddr_un is awkward to fill from Swift.
 * Returns the bytes sent, or -1 with errno set (ENAMETOOLONG for an overlong path). */
long uplinkd_send_datagram(int fd, const char *path, size_t path_length,
                           const void *data, size_t length);

/* Whether the kernel holds the wall clock synchronised (adjtimex(2) without changing
 * anything: not TIME_ERROR, STA_UNSYNC clear), as an NTP client such as
 * systemd-timesyncd or chrony leaves it. 1 synchronised, 0 not, -1 with errno set. */
int uplinkd_clock_synchronised(void);

#endif
