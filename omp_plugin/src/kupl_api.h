// The KUPL API the plugin uses: kupl.h, and kupl_ext.h's extensions where the KUPL it is built
// against has them (ours does, vendor KUPL does not). Every use of a kuplx_ call sits under
// #ifdef KUPLX_AVAILABLE next to a path that uses vendor calls only, so the plugin also builds
// and runs over vendor KUPL (KUPL_ADAPTERS_VENDOR_API_ONLY=ON builds it that way over ours).
#pragma once

#include <kupl.h>
#if __has_include(<kupl_ext.h>)
#include <kupl_ext.h>
#endif
