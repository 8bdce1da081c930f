#define _GNU_SOURCE
#include "linux_shim.h"

#include <sys/syscall.h>
#include <unistd.h>

int uplinkd_pidfd_open(pid_t pid) {
    return (int)syscall(SYS_pidfd_open, pid, 0);
}

int uplinkd_pipe2(int fds[2], int flags) {
    return pipe2(fds, flags);
}
