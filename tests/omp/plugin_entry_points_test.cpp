// The plugin's __tgt_rtl_* entry points called directly, as libomptarget 14 calls them: image
// checks on a real clang-14 device image (and broken copies of it), the three hazards of an
// asynchronous plugin, bad arguments, and many threads at once. Host functions of this program
// stand in for region entries where a test needs a slow or observable region.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <thread>
#include <vector>

// The sanitizers own operator new and delete (their allocator pairs each new with its delete),
// so the out-of-memory test runs in the plain build only.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KUPL_TEST_OWN_OPERATOR_NEW 0
#else
#define KUPL_TEST_OWN_OPERATOR_NEW 1
/// Set by a test: the next operator new on this thread throws, as on an exhausted heap. The
/// plugin's own allocations come here too (a program's operator new replaces the library's).
thread_local bool fail_next_new = false;

void *operator new(size_t size) {
    if (fail_next_new) {
        fail_next_new = false;
        throw std::bad_alloc();
    }
    if (void *block = std::malloc(size ? size : 1))
        return block;
    throw std::bad_alloc();
}

// Its partners: what it took with malloc goes back with free. Not inlined: gcc would then pair
// the new-expressions it sees with free and warn (-Wmismatched-new-delete).
__attribute__((noinline)) void operator delete(void *block) noexcept {
    std::free(block);
}
__attribute__((noinline)) void operator delete(void *block, size_t) noexcept {
    std::free(block);
}
#endif

namespace {

struct OffloadEntry {
    void *addr;
    char *name;
    size_t size;
    int32_t flags;
    int32_t reserved;
};
struct DeviceImage {
    void *start;
    void *end;
    OffloadEntry *entries_begin;
    OffloadEntry *entries_end;
};
struct TargetTable {
    OffloadEntry *begin;
    OffloadEntry *end;
};
struct AsyncInfo {
    void *queue = nullptr;
};

constexpr int32_t kSuccess = 0;
constexpr int32_t kFail = ~0;
constexpr int32_t kAllocDefault = 3;
constexpr size_t kImageEntries = 3; // image_source.c: two regions, one global

/// The plugin, loaded the way libomptarget loads it.
struct Plugin {
    void *handle = nullptr;
    template <class F> F get(const char *name) { return reinterpret_cast<F>(dlsym(handle, name)); }

    int32_t (*is_valid_binary)(DeviceImage *);
    int32_t (*number_of_devices)();
    int32_t (*init_device)(int32_t);
    TargetTable *(*load_binary)(int32_t, DeviceImage *);
    void *(*data_alloc)(int32_t, int64_t, void *, int32_t);
    int32_t (*data_submit)(int32_t, void *, void *, int64_t);
    int32_t (*data_retrieve)(int32_t, void *, void *, int64_t);
    int32_t (*data_retrieve_async)(int32_t, void *, void *, int64_t, AsyncInfo *);
    int32_t (*data_submit_async)(int32_t, void *, void *, int64_t, AsyncInfo *);
    int32_t (*data_delete)(int32_t, void *);
    int32_t (*run_region)(int32_t, void *, void **, ptrdiff_t *, int32_t);
    int32_t (*run_region_async)(int32_t, void *, void **, ptrdiff_t *, int32_t, AsyncInfo *);
    int32_t (*synchronize)(int32_t, AsyncInfo *);
    int32_t (*create_event)(int32_t, void **);
    int32_t (*record_event)(int32_t, void *, AsyncInfo *);
    int32_t (*wait_event)(int32_t, void *, AsyncInfo *);
    int32_t (*sync_event)(int32_t, void *);
    int32_t (*destroy_event)(int32_t, void *);

