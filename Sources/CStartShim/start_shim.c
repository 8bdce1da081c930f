#include "start_shim.h"

/*
 * The Swift runtime's argument vector, taken from the process's start instead of
 * /proc/self/maps.
 *
 * On Linux the static Swift runtime finds argv with a static constructor
 * (CommandLine.cpp, ArgvGrabber) that reads the whole of /proc/self/maps and parses
 * every line with sscanf to find the stack, then walks back from `environ`. With
 * uplinkd's hundred-odd mappings that was about 3 % of a one-shot `check`'s
 * instructions, plus the kernel's work to print the file.
 *
 * glibc calls the main program's constructors with (argc, argv, envp), so this one
 * keeps them (glibc only: musl calls constructors without arguments). The standard
 * library asks for them through one runtime-internal entry point,
 * `_swift_stdlib_getUnsafeArgvArgc`, which CommandLine.cpp.o alone defines in Swift
 * 6.3's libswiftCore.a; defining it here keeps that archive member, and its
 * constructor, out of the link. Should a later runtime have the standard library
 * call any other symbol of that member (upstream has added the executable path's
 * functions there), the member is linked again and the link fails on the duplicate
 * definition, loudly: then define those too, or drop this file. A debug build links
 * the shared runtime, whose own lookup is internal to it: there this code is never
 * called.
 */

static char **saved_argv;
static int saved_argc;

__attribute__((constructor)) static void uplinkd_keep_arguments(int argc, char **argv, char **envp) {
    (void)envp;
    saved_argc = argc;
    saved_argv = argv;
}

__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen) {
    static char *empty[] = {0};
    if (!saved_argv) {
        *outArgLen = 0;
        return empty;
    }
    *outArgLen = saved_argc;
    return saved_argv;
}
