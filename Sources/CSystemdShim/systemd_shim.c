#include "systemd_shim.h"
#include <time.h>

int64_t uplinkd_bus_timeout_milliseconds(sd_bus *bus) {
    uint64_t deadline = 0;
    int code = sd_bus_get_timeout(bus, &deadline);
    if (code < 0) return code;
    if (deadline == UINT64_MAX) return -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    if (deadline <= current) return 0;
    return (int64_t)((deadline - current + 999) / 1000);
}