    Plugin() {
        handle = dlopen(KUPL_OMP_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            return;
        is_valid_binary = get<decltype(is_valid_binary)>("__tgt_rtl_is_valid_binary");
        number_of_devices = get<decltype(number_of_devices)>("__tgt_rtl_number_of_devices");
        init_device = get<decltype(init_device)>("__tgt_rtl_init_device");
        load_binary = get<decltype(load_binary)>("__tgt_rtl_load_binary");
        data_alloc = get<decltype(data_alloc)>("__tgt_rtl_data_alloc");
        data_submit = get<decltype(data_submit)>("__tgt_rtl_data_submit");
        data_retrieve = get<decltype(data_retrieve)>("__tgt_rtl_data_retrieve");
        data_retrieve_async = get<decltype(data_retrieve_async)>("__tgt_rtl_data_retrieve_async");
        data_submit_async = get<decltype(data_submit_async)>("__tgt_rtl_data_submit_async");
        data_delete = get<decltype(data_delete)>("__tgt_rtl_data_delete");
        run_region = get<decltype(run_region)>("__tgt_rtl_run_target_region");
        run_region_async = get<decltype(run_region_async)>("__tgt_rtl_run_target_region_async");
        synchronize = get<decltype(synchronize)>("__tgt_rtl_synchronize");
        create_event = get<decltype(create_event)>("__tgt_rtl_create_event");
        record_event = get<decltype(record_event)>("__tgt_rtl_record_event");
        wait_event = get<decltype(wait_event)>("__tgt_rtl_wait_event");
        sync_event = get<decltype(sync_event)>("__tgt_rtl_sync_event");
        destroy_event = get<decltype(destroy_event)>("__tgt_rtl_destroy_event");
    }
};

Plugin &plugin() {
    static Plugin instance;
    return instance;
}

std::vector<char> read_file(const char *path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

constexpr size_t kBlock = 4 << 20;

// Stand-in region entries: every argument arrives as a pointer.

/// Lets a test hold a region in the middle of its run: the region says it started, then waits
/// until the test opens the gate.
struct Gate {
    std::atomic<bool> started{false};
    std::atomic<bool> open{false};
    void enter() {
        started.store(true);
        while (!open.load())
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    void wait_started() const {
        while (!started.load())
            std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
};

extern "C" void gated_fill(void *buf, void *gate) {
    static_cast<Gate *>(gate)->enter();
    memset(buf, 0xA5, kBlock);
}
extern "C" void gated_sum(void *buf, void *result, void *gate) {
    static_cast<Gate *>(gate)->enter();
    uint64_t sum = 0;
    for (size_t i = 0; i < kBlock; ++i)
        sum += static_cast<unsigned char *>(buf)[i];
    *static_cast<uint64_t *>(result) = sum;
}
extern "C" void slow_fill(void *buf) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    memset(buf, 0x5A, kBlock);
}
extern "C" void add_one(void *buf, void *len) {
    auto *bytes = static_cast<unsigned char *>(buf);
    for (size_t i = 0, n = *static_cast<size_t *>(len); i < n; ++i)
        bytes[i] = static_cast<unsigned char>(bytes[i] + 1);
}
extern "C" void record_thread(void *out) {
    *static_cast<std::thread::id *>(out) = std::this_thread::get_id();
}

class EntryPoints : public ::testing::Test {
  protected:
    void SetUp() override {
        ASSERT_NE(plugin().handle, nullptr) << dlerror();
        ASSERT_GE(plugin().number_of_devices(), 1);
        ASSERT_EQ(plugin().init_device(0), kSuccess);
    }
    Plugin &p = plugin();
};

TEST_F(EntryPoints, ExportsRequiredAndAsyncInterface) {
    const char *names[] = {
        "__tgt_rtl_is_valid_binary", "__tgt_rtl_number_of_devices", "__tgt_rtl_init_device",
        "__tgt_rtl_load_binary", "__tgt_rtl_data_alloc", "__tgt_rtl_data_submit", "__tgt_rtl_data_retrieve",
        "__tgt_rtl_data_delete", "__tgt_rtl_run_target_region", "__tgt_rtl_run_target_team_region",
        // the async set libomptarget 14 needs together with synchronize
        "__tgt_rtl_data_submit_async", "__tgt_rtl_data_retrieve_async", "__tgt_rtl_run_target_region_async",
        "__tgt_rtl_run_target_team_region_async", "__tgt_rtl_synchronize", "__tgt_rtl_create_event",
        "__tgt_rtl_record_event", "__tgt_rtl_wait_event", "__tgt_rtl_sync_event", "__tgt_rtl_destroy_event",
        "__tgt_rtl_data_exchange", "__tgt_rtl_data_exchange_async", "__tgt_rtl_init_requires",
        "__tgt_rtl_print_device_info", "__tgt_rtl_set_info_flag"};
    for (const char *name : names)
        EXPECT_NE(dlsym(p.handle, name), nullptr) << name;
    // Nothing but the interface leaks out.
    EXPECT_EQ(dlsym(p.handle, "_ZN8kupl_omp6Plugin3getEv"), nullptr);
}

class Images : public EntryPoints {
  protected:
    void SetUp() override {
        EntryPoints::SetUp();
        bytes = read_file(KUPL_OMP_TEST_IMAGE);
        ASSERT_GT(bytes.size(), sizeof(Elf64_Ehdr)) << KUPL_OMP_TEST_IMAGE;
    }
    DeviceImage image_of(std::vector<char> &data, size_t size) {
        return DeviceImage{data.data(), data.data() + size, host_entries, host_entries + kImageEntries};
    }
    std::vector<char> bytes;
    OffloadEntry host_entries[kImageEntries]{};
};

TEST_F(Images, LoadsARealImageAndRunsItsRegion) {
    DeviceImage image = image_of(bytes, bytes.size());
    ASSERT_EQ(p.is_valid_binary(&image), 1);
    TargetTable *table = p.load_binary(0, &image);
    ASSERT_NE(table, nullptr);
    ASSERT_EQ(static_cast<size_t>(table->end - table->begin), kImageEntries);
    void *bump = nullptr;
    int *global = nullptr;
    for (size_t i = 0; i < kImageEntries; ++i) {
        OffloadEntry e; // clang-14 lays the table out with 1-byte alignment: copy each entry out
        memcpy(&e, reinterpret_cast<const char *>(table->begin) + i * sizeof e, sizeof e);
        if (e.size == 0 && strstr(e.name, "bump"))
            bump = e.addr;
        if (e.size == sizeof(int) && !strcmp(e.name, "image_global"))
            global = static_cast<int *>(e.addr);
    }
    ASSERT_NE(bump, nullptr);
    ASSERT_NE(global, nullptr);
    EXPECT_EQ(*global, 7);
    int *x = static_cast<int *>(p.data_alloc(0, sizeof(int), nullptr, kAllocDefault));
    int value = 5;
    ASSERT_EQ(p.data_submit(0, x, &value, sizeof value), kSuccess);
    void *args[] = {x};
    ptrdiff_t offsets[] = {0};
    ASSERT_EQ(p.run_region(0, bump, args, offsets, 1), kSuccess);
    ASSERT_EQ(p.data_retrieve(0, &value, x, sizeof value), kSuccess);
    EXPECT_EQ(value, 12);
    EXPECT_EQ(p.data_delete(0, x), kSuccess);

    // Another device gets its own copy of the image, globals included.
    if (p.number_of_devices() > 1) {
        ASSERT_EQ(p.init_device(1), kSuccess);
        TargetTable *other = p.load_binary(1, &image);
        ASSERT_NE(other, nullptr);
        for (size_t i = 0; i < kImageEntries; ++i) {
            OffloadEntry mine, theirs;
            memcpy(&mine, reinterpret_cast<const char *>(table->begin) + i * sizeof mine, sizeof mine);
            memcpy(&theirs, reinterpret_cast<const char *>(other->begin) + i * sizeof theirs, sizeof theirs);
            EXPECT_NE(theirs.addr, mine.addr) << theirs.name;
        }
    }
}

TEST_F(Images, RefusesAnotherArchitecture) {
    std::vector<char> foreign = bytes;
#if defined(__aarch64__)
    const uint16_t machine = EM_X86_64;
#else
    const uint16_t machine = EM_AARCH64;
#endif
    memcpy(foreign.data() + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof machine);
    DeviceImage image = image_of(foreign, foreign.size());
    EXPECT_EQ(p.is_valid_binary(&image), 0);
    EXPECT_EQ(p.load_binary(0, &image), nullptr);
}

TEST_F(Images, RefusesBrokenImages) {
    std::vector<char> copy = bytes;
    for (size_t size : {size_t{0}, size_t{16}, sizeof(Elf64_Ehdr), bytes.size() / 2, bytes.size() - 1}) {
        DeviceImage image = image_of(copy, size);
        EXPECT_EQ(p.is_valid_binary(&image), 0) << "truncated to " << size;
        EXPECT_EQ(p.load_binary(0, &image), nullptr) << "truncated to " << size;
    }
    std::vector<char> garbage(bytes.size());
    for (size_t i = 0; i < garbage.size(); ++i)
        garbage[i] = static_cast<char>(i * 131 + 7);
    DeviceImage junk = image_of(garbage, garbage.size());
    EXPECT_EQ(p.is_valid_binary(&junk), 0);

    std::vector<char> bad_sections = bytes;
    const uint64_t far = uint64_t{1} << 40;
    memcpy(bad_sections.data() + offsetof(Elf64_Ehdr, e_shoff), &far, sizeof far);
    DeviceImage wild = image_of(bad_sections, bad_sections.size());
    EXPECT_EQ(p.is_valid_binary(&wild), 0);
    EXPECT_EQ(p.is_valid_binary(nullptr), 0);

    // A host table that does not match the image is refused at load time.
    DeviceImage mismatch = image_of(bytes, bytes.size());
    mismatch.entries_end = mismatch.entries_begin + 1;
    EXPECT_EQ(p.load_binary(0, &mismatch), nullptr);
}

// libomptarget 14 drops a construct's reference counts before it synchronizes, so a region
// launch must have run when it returns (else another construct's final copy-back misses it).
TEST_F(EntryPoints, RegionLaunchReturnsAfterTheRegionRan) {
    void *buf = p.data_alloc(0, kBlock, nullptr, kAllocDefault);
    ASSERT_NE(buf, nullptr);
    AsyncInfo info;
    void *args[] = {buf};
    ptrdiff_t offsets[] = {0};
    ASSERT_EQ(p.run_region_async(0, reinterpret_cast<void *>(slow_fill), args, offsets, 1, &info), kSuccess);
    EXPECT_EQ(static_cast<unsigned char *>(buf)[kBlock - 1], 0x5A);
    ASSERT_NE(info.queue, nullptr);
    ASSERT_EQ(p.synchronize(0, &info), kSuccess);
    EXPECT_EQ(info.queue, nullptr);
    EXPECT_EQ(p.data_delete(0, buf), kSuccess);
}

// Hazard 2: a delete (made under libomptarget's map lock) while another construct's region
// still reads the block: it returns at once and the block outlives the region.
TEST_F(EntryPoints, DeleteDuringRunningRegionIsDeferredNotBlocking) {
    void *buf = p.data_alloc(0, kBlock, nullptr, kAllocDefault); // large: unmapped when freed
    ASSERT_NE(buf, nullptr);
    std::vector<unsigned char> pattern(kBlock);
    uint64_t expected = 0;
    for (size_t i = 0; i < kBlock; ++i)
        expected += pattern[i] = static_cast<unsigned char>(i * 13);
    ASSERT_EQ(p.data_submit(0, buf, pattern.data(), kBlock), kSuccess);
    Gate gate;
    uint64_t sum = 0;
    std::thread construct([&] {
        AsyncInfo reader;
        void *args[] = {buf, &sum, &gate};
        ptrdiff_t offsets[] = {0, 0, 0};
        EXPECT_EQ(p.run_region_async(0, reinterpret_cast<void *>(gated_sum), args, offsets, 3, &reader),
                  kSuccess);
        EXPECT_EQ(p.synchronize(0, &reader), kSuccess);
    });
    gate.wait_started();
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(p.data_delete(0, buf), kSuccess);
    EXPECT_LT(ms_since(start), 100.0) << "data_delete waited";
    gate.open.store(true); // the region reads the block only now
    construct.join();
    EXPECT_EQ(sum, expected);
    EXPECT_EQ(p.data_delete(0, buf), kFail) << "a block can be deleted once";
}

// Hazards 3 and 1: wait_event orders the waiting queue after the recorded work without blocking,
// and a retrieve queued behind it returns only when its bytes have landed.
TEST_F(EntryPoints, WaitEventOrdersWithoutBlockingAndRetrieveLands) {
#ifdef KUPL_TEST_VENDOR_API_ONLY
    GTEST_SKIP()
        << "built for vendor KUPL: wait_event blocks (WaitEventOverVendorKuplBlocksUntilTheRecordIsDone)";
#endif
    void *buf = p.data_alloc(0, kBlock, nullptr, kAllocDefault);
    ASSERT_NE(buf, nullptr);
    ASSERT_EQ(p.data_submit(0, buf, std::vector<unsigned char>(kBlock, 0).data(), kBlock), kSuccess);
    void *event = nullptr;
    ASSERT_EQ(p.create_event(0, &event), kSuccess);
    Gate gate;
    AsyncInfo producer;
    std::thread producing([&] {
        void *args[] = {buf, &gate};
        ptrdiff_t offsets[] = {0, 0};
        EXPECT_EQ(p.run_region_async(0, reinterpret_cast<void *>(gated_fill), args, offsets, 2, &producer),
                  kSuccess);
    });
    gate.wait_started(); // producer.queue was set before the region was queued
    ASSERT_EQ(p.record_event(0, event, &producer), kSuccess);

    AsyncInfo consumer;
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(p.wait_event(0, event, &consumer), kSuccess);
    EXPECT_LT(ms_since(start), 100.0) << "wait_event blocked";
    ASSERT_NE(consumer.queue, nullptr);
    // Re-recording the event with nothing outstanding replaces its pending KUPL event; the
    // consumer's dependency on the earlier record must survive that.
    AsyncInfo idle;
    EXPECT_EQ(p.record_event(0, event, &idle), kSuccess);
    EXPECT_EQ(idle.queue, nullptr);
    EXPECT_EQ(p.wait_event(0, event, &idle), kSuccess);
    EXPECT_EQ(idle.queue, nullptr) << "waiting on a complete record needs no queue";
    std::vector<unsigned char> host(kBlock, 0);
    std::atomic<bool> retrieved{false};
    std::thread consuming([&] {
        EXPECT_EQ(p.data_retrieve_async(0, host.data(), buf, kBlock, &consumer), kSuccess);
        // Landed on return: libomptarget may rewrite parts of host[] right now.
        EXPECT_EQ(host[0], 0xA5);
        EXPECT_EQ(host[kBlock - 1], 0xA5);
        retrieved.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_FALSE(retrieved.load()) << "the retrieve ran before the recorded region";
    gate.open.store(true);
    producing.join();
    consuming.join();
    EXPECT_TRUE(retrieved.load());
    EXPECT_EQ(p.synchronize(0, &consumer), kSuccess);
    EXPECT_EQ(p.synchronize(0, &producer), kSuccess);
    EXPECT_EQ(p.sync_event(0, event), kSuccess);

    EXPECT_EQ(p.destroy_event(0, event), kSuccess);
    EXPECT_EQ(p.data_delete(0, buf), kSuccess);
}

#ifdef KUPL_TEST_VENDOR_API_ONLY
// Hazard 3 over vendor KUPL, which has no non-blocking cross-queue wait: wait_event orders the
// waiting queue after the recorded work by blocking until that work is done.
TEST_F(EntryPoints, WaitEventOverVendorKuplBlocksUntilTheRecordIsDone) {
    void *buf = p.data_alloc(0, kBlock, nullptr, kAllocDefault);
    ASSERT_NE(buf, nullptr);
    ASSERT_EQ(p.data_submit(0, buf, std::vector<unsigned char>(kBlock, 0).data(), kBlock), kSuccess);
    void *event = nullptr;
    ASSERT_EQ(p.create_event(0, &event), kSuccess);
    Gate gate;
    AsyncInfo producer;
    std::thread producing([&] {
        void *args[] = {buf, &gate};
        ptrdiff_t offsets[] = {0, 0};
        EXPECT_EQ(p.run_region_async(0, reinterpret_cast<void *>(gated_fill), args, offsets, 2, &producer),
                  kSuccess);
    });
    gate.wait_started();
    ASSERT_EQ(p.record_event(0, event, &producer), kSuccess);

    const auto start = std::chrono::steady_clock::now();
    std::thread opener([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        gate.open.store(true);
    });
    AsyncInfo consumer;
    EXPECT_EQ(p.wait_event(0, event, &consumer), kSuccess);
    EXPECT_GE(ms_since(start), 40.0) << "wait_event returned before the recorded region ran";
    std::vector<unsigned char> host(kBlock, 0);
    EXPECT_EQ(p.data_retrieve_async(0, host.data(), buf, kBlock, &consumer), kSuccess);
    EXPECT_EQ(std::count(host.begin(), host.end(), 0xA5), static_cast<ptrdiff_t>(kBlock));
    opener.join();
    producing.join();
    EXPECT_EQ(p.synchronize(0, &consumer), kSuccess);
    EXPECT_EQ(p.synchronize(0, &producer), kSuccess);
    EXPECT_EQ(p.sync_event(0, event), kSuccess);
    EXPECT_EQ(p.destroy_event(0, event), kSuccess);
    EXPECT_EQ(p.data_delete(0, buf), kSuccess);
}
#endif

// A copy KUPL fails (fault injection of libkupl, loaded by the plugin) reaches libomptarget
// as OFFLOAD_FAIL, whether it was made at once or queued.
TEST_F(EntryPoints, CopyFailuresReachLibomptarget) {
    void *kupl = dlopen("libkupl.so.0", RTLD_LAZY | RTLD_NOLOAD);
    ASSERT_NE(kupl, nullptr) << "the plugin should have loaded libkupl";
    auto inject = reinterpret_cast<int (*)(unsigned)>(dlsym(kupl, "kuplx_inject_copy_faults"));
    ASSERT_NE(inject, nullptr);
    constexpr size_t kBig = 2 << 20; // above KUPL's sync threshold: the engine copies it
    void *buf = p.data_alloc(0, kBig, nullptr, kAllocDefault);
    std::vector<unsigned char> host(kBig, 7);

    ASSERT_EQ(inject(1), 0);
    EXPECT_EQ(p.data_submit(0, buf, host.data(), kBig), kFail);
    EXPECT_EQ(p.data_submit(0, buf, host.data(), kBig), kSuccess) << "only one fault was armed";

    AsyncInfo info;
    size_t len = 1;
    void *args[] = {buf, &len};
    ptrdiff_t offsets[] = {0, 0};
    ASSERT_EQ(p.run_region_async(0, reinterpret_cast<void *>(add_one), args, offsets, 2, &info), kSuccess);
    ASSERT_NE(info.queue, nullptr);
    ASSERT_EQ(inject(1), 0);
    EXPECT_EQ(p.data_retrieve_async(0, host.data(), buf, kBig, &info), kFail);
    EXPECT_EQ(p.synchronize(0, &info), kSuccess);
    EXPECT_EQ(info.queue, nullptr);
    ASSERT_EQ(inject(0), 0);
    dlclose(kupl);
    EXPECT_EQ(p.data_delete(0, buf), kSuccess);
}

TEST_F(EntryPoints, RegionsRunOffTheCallingThread) {
    std::thread::id ran_on;
    void *args[] = {&ran_on};
    ptrdiff_t offsets[] = {0};
    ASSERT_EQ(p.run_region(0, reinterpret_cast<void *>(record_thread), args, offsets, 1), kSuccess);
    EXPECT_NE(ran_on, std::thread::id());
    EXPECT_NE(ran_on, std::this_thread::get_id());
}

TEST_F(EntryPoints, RefusesBadArguments) {
    EXPECT_EQ(p.init_device(p.number_of_devices()), kFail);
    EXPECT_EQ(p.init_device(-1), kFail);
    EXPECT_EQ(p.data_alloc(0, 64, nullptr, 42), nullptr);
    EXPECT_EQ(p.data_alloc(0, -1, nullptr, kAllocDefault), nullptr);
    EXPECT_EQ(p.data_alloc(p.number_of_devices(), 64, nullptr, kAllocDefault), nullptr);
    int local = 0;
    EXPECT_EQ(p.data_delete(0, &local), kFail);
    void *buf = p.data_alloc(0, 64, nullptr, kAllocDefault);
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(p.data_submit(0, buf, &local, -1), kFail);
    EXPECT_EQ(p.data_submit(0, nullptr, &local, 4), kFail);
    EXPECT_EQ(p.data_retrieve(0, &local, nullptr, 4), kFail);
    EXPECT_EQ(p.data_submit(0, buf, &local, 0), kSuccess);
    EXPECT_EQ(p.run_region(0, nullptr, nullptr, nullptr, 0), kFail);
    EXPECT_EQ(p.record_event(0, nullptr, nullptr), kFail);
    EXPECT_EQ(p.data_delete(0, buf), kSuccess);
}

// An allocation that fails inside the plugin (its event, its region call) is the entry point's
// failure, with one line on stderr: never an exception unwinding into libomptarget.
TEST_F(EntryPoints, OutOfMemoryInsideThePluginIsAFailure) {
#if !KUPL_TEST_OWN_OPERATOR_NEW
    GTEST_SKIP() << "the sanitizer's allocator owns operator new here";
#else
    void *event = nullptr;
    testing::internal::CaptureStderr();
    fail_next_new = true;
    const int32_t created = p.create_event(0, &event);
    fail_next_new = false;
    EXPECT_EQ(created, kFail);
    EXPECT_EQ(event, nullptr);

    unsigned char bytes[16] = {};
    size_t len = sizeof bytes;
    void *args[] = {bytes, &len};
    ptrdiff_t offsets[] = {0, 0};
    fail_next_new = true;
    const int32_t ran = p.run_region(0, reinterpret_cast<void *>(add_one), args, offsets, 2);
    fail_next_new = false;
    const std::string errors = testing::internal::GetCapturedStderr();
    EXPECT_EQ(ran, kFail);
    EXPECT_EQ(bytes[0], 0) << "a region whose launch failed must not have run";
    EXPECT_NE(errors.find("create_event: out of memory"), std::string::npos) << errors;
    EXPECT_NE(errors.find("run_target_region: out of memory"), std::string::npos) << errors;

    // And the plugin goes on working.
    ASSERT_EQ(p.run_region(0, reinterpret_cast<void *>(add_one), args, offsets, 2), kSuccess);
    EXPECT_EQ(bytes[15], 1);
    ASSERT_EQ(p.create_event(0, &event), kSuccess);
    EXPECT_EQ(p.destroy_event(0, event), kSuccess);
#endif
}

TEST_F(EntryPoints, ManyThreadsAtOnce) {
    constexpr int kThreads = 8, kRounds = 20;
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < kRounds; ++round) {
                size_t len = static_cast<size_t>(1 + (t * 7919 + round * 104729) % (256 * 1024));
                std::vector<unsigned char> host(len), back(len);
                for (size_t i = 0; i < len; ++i)
                    host[i] = static_cast<unsigned char>(i + t + round);
                void *buf = p.data_alloc(0, static_cast<int64_t>(len), nullptr, kAllocDefault);
                AsyncInfo info;
                void *event = nullptr;
                void *args[] = {buf, &len};
                ptrdiff_t offsets[] = {0, 0};
                bool ok = buf && p.data_submit_async(0, buf, host.data(), len, &info) == kSuccess &&
                          p.create_event(0, &event) == kSuccess &&
                          p.record_event(0, event, &info) == kSuccess &&
                          p.wait_event(0, event, &info) == kSuccess &&
                          p.run_region_async(0, reinterpret_cast<void *>(add_one), args, offsets, 2, &info) ==
                              kSuccess &&
                          p.data_retrieve_async(0, back.data(), buf, len, &info) == kSuccess &&
                          p.synchronize(0, &info) == kSuccess && p.destroy_event(0, event) == kSuccess &&
                          p.data_delete(0, buf) == kSuccess;
                for (size_t i = 0; ok && i < len; ++i)
                    ok = back[i] == static_cast<unsigned char>(host[i] + 1);
                if (!ok)
                    failures.fetch_add(1);
            }
        });
    }
    for (auto &thread : threads)
        thread.join();
    EXPECT_EQ(failures.load(), 0);
}

} // namespace
