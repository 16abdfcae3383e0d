// Differential tests: random 1D and 2D copies through every path (sync, async on a
// queue with or without an event, async with no queue) checked against memcpy —
// every byte of the destination window, and every guard byte around and between
// rows unchanged. The seed is fixed (KUPL_TEST_SEED overrides) and printed on failure.
#include "test_support.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

using namespace kupl_test;

namespace {

constexpr size_t kGuard = 64;
constexpr size_t kMaxBytes = 6u << 20;

uint64_t test_seed() {
    const char *s = std::getenv("KUPL_TEST_SEED");
    return s ? std::strtoull(s, nullptr, 0) : 20261202u;
}

enum class Mode { Sync, AsyncEvent, AsyncQueueWait, NullQueueEvent };
const char *mode_name(Mode m) {
    switch (m) {
    case Mode::Sync:
        return "sync";
    case Mode::AsyncEvent:
        return "async+event";
    case Mode::AsyncQueueWait:
        return "async+queue_wait";
    case Mode::NullQueueEvent:
        return "async NULL queue+event";
    }
    return "?";
}

struct Shape {
    bool two_d;
    size_t width, height, spitch, dpitch;
    size_t src_offset, dst_offset; // misalignment of the window in its buffer
};

size_t extent(size_t width, size_t height, size_t pitch) {
    return (width == 0 || height == 0) ? 0 : (height - 1) * pitch + width;
}

// One copy: its buffers, the expected destination, and how it is run.
class CopyCase {
  public:
    CopyCase(const Shape &s, Mode mode, kupl_queue_h queue, uint64_t seed)
        : shape_(s), mode_(mode), queue_(queue), event_(make_event()) {
        size_t src_extent = extent(s.width, s.height, s.two_d ? s.spitch : s.width);
        size_t dst_extent = extent(s.width, s.height, s.two_d ? s.dpitch : s.width);
        src_ = pattern(s.src_offset + src_extent + kGuard, seed);
        dst_ = pattern(kGuard + s.dst_offset + dst_extent + kGuard, ~seed);
        src_sum_ = checksum(src_.data(), src_.size());
        expected_ = dst_;
        unsigned char *e = expected_.data() + kGuard + s.dst_offset;
        const unsigned char *in = src_.data() + s.src_offset;
        if (s.two_d) {
            for (size_t r = 0; r < s.height; ++r)
                std::memcpy(e + r * s.dpitch, in + r * s.spitch, s.width);
        } else if (s.width) {
            std::memcpy(e, in, s.width);
        }
    }

    std::string describe() const {
        std::ostringstream os;
        os << (shape_.two_d ? "2D" : "1D") << " width=" << shape_.width;
        if (shape_.two_d)
            os << " height=" << shape_.height << " spitch=" << shape_.spitch << " dpitch=" << shape_.dpitch;
        os << " src_off=" << shape_.src_offset << " dst_off=" << shape_.dst_offset
           << " mode=" << mode_name(mode_);
        return os.str();
    }

    int launch() {
        void *dst = dst_.data() + kGuard + shape_.dst_offset;
        const void *src = src_.data() + shape_.src_offset;
        const Shape &s = shape_;
        kupl_queue_h q = mode_ == Mode::NullQueueEvent ? nullptr : queue_;
        kupl_event_h e =
            (mode_ == Mode::AsyncEvent || mode_ == Mode::NullQueueEvent) ? event_.get() : nullptr;
        if (mode_ == Mode::Sync)
            return s.two_d ? kupl_memcpy2d(dst, s.dpitch, src, s.spitch, s.width, s.height)
                           : kupl_memcpy(dst, src, s.width);
        return s.two_d ? kupl_memcpy2d_async(dst, s.dpitch, src, s.spitch, s.width, s.height, q, e)
                       : kupl_memcpy_async(dst, src, s.width, q, e);
    }

