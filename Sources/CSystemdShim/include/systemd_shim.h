/*
 * The sd-bus shim of uplinkd. sd-bus's calls are all non-variadic and Swift calls them
 * by their own names; systemd_shim.c defines those it uses, loading libsystemd when the
 * system bus is first opened (see there). This adds what Swift cannot read from the
 * headers: the type codes, which are character macros, and the bus's next deadline as
 * a delay from now.
 */
#ifndef UPLINKD_SYSTEMD_SHIM_H
#define UPLINKD_SYSTEMD_SHIM_H

#include <stdint.h>
#include <systemd/sd-bus.h>

/* D-Bus type codes (SD_BUS_TYPE_*). */
enum {
    UPLINKD_BUS_BYTE = 'y', UPLINKD_BUS_BOOLEAN = 'b', UPLINKD_BUS_INT16 = 'n', UPLINKD_BUS_UINT16 = 'q',
    UPLINKD_BUS_INT32 = 'i', UPLINKD_BUS_UINT32 = 'u', UPLINKD_BUS_INT64 = 'x', UPLINKD_BUS_UINT64 = 't',
    UPLINKD_BUS_DOUBLE = 'd', UPLINKD_BUS_STRING = 's', UPLINKD_BUS_OBJECT_PATH = 'o',
    UPLINKD_BUS_SIGNATURE = 'g', UPLINKD_BUS_UNIX_FD = 'h', UPLINKD_BUS_ARRAY = 'a', UPLINKD_BUS_VARIANT = 'v',
    UPLINKD_BUS_STRUCT = 'r', UPLINKD_BUS_DICT_ENTRY = 'e',
};

/* Milliseconds until the bus wants processing again (rounded up), -1 for never, or a
 * negative errno. sd_bus_get_timeout() answers in absolute CLOCK_MONOTONIC time. */
int64_t uplinkd_bus_timeout_milliseconds(sd_bus *bus);

#endif
