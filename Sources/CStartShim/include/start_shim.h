#ifndef UPLINKD_START_SHIM_H
#define UPLINKD_START_SHIM_H

/* The process's own argv for the Swift runtime (start_shim.c), weakly defined. */
__attribute__((weak, swiftcall)) char **_swift_stdlib_getUnsafeArgvArgc(int *outArgLen);

/* Nonzero once the standard library took argv from this shim rather than from the
   runtime's own lookup; read it after the first use of CommandLine.arguments. */
int uplinkd_start_shim_answered(void);

#endif