    // Waits as the mode says; the queue-wait mode relies on the caller's queue wait.
    int finish() {
        if (mode_ == Mode::AsyncEvent || mode_ == Mode::NullQueueEvent)
            return kupl_event_wait(event_.get());
        return KUPL_OK;
    }

    // Empty string if the destination is exactly as memcpy would leave it.
    std::string verify() const {
        std::ostringstream os;
        size_t at = first_difference(dst_.data(), expected_.data(), dst_.size());
        if (at != SIZE_MAX) {
            os << "byte " << at << " of the destination buffer is " << int(dst_[at]) << ", expected "
               << int(expected_[at]) << " (" << where(at) << ")";
            return os.str();
        }
        if (checksum(src_.data(), src_.size()) != src_sum_)
            return "the source buffer changed";
        return {};
    }

    Mode mode() const { return mode_; }

  private:
    std::string where(size_t at) const {
        if (at < kGuard + shape_.dst_offset)
            return "guard before the window";
        size_t rel = at - kGuard - shape_.dst_offset;
        size_t pitch = shape_.two_d ? shape_.dpitch : shape_.width;
        size_t ext = extent(shape_.width, shape_.height, pitch);
        if (rel >= ext)
            return "guard after the window";
        if (shape_.two_d && pitch && rel % pitch >= shape_.width)
            return "gap between rows " + std::to_string(rel / pitch) + " and " +
                   std::to_string(rel / pitch + 1);
        return "inside the window, row " + std::to_string(pitch ? rel / pitch : 0) + " column " +
               std::to_string(pitch ? rel % pitch : rel);
    }

    Shape shape_;
    Mode mode_;
    kupl_queue_h queue_;
    Event event_;
    std::vector<unsigned char> src_, dst_, expected_;
    uint64_t src_sum_;
};

class Differential : public ::testing::Test {
  protected:
    void SetUp() override {
        seed_ = test_seed();
        rng_.seed(seed_ ^
                  std::hash<std::string>{}(::testing::UnitTest::GetInstance()->current_test_info()->name()));
        for (int i = 0; i < 3; ++i)
            queues_.push_back(make_queue());
        info_ = engine_info();
    }

    size_t uniform(size_t lo, size_t hi) { return std::uniform_int_distribution<size_t>(lo, hi)(rng_); }
    bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
    size_t log_uniform(size_t hi) {
        double x = std::uniform_real_distribution<double>(0, std::log(double(hi)))(rng_);
        return std::max<size_t>(1, size_t(std::exp(x)));
    }
    Mode any_mode() { return static_cast<Mode>(uniform(0, 3)); }
    kupl_queue_h any_queue() { return queues_[uniform(0, queues_.size() - 1)].get(); }

    // Sizes just below, at and above each of the engine's thresholds, and a few classics.
    std::vector<size_t> threshold_sizes() const {
        std::vector<size_t> v = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 63, 64, 65, 255, 256, 4095, 4096, 4097};
        for (size_t t : {info_.inline_threshold, info_.mt_threshold, info_.sync_threshold, info_.nt_threshold,
                         2 * info_.mt_threshold})
            if (t > 1 && t + 1 <= kMaxBytes)
                for (size_t s : {t - 1, t, t + 1})
                    v.push_back(s);
        return v;
    }

    Shape random_1d() {
        Shape s{};
        double r = std::uniform_real_distribution<double>(0, 1)(rng_);
        if (r < 0.3) {
            auto sizes = threshold_sizes();
            s.width = sizes[uniform(0, sizes.size() - 1)];
        } else if (r < 0.7) {
            s.width = log_uniform(64u << 10);
        } else {
            s.width = log_uniform(kMaxBytes);
        }
        s.height = 1;
        s.src_offset = uniform(0, 63);
        s.dst_offset = uniform(0, 63);
        return s;
    }

