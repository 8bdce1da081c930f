#include "start_shim.h"

/*
 * The Swift runtime's argument vector, taken from the process's start instead of
 * /proc/self/maps.
 *
 * On Linux the static Swift runtime finds argv with a static constructor
 * (CommandLine.cpp, ArgvGrabber) that reads the whole of /proc/self/maps and parses
 * every line with sscanf to find the stack, then walks back from `environ`: a few per
 * cent of a one-shot `check` (Tests/bench/README.md, "The link").
 *
 * glibc calls the main program's constructors with (argc, argv, envp), so this one
 * keeps them (glibc only: musl calls constructors without arguments). The standard
 * library asks for them through one runtime-internal entry point,
 * `_swift_stdlib_getUnsafeArgvArgc`, defined in the runtime by CommandLine.cpp.o.
 *
 * The definition here is weak, so the linker settles which one runs:
 * - When nothing else of CommandLine.cpp.o is needed (Swift 6.3's static runtime),
 *   this definition satisfies the standard library, that archive member and its
 *   constructor stay out of the link, and this code answers.
 * - When the runtime needs that member for another symbol (a later runtime whose
 *   standard library calls more of it, such as the executable path's functions), or
 *   the runtime is a shared library (debug builds), the runtime's own strong
 *   definition is used and this code is never called: a slower start, never a
 *   failed link.
 * `uplinkd_start_shim_answered` tells which happened (`uplinkd --version` says it);
 * Tests/integration/test_start_shim.py links all three ways.
 */

static char **saved_argv;
static int saved_argc;
static int answered;

__attribute__((constructor)) static void uplinkd_keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

__attribute__((weak, swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    static char *empty[] = {0};
    answered = 1;
    if (!saved_argv) {
        *outArgLen = 0;
        return empty;
    }
    *outArgLen = saved_argc;
    return saved_argv;
}

int uplinkd_start_shim_answered(void) {
    return answered;
}
