/* opts: the options a job carries (common/opts.h). */
#include "common/opts.h"

#include <stddef.h>

const char *const measure_layout_names[] = {"shared", "per_arm", "swap", NULL};
const char *const measure_code_names[] = {"shared", "per_arm", NULL};
const char *const measure_order_names[] = {"rotate", "fixed", NULL};
