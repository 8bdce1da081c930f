/*
 * The PCRE2 shim of uplinkd: compiles a body pattern with uplinkd's fixed options and
 * limits, and matches it under a budget that covers the whole search. PCRE2's own
 * match limit restarts at every start position in the subject, so on its own it lets
 * a pattern cost (body length) x (limit); the budget here is counted by a callout over
 * all of them. Swift sees an opaque handle and a small result enum, no PCRE2 macros.
 */
#ifndef UPLINKD_PCRE2_SHIM_H
#define UPLINKD_PCRE2_SHIM_H

#include <stddef.h>
#include <stdint.h>

/* A compiled pattern (a pcre2_code_8). Read-only once compiled: PCRE2 documents that
 * one compiled pattern may be matched from several threads at once. */
typedef struct uplinkd_regex uplinkd_regex;

typedef enum {
    uplinkd_regex_matched = 0,
    uplinkd_regex_not_matched = 1,
    /* The step budget, or PCRE2's match or depth limit, ran out. */
    uplinkd_regex_step_limit = 2,
    /* The backtracking memory limit was reached, or memory ran out. */
    uplinkd_regex_memory_limit = 3,
    /* Any other PCRE2 error; its code is in *pcre2_error. */
    uplinkd_regex_failed = 4,
} uplinkd_regex_result;

/* NULL on error, with PCRE2's error code and the byte offset in the pattern. */
uplinkd_regex *uplinkd_regex_compile(const uint8_t *pattern, size_t length, uint32_t max_pattern_bytes,
                                     uint32_t parens_nest_limit, int *error_code, size_t *error_offset);
void uplinkd_regex_free(uplinkd_regex *regex);

/* PCRE2's text for an error code, NUL-terminated in buffer; its length, or < 0. */
int uplinkd_regex_error_message(int error_code, uint8_t *buffer, size_t size);

/* One search of the whole subject. step_limit counts pattern items tried plus bytes
 * moved over, over all start positions; match_limit is PCRE2's own, per start
 * position (it stops exponential backtracking sooner); heap_limit_kib bounds
 * backtracking memory. *steps_used (may be NULL) tells how much of the budget the
 * search used. */
uplinkd_regex_result uplinkd_regex_match(const uplinkd_regex *regex, const uint8_t *subject, size_t length,
                                         uint64_t step_limit, uint32_t match_limit, uint32_t heap_limit_kib,
                                         uint64_t *steps_used, int *pcre2_error);

#endif
