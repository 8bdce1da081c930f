#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include "pcre2_shim.h"

/* What the callout returns to abandon the search: any negative value is handed back
 * by pcre2_match; this one is outside PCRE2's own error codes. */
#define UPLINKD_STEPS_EXHAUSTED (-1000)

typedef struct {
    uint64_t used;
    uint64_t limit;
    PCRE2_SIZE last_position;
} step_budget;

/* Called before every pattern item (PCRE2_AUTO_CALLOUT), at every start position and
 * on every backtrack. Charging the distance moved since the previous callout as well
 * makes one item that scans far (".*", "[^x]*+") cost what it reads, not 1: the
 * budget then bounds the work of the whole search, which PCRE2's per-start match
 * limit does not. Not counted: an item that scans and then fails (a large fixed
 * repeat such as \d{30000}); its cost is bounded by the body and the repeat count. */
static int count_step(pcre2_callout_block *block, void *data) {
    step_budget *budget = data;
    PCRE2_SIZE position = block->current_position;
    PCRE2_SIZE moved = position > budget->last_position ? position - budget->last_position
                                                        : budget->last_position - position;
    budget->used += 1 + (uint64_t)moved;
    budget->last_position = position;
    return budget->used > budget->limit ? UPLINKD_STEPS_EXHAUSTED : 0;
}

uplinkd_regex *uplinkd_regex_compile(const uint8_t *pattern, size_t length, uint32_t max_pattern_bytes,
                                     uint32_t parens_nest_limit, int *error_code, size_t *error_offset) {
    pcre2_compile_context *context = pcre2_compile_context_create(NULL);
    if (context == NULL) {
        *error_code = PCRE2_ERROR_NOMEMORY;
        *error_offset = 0;
        return NULL;
    }
    pcre2_set_max_pattern_length(context, max_pattern_bytes);
    /* PCRE2 compiles nested groups recursively; its own default (250) keeps the
     * stack safe, and a lower one refuses sooner what no body check needs. */
    pcre2_set_parens_nest_limit(context, parens_nest_limit);
    /* Bodies are bytes from the network: invalid UTF-8 must simply not match, never
     * fail the search. \C could split a UTF-8 character, so it is refused. */
    uint32_t options = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_NEVER_BACKSLASH_C | PCRE2_AUTO_CALLOUT;
    pcre2_code *code = pcre2_compile(pattern, length, options, error_code, error_offset, context);
    pcre2_compile_context_free(context);
    /* No pcre2_jit_compile: the unit runs with MemoryDenyWriteExecute=yes, which
     * forbids the executable memory JIT code needs; the interpreter is bounded below. */
    return (uplinkd_regex *)code;
}

void uplinkd_regex_free(uplinkd_regex *regex) {
    pcre2_code_free((pcre2_code *)regex);
}

int uplinkd_regex_error_message(int error_code, uint8_t *buffer, size_t size) {
    return pcre2_get_error_message(error_code, buffer, size);
}

uplinkd_regex_result uplinkd_regex_match(const uplinkd_regex *regex, const uint8_t *subject, size_t length,
                                         uint64_t step_limit, uint32_t match_limit, uint32_t heap_limit_kib,
                                         uint64_t *steps_used, int *pcre2_error) {
    const pcre2_code *code = (const pcre2_code *)regex;
    /* An empty Swift array has no storage; PCRE2 10.42 refuses NULL even for length 0. */
    static const uint8_t empty[1] = { 0 };
    if (subject == NULL) subject = empty;
    step_budget budget = { 0, step_limit, 0 };
    *pcre2_error = 0;
    if (steps_used != NULL) *steps_used = 0;

    pcre2_match_context *context = pcre2_match_context_create(NULL);
    /* One ovector pair: only whether it matched is wanted. Made per search and freed
     * after, so the backtracking frames PCRE2 keeps in it are not held between rounds. */
    pcre2_match_data *data = pcre2_match_data_create(1, NULL);
    if (context == NULL || data == NULL) {
        pcre2_match_context_free(context);
        pcre2_match_data_free(data);
        *pcre2_error = PCRE2_ERROR_NOMEMORY;
        return uplinkd_regex_memory_limit;
    }
    pcre2_set_callout(context, count_step, &budget);
    /* PCRE2's own limit counts backtracks from one start position: exponential
     * patterns hit it at the first one, sooner than the budget. The depth limit is
     * left at its default: the heap limit bounds the same frames in bytes. */
    pcre2_set_match_limit(context, match_limit);
    pcre2_set_heap_limit(context, heap_limit_kib);

    int rc = pcre2_match(code, subject, length, 0, 0, data, context);
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    if (steps_used != NULL) *steps_used = budget.used;

    if (rc >= 0) return uplinkd_regex_matched;
    *pcre2_error = rc;
    switch (rc) {
    case PCRE2_ERROR_NOMATCH:
        *pcre2_error = 0;
        return uplinkd_regex_not_matched;
    case UPLINKD_STEPS_EXHAUSTED:
    case PCRE2_ERROR_MATCHLIMIT:
    case PCRE2_ERROR_DEPTHLIMIT:
        return uplinkd_regex_step_limit;
    case PCRE2_ERROR_HEAPLIMIT:
    case PCRE2_ERROR_NOMEMORY:
        return uplinkd_regex_memory_limit;
    default:
        return uplinkd_regex_failed;
    }
}
