/*
 * The Linux system-call shim of uplinkd: the headers Swift's Glibc module map leaves
 * out (epoll, signalfd, eventfd), a typed wrapper for pidfd_open, which glibc 2.36
 * offers only through the variadic syscall(), and pipe2. Nothing here but forwarding.
 */
#ifndef UPLINKD_LINUX_SHIM_H
#define UPLINKD_LINUX_SHIM_H

#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/eventfd.h>
#include <signal.h>

/* pidfd_open(2): lets the event loop wait for a child with epoll instead of SIGCHLD. */
int uplinkd_pidfd_open(pid_t pid);

/* pipe2(2), which glibc declares only under _GNU_SOURCE (not set for Swift's Glibc). */
int uplinkd_pipe2(int fds[2], int flags);

#endif