    Shape random_2d() {
        Shape s{};
        s.two_d = true;
        double r = std::uniform_real_distribution<double>(0, 1)(rng_);
        if (r < 0.45)
            s.width = uniform(1, 64);
        else if (r < 0.8)
            s.width = log_uniform(4096);
        else
            s.width = log_uniform(256u << 10);
        if (chance(0.2)) { // aim the total at a threshold
            auto sizes = threshold_sizes();
            size_t total = sizes[uniform(0, sizes.size() - 1)];
            s.height = std::max<size_t>(1, total / s.width);
        } else {
            s.height = log_uniform(4096);
        }
        if (chance(0.03))
            s.height = 0;
        auto gap = [&]() -> size_t {
            if (chance(0.25))
                return 0; // pitch == width
            return chance(0.8) ? uniform(1, 200) : uniform(201, 8192);
        };
        s.spitch = s.width + gap();
        s.dpitch = s.width + gap();
        // Keep each buffer to a few MiB.
        size_t max_pitch = std::max(s.spitch, s.dpitch);
        if (s.height > 1 && max_pitch * s.height > kMaxBytes)
            s.height = std::max<size_t>(1, kMaxBytes / max_pitch);
        if (chance(0.05))
            s.width = 0;
        s.src_offset = uniform(0, 63);
        s.dst_offset = uniform(0, 63);
        return s;
    }

    // Launches the cases (a batch in flight at once), waits, checks every one.
    void run_batch(std::vector<std::unique_ptr<CopyCase>> &batch, int first_index) {
        for (size_t i = 0; i < batch.size(); ++i)
            ASSERT_EQ(batch[i]->launch(), KUPL_OK) << trace(*batch[i], first_index + int(i));
        for (size_t i = 0; i < batch.size(); ++i)
            ASSERT_EQ(batch[i]->finish(), KUPL_OK) << trace(*batch[i], first_index + int(i));
        for (auto &q : queues_)
            ASSERT_EQ(kupl_queue_wait(q.get()), KUPL_OK) << "seed " << seed_;
        for (size_t i = 0; i < batch.size(); ++i) {
            std::string bad = batch[i]->verify();
            ASSERT_TRUE(bad.empty()) << bad << "\n" << trace(*batch[i], first_index + int(i));
        }
    }

    std::string trace(const CopyCase &c, int index) const {
        std::ostringstream os;
        os << "case " << index << ": " << c.describe() << " [seed " << seed_
           << "; rerun with KUPL_TEST_SEED=" << seed_ << "]";
        return os.str();
    }

    template <class MakeShape> void run_random(int cases, MakeShape make) {
        const size_t batch_size = 6;
        std::vector<std::unique_ptr<CopyCase>> batch;
        int first = 0;
        for (int i = 0; i < cases; ++i) {
            Shape s = make();
            batch.push_back(std::make_unique<CopyCase>(s, any_mode(), any_queue(), rng_()));
            if (batch.size() == batch_size || i + 1 == cases) {
                run_batch(batch, first);
                if (HasFatalFailure())
                    return;
                batch.clear();
                first = i + 1;
            }
        }
    }

    uint64_t seed_ = 0;
    std::mt19937_64 rng_;
    std::vector<Queue> queues_;
    kuplx_engine_info_t info_{};
};

} // namespace

TEST_F(Differential, Random1D) {
    run_random(scaled(400), [&] { return random_1d(); });
}

TEST_F(Differential, Random2D) {
    run_random(scaled(400), [&] { return random_2d(); });
}

// Every threshold size through every mode at a few alignments, deterministically.
TEST_F(Differential, ThresholdSizes1DEveryMode) {
    int index = 0;
    for (size_t n : threshold_sizes())
        for (int m = 0; m < 4; ++m) {
            std::vector<std::unique_ptr<CopyCase>> batch;
            for (size_t off : {0, 1, 7, 63}) {
                Shape s{false, n, 1, 0, 0, off, (off * 5) % 64};
                batch.push_back(std::make_unique<CopyCase>(s, Mode(m), queues_[m % 3].get(), n * 31 + off));
            }
            run_batch(batch, index);
            if (HasFatalFailure())
                return;
            index += int(batch.size());
        }
}

