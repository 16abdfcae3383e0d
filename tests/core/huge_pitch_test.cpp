// 2D copies whose pitches exceed 4 GiB (the vendor's 32-bit descriptor limit): the
// rows must land 64-bit offsets apart. The buffers are address-space reservations
// (MAP_NORESERVE); only the pages of the few rows copied are ever touched.
#include "test_support.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

using namespace kupl_test;

namespace {

constexpr size_t kFourGiB = size_t(1) << 32;

class Reservation {
  public:
    explicit Reservation(size_t bytes) : bytes_(bytes) {
        void *p =
            mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        base_ = p == MAP_FAILED ? nullptr : static_cast<unsigned char *>(p);
    }
    ~Reservation() {
        if (base_)
            munmap(base_, bytes_);
    }
    unsigned char *get() const { return base_; }

  private:
    size_t bytes_;
    unsigned char *base_;
};

// Every byte of the pages around a row: the row itself must match, the rest stay zero.
::testing::AssertionResult row_landed(const unsigned char *row, const unsigned char *expected, size_t width) {
    if (std::memcmp(row, expected, width) != 0)
        return ::testing::AssertionFailure() << "row bytes differ";
    for (size_t i = 1; i <= 64; ++i)
        if (row[-ptrdiff_t(i)] != 0 || row[width + i - 1] != 0)
            return ::testing::AssertionFailure() << "a byte next to the row changed";
    return ::testing::AssertionSuccess();
}

} // namespace

TEST(HugePitch, DestinationRowsMoreThanFourGiBApart) {
    const size_t width = 100, height = 3, spitch = 128, dpitch = kFourGiB + 4096 + 8;
    Reservation dst((height - 1) * dpitch + width + 4096);
    ASSERT_NE(dst.get(), nullptr) << "cannot reserve address space";
    auto src = pattern(spitch * height, 1);
    unsigned char *d = dst.get() + 64;
    for (int mode = 0; mode < 2; ++mode) {
        Queue q = make_queue();
        int rc = mode == 0
                     ? kupl_memcpy2d(d, dpitch, src.data(), spitch, width, height)
                     : kupl_memcpy2d_async(d, dpitch, src.data(), spitch, width, height, q.get(), nullptr);
        ASSERT_EQ(rc, KUPL_OK) << (mode ? "async" : "sync");
        ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK);
        for (size_t r = 0; r < height; ++r)
            EXPECT_TRUE(row_landed(d + r * dpitch, src.data() + r * spitch, width)) << "row " << r;
    }
}

TEST(HugePitch, SourceRowsMoreThanFourGiBApart) {
    const size_t width = 100, height = 3, spitch = kFourGiB + 4096 + 24, dpitch = 100;
    Reservation src((height - 1) * spitch + width + 4096);
    ASSERT_NE(src.get(), nullptr) << "cannot reserve address space";
    unsigned char *s = src.get() + 64;
    for (size_t r = 0; r < height; ++r)
        fill_pattern(s + r * spitch, width, r + 10);
    for (int mode = 0; mode < 2; ++mode) {
        std::vector<unsigned char> d(dpitch * height, 0);
        Event e = make_event();
        int rc = mode == 0
                     ? kupl_memcpy2d(d.data(), dpitch, s, spitch, width, height)
                     : kupl_memcpy2d_async(d.data(), dpitch, s, spitch, width, height, nullptr, e.get());
        ASSERT_EQ(rc, KUPL_OK) << (mode ? "async" : "sync");
        if (mode == 1) {
            ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
        }
        for (size_t r = 0; r < height; ++r)
            EXPECT_EQ(std::memcmp(d.data() + r * dpitch, s + r * spitch, width), 0) << "row " << r;
    }
}

namespace {

// A buffer of `windows` 2 MiB windows that all alias one 2 MiB memfd, followed by
// one ordinary 2 MiB tail: more than 4 GiB of addresses for 4 MiB of memory.
class AliasedBuffer {
  public:
    static constexpr size_t kWindow = 2u << 20;
    explicit AliasedBuffer(size_t windows) : bytes_((windows + 1) * kWindow) {
        fd_ = memfd_create("kupl-huge-copy", 0);
        if (fd_ < 0 || ftruncate(fd_, kWindow) != 0)
            return;
        void *p = mmap(nullptr, bytes_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED)
            return;
        base_ = static_cast<unsigned char *>(p);
        for (size_t i = 0; i < windows; ++i)
            if (mmap(base_ + i * kWindow, kWindow, PROT_READ | PROT_WRITE,
                     MAP_SHARED | MAP_FIXED | MAP_POPULATE, fd_, 0) == MAP_FAILED)
                ok_ = false;
        if (mmap(base_ + windows * kWindow, kWindow, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
            ok_ = false;
        tail_ = base_ + windows * kWindow;
    }
    ~AliasedBuffer() {
        if (base_)
            munmap(base_, bytes_);
        if (fd_ >= 0)
            close(fd_);
    }
    bool ok() const { return base_ && ok_; }
    unsigned char *begin() const { return base_; }
    unsigned char *tail() const { return tail_; } // the one window that is not aliased

  private:
    size_t bytes_;
    int fd_ = -1;
    bool ok_ = true;
    unsigned char *base_ = nullptr;
    unsigned char *tail_ = nullptr;
};

} // namespace

// A single copy of 4 GiB + 2 MiB + 1000 bytes: a count kept in 32 bits would stop
// after 2 MiB + 1000 bytes and never reach the tail.
TEST(HugeCount, CopyOfMoreThanFourGiB) {
    if (kSlowdown > 1)
        GTEST_SKIP() << "sanitizers shadow every byte copied: 4 GiB takes too long";
    const size_t windows = kFourGiB / AliasedBuffer::kWindow + 1, tail = 1000;
    const size_t count = windows * AliasedBuffer::kWindow + tail;
    AliasedBuffer src(windows), dst(windows);
    ASSERT_TRUE(src.ok() && dst.ok()) << "cannot map the aliased buffers";
    fill_pattern(src.begin(), AliasedBuffer::kWindow, 1); // every aliased source window
    fill_pattern(src.tail(), AliasedBuffer::kWindow, 2);
    Queue q = make_queue();
    Event e = make_event();
    ASSERT_EQ(kupl_memcpy_async(dst.begin(), src.begin(), count, q.get(), e.get()), KUPL_OK);
    ASSERT_EQ(kupl_event_wait(e.get()), KUPL_OK);
    EXPECT_EQ(std::memcmp(dst.begin(), src.begin(), AliasedBuffer::kWindow), 0) << "aliased windows";
    EXPECT_EQ(std::memcmp(dst.tail(), src.tail(), tail), 0) << "the bytes past 4 GiB were not copied";
    const std::vector<unsigned char> zeros(AliasedBuffer::kWindow - tail, 0);
    EXPECT_EQ(std::memcmp(dst.tail() + tail, zeros.data(), zeros.size()), 0) << "copied past count";
}
