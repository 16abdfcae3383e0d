// Compiled, not run: kupl.h and kupl_ext.h as C++98 with -pedantic -Werror (kupl::queue_submit,
// which takes a std::function, is then left out).
#include "kupl.h"
#include "kupl_ext.h"

int kupl_header_language_check_cxx98();

int kupl_header_language_check_cxx98() {
    kupl_queue_item_desc_t desc = kupl_queue_item_desc_t();
    desc.field_mask = KUPL_QUEUE_ITEM_DESC_FIELD_NAME;
    return static_cast<int>(sizeof desc) + static_cast<int>(desc.field_mask);
}