TEST_F(Differential, ThresholdTotals2DEveryMode) {
    int index = 0;
    for (size_t total : threshold_sizes()) {
        for (size_t width : {1, 3, 8, 64, 1000}) {
            std::vector<std::unique_ptr<CopyCase>> batch;
            size_t height = std::max<size_t>(1, total / width);
            for (int m = 0; m < 4; ++m) {
                size_t gap = m == 0 ? 0 : 13 * size_t(m);
                Shape s{true, width, height, width + gap, width + (m % 2 ? 0 : 5), size_t(m), size_t(3 * m)};
                if (std::max(s.spitch, s.dpitch) * height > (16u << 20))
                    continue; // a narrow column that tall would need hundreds of MiB
                if (kSlowdown > 1 && height > 20000)
                    continue; // sanitizers intercept every row's memcpy: millions of rows take minutes
                batch.push_back(std::make_unique<CopyCase>(s, Mode(m), queues_[m % 3].get(), total + width));
            }
            if (batch.empty())
                continue;
            run_batch(batch, index);
            if (HasFatalFailure())
                return;
            index += int(batch.size());
        }
    }
}

// Widths 1..64 each with a narrow gap: the row kernels for small widths.
TEST_F(Differential, EveryNarrowWidth2D) {
    for (size_t width = 1; width <= 64; ++width) {
        std::vector<std::unique_ptr<CopyCase>> batch;
        for (int m = 0; m < 4; ++m) {
            Shape s{true, width, 37 + width, width + size_t(m) * 3, width + size_t(m), size_t(m), width % 16};
            batch.push_back(std::make_unique<CopyCase>(s, Mode(m), queues_[m % 3].get(), width * 4 + m));
        }
        run_batch(batch, int(width) * 4);
        if (HasFatalFailure())
            return;
    }
}

// Pitch is only checked against width when there is more than one row.
TEST_F(Differential, SingleRowIgnoresPitch) {
    std::vector<std::unique_ptr<CopyCase>> batch;
    for (int m = 0; m < 4; ++m) {
        Shape s{true, 1000, 1, 10, 0, 1, 2};
        batch.push_back(std::make_unique<CopyCase>(s, Mode(m), queues_[0].get(), 77 + m));
    }
    run_batch(batch, 0);
}

// Many copies of mixed shapes in flight on several queues before anything waits.
TEST_F(Differential, ManyInFlightAcrossQueues) {
    std::vector<std::unique_ptr<CopyCase>> batch;
    for (int i = 0; i < scaled(96); ++i) {
        Shape s = chance(0.5) ? random_1d() : random_2d();
        Mode m = chance(0.5) ? Mode::AsyncEvent : Mode::AsyncQueueWait;
        batch.push_back(std::make_unique<CopyCase>(s, m, any_queue(), rng_()));
    }
    run_batch(batch, 0);
}

// Zero bytes, zero rows or zero-width rows: valid calls that change nothing (and
// still complete their event).
TEST_F(Differential, EmptyCopiesChangeNothing) {
    std::vector<std::unique_ptr<CopyCase>> batch;
    for (int m = 0; m < 4; ++m) {
        batch.push_back(
            std::make_unique<CopyCase>(Shape{false, 0, 1, 0, 0, 3, 5}, Mode(m), queues_[0].get(), 1));
        batch.push_back(
            std::make_unique<CopyCase>(Shape{true, 0, 10, 16, 16, 1, 2}, Mode(m), queues_[1].get(), 2));
        batch.push_back(
            std::make_unique<CopyCase>(Shape{true, 16, 0, 16, 16, 4, 0}, Mode(m), queues_[2].get(), 3));
    }
    run_batch(batch, 0);
}
