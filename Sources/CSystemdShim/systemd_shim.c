#include "systemd_shim.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <time.h>

/*
 * libsystemd is not linked: it is loaded the first time the system bus is opened.
 * Linked, it and what it needs (libcap, libgcrypt, liblzma, liblz4, libzstd) were
 * loaded and relocated by every run of every command, about 1 ms and 1.4 MiB of a
 * one-shot `uplinkd check` that never speaks to ModemManager.
 *
 * Each sd-bus function uplinkd calls is defined here under its own name and forwards
 * to libsystemd's; the header's prototypes make the compiler check every signature.
 * sd_bus_open_system() loads the library and resolves all of them, or none (then it
 * fails with -ELIBACC, as a bus that cannot be opened); the others are only ever
 * called with a bus or message that came from an opened bus. A function called from
 * Swift without a forwarder here fails to link.
 */

#define UPLINKD_SD_BUS_FUNCTIONS(X) \
    X(sd_bus_open_system) X(sd_bus_set_description) X(sd_bus_get_fd) X(sd_bus_get_events) \
    X(sd_bus_get_timeout) X(sd_bus_process) X(sd_bus_flush_close_unref) \
    X(sd_bus_add_match) X(sd_bus_call_async) X(sd_bus_slot_unref) X(sd_bus_slot_set_destroy_callback) \
    X(sd_bus_slot_set_floating) X(sd_bus_message_new_method_call) X(sd_bus_message_unref) \
    X(sd_bus_message_set_auto_start) X(sd_bus_message_get_error) X(sd_bus_message_get_member) \
    X(sd_bus_message_get_path) X(sd_bus_message_append_basic) X(sd_bus_message_open_container) \
    X(sd_bus_message_close_container) X(sd_bus_message_peek_type) X(sd_bus_message_enter_container) \
    X(sd_bus_message_exit_container) X(sd_bus_message_read_basic)

static struct {
#define UPLINKD_POINTER(name) __typeof__(&name) name;
    UPLINKD_SD_BUS_FUNCTIONS(UPLINKD_POINTER)
#undef UPLINKD_POINTER
} real;

/* Set once by load(): 1 when every function is resolved, else 0 (the library stays
 * loaded for the process). pthread_once because the agent opens the bus on its loop
 * thread but a test process may open it from several threads at once. */
static int loaded_state;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define UPLINKD_RESOLVE(name) \
    if (!(real.name = (__typeof__(&name))dlsym(library, #name))) { dlclose(library); return; }
    UPLINKD_SD_BUS_FUNCTIONS(UPLINKD_RESOLVE)
#undef UPLINKD_RESOLVE
    loaded_state = 1;
}

static int loaded(void) {
    pthread_once(&load_once, load);
    return loaded_state;
}

int sd_bus_open_system(sd_bus **ret) {
    if (!loaded()) return -ELIBACC;
    return real.sd_bus_open_system(ret);
}
int sd_bus_set_description(sd_bus *bus, const char *description) {
    return real.sd_bus_set_description(bus, description);
}
int sd_bus_get_fd(sd_bus *bus) { return real.sd_bus_get_fd(bus); }
int sd_bus_get_events(sd_bus *bus) { return real.sd_bus_get_events(bus); }
int sd_bus_get_timeout(sd_bus *bus, uint64_t *timeout_usec) { return real.sd_bus_get_timeout(bus, timeout_usec); }
int sd_bus_process(sd_bus *bus, sd_bus_message **r) { return real.sd_bus_process(bus, r); }
sd_bus *sd_bus_flush_close_unref(sd_bus *bus) { return real.sd_bus_flush_close_unref(bus); }
int sd_bus_add_match(sd_bus *bus, sd_bus_slot **slot, const char *match, sd_bus_message_handler_t callback,
                     void *userdata) {
    return real.sd_bus_add_match(bus, slot, match, callback, userdata);
}
int sd_bus_call_async(sd_bus *bus, sd_bus_slot **slot, sd_bus_message *m, sd_bus_message_handler_t callback,
                      void *userdata, uint64_t usec) {
    return real.sd_bus_call_async(bus, slot, m, callback, userdata, usec);
}
sd_bus_slot *sd_bus_slot_unref(sd_bus_slot *slot) { return real.sd_bus_slot_unref(slot); }
int sd_bus_slot_set_destroy_callback(sd_bus_slot *s, sd_bus_destroy_t callback) {
    return real.sd_bus_slot_set_destroy_callback(s, callback);
}
int sd_bus_slot_set_floating(sd_bus_slot *slot, int b) { return real.sd_bus_slot_set_floating(slot, b); }
int sd_bus_message_new_method_call(sd_bus *bus, sd_bus_message **m, const char *destination, const char *path,
                                   const char *interface, const char *member) {
    return real.sd_bus_message_new_method_call(bus, m, destination, path, interface, member);
}
sd_bus_message *sd_bus_message_unref(sd_bus_message *m) { return real.sd_bus_message_unref(m); }
int sd_bus_message_set_auto_start(sd_bus_message *m, int b) { return real.sd_bus_message_set_auto_start(m, b); }
const sd_bus_error *sd_bus_message_get_error(sd_bus_message *m) { return real.sd_bus_message_get_error(m); }
const char *sd_bus_message_get_member(sd_bus_message *m) { return real.sd_bus_message_get_member(m); }
const char *sd_bus_message_get_path(sd_bus_message *m) { return real.sd_bus_message_get_path(m); }
int sd_bus_message_append_basic(sd_bus_message *m, char type, const void *p) {
    return real.sd_bus_message_append_basic(m, type, p);
}
int sd_bus_message_open_container(sd_bus_message *m, char type, const char *contents) {
    return real.sd_bus_message_open_container(m, type, contents);
}
int sd_bus_message_close_container(sd_bus_message *m) { return real.sd_bus_message_close_container(m); }
int sd_bus_message_peek_type(sd_bus_message *m, char *type, const char **contents) {
    return real.sd_bus_message_peek_type(m, type, contents);
}
int sd_bus_message_enter_container(sd_bus_message *m, char type, const char *contents) {
    return real.sd_bus_message_enter_container(m, type, contents);
}
int sd_bus_message_exit_container(sd_bus_message *m) { return real.sd_bus_message_exit_container(m); }
int sd_bus_message_read_basic(sd_bus_message *m, char type, void *p) { return real.sd_bus_message_read_basic(m, type, p); }

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
