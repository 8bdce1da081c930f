/* PCRE2 with 8-bit code units: the width must be chosen before the header, which then
 * declares pcre2_compile_8 and the rest under their plain names as macros. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
