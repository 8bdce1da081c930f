#include <ares.h>
