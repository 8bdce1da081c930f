#ifndef UPLINKD_START_SHIM_H
#define UPLINKD_START_SHIM_H

/* The process's own argv for the Swift runtime (start_shim.c); nothing to call. */
__attribute__((swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);

#endif
