/*
 * Compiled, not run: kupl.h and kupl_ext.h must compile without a warning as C89/C90 and
 * C99 with -pedantic -Werror (and, as header_language_check.cpp, as C++98). Declarations
 * only at block starts, no // comments: this file is C89 itself.
 */
#include "kupl.h"
#include "kupl_ext.h"

int kupl_header_language_check(void);

int kupl_header_language_check(void) {
    kupl_queue_item_desc_t desc;
    kupl_event_status_t status = KUPL_EVENT_STATUS_COMPLETE;
    kuplx_counters_t counters;
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME | KUPL_QUEUE_ITEM_DESC_FIELD_ARGS_SIZE;
    counters.bytes_copied = 0;
    return (int)(sizeof desc + sizeof counters) + (int)status + (int)counters.bytes_copied;
}
