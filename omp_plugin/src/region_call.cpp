#include "region_call.h"

#include "plugin_log.h"
#include "region_threads.h"

namespace kupl_omp {

RegionCall::RegionCall(void *entry, void **bases, const ptrdiff_t *offsets, int32_t count, int team_size)
    : entry_(entry), team_size_(team_size) {
    const size_t n = count > 0 ? static_cast<size_t>(count) : 0;
    args_.reserve(n);
    for (size_t i = 0; i < n; ++i)
        args_.push_back(static_cast<char *>(bases[i]) + offsets[i]);
}

bool RegionCall::prepare(int device) {
    const unsigned count = static_cast<unsigned>(args_.size());
    types_.assign(count, &ffi_type_pointer);
    values_.resize(count);
    for (unsigned i = 0; i < count; ++i)
        values_[i] = &args_[i];
    if (ffi_prep_cif(&cif_, FFI_DEFAULT_ABI, count, &ffi_type_void, count ? types_.data() : nullptr) !=
        FFI_OK) {
        report_error("device %d: libffi cannot prepare a region call with %u arguments", device, count);
        return false;
    }
    return true;
}

void RegionCall::run() {
    set_region_team_size(team_size_);
    ffi_call(&cif_, FFI_FN(entry_), nullptr, values_.empty() ? nullptr : values_.data());
}

} // namespace kupl_omp
