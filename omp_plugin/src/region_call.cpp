#include "region_call.h"

#include "plugin_log.h"
#include "region_threads.h"

namespace kupl_omp {

namespace {
/// Every argument is a pointer: calls with up to this many share one table of types.
constexpr size_t kSharedTypes = 64;
ffi_type **shared_pointer_types() {
    static std::vector<ffi_type *> types(kSharedTypes, &ffi_type_pointer);
    return types.data();
}
} // namespace

RegionCall::RegionCall(void *entry, void **bases, const ptrdiff_t *offsets, int32_t count, int team_size)
    : entry_(entry), team_size_(team_size), count_(count > 0 ? static_cast<size_t>(count) : 0) {
    storage_.resize(2 * count_);
    for (size_t i = 0; i < count_; ++i) {
        storage_[i] = static_cast<char *>(bases[i]) + offsets[i];
        storage_[count_ + i] = &storage_[i];
    }
}

bool RegionCall::prepare(int device) {
    const unsigned count = static_cast<unsigned>(count_);
    if (count_ > kSharedTypes)
        own_types_.assign(count_, &ffi_type_pointer);
    ffi_type **types = count_ > kSharedTypes ? own_types_.data() : shared_pointer_types();
    if (ffi_prep_cif(&cif_, FFI_DEFAULT_ABI, count, &ffi_type_void, types) != FFI_OK) {
        report_error("device %d: libffi cannot prepare a region call with %u arguments", device, count);
        return false;
    }
    return true;
}

void RegionCall::run() {
    set_region_team_size(team_size_);
    ffi_call(&cif_, FFI_FN(entry_), nullptr, count_ ? &storage_[count_] : nullptr);
}

} // namespace kupl_omp
