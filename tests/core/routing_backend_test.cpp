// The software copy backend routing split copies to the channels of their destination's NUMA
// node, on the saved Kunpeng 920 topology (4 nodes; tests/core/topologies/). The real backend,
// built from its sources, with real channel threads; hwloc loads the saved machine, so binding is
// a no-op, and the node of each destination buffer is assigned by the test (the one thing this
// 1-node machine cannot provide), through the backend's `locate` hook.
#include "copy/software/software_backend.h"
#include "topo/placement.h"
#include "topo/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#ifndef KUPL_TOPOLOGIES_DIR
#error "KUPL_TOPOLOGIES_DIR must name tests/core/topologies"
#endif

namespace {

using namespace std::chrono_literals;
using kupl::copy::CopyCompletion;
using kupl::copy::CopyDescriptor;
using kupl::copy::SoftwareBackend;
using kupl::copy::SoftwareBackendOptions;

#ifdef KUPL_TEST_SANITIZED
constexpr int kScale = 8;
#else
constexpr int kScale = 1;
#endif

constexpr std::size_t kBytes = 1 << 20; // split: 8 pieces of 128 KiB on 4 channels

// Counts its calls; optionally holds the thread that completes it until released.
class Completion final : public CopyCompletion {
  public:
    explicit Completion(bool hold = false) : hold_(hold) {}
    void copy_done(const char *error) override {
        std::unique_lock<std::mutex> lock(mutex_);
        error_ = error;
        ++calls_;
        changed_.notify_all();
        if (hold_)
            changed_.wait(lock, [this] { return released_; });
    }
    bool wait_for(std::chrono::milliseconds limit) {
        std::unique_lock<std::mutex> lock(mutex_);
        return changed_.wait_for(lock, limit, [this] { return calls_ > 0; });
    }
    int calls() {
        std::lock_guard<std::mutex> lock(mutex_);
        return calls_;
    }
    const char *error() {
        std::lock_guard<std::mutex> lock(mutex_);
        return error_;
    }
    void release() {
        std::lock_guard<std::mutex> lock(mutex_);
        released_ = true;
        changed_.notify_all();
    }

  private:
    const bool hold_;
    std::mutex mutex_;
    std::condition_variable changed_;
    int calls_ = 0;
    const char *error_ = nullptr;
    bool released_ = false;
};

// A destination buffer that "lives" on a given node.
struct Buffer {
    std::vector<unsigned char> bytes;
    int node;
};

class RoutingBackend : public ::testing::Test {
  protected:
    void SetUp() override {
        // Each test is its own process (gtest_discover_tests): nothing else has loaded hwloc yet.
        ASSERT_EQ(setenv("HWLOC_XMLFILE", KUPL_TOPOLOGIES_DIR "/kunpeng920_2s4n128c.xml", 1), 0);
        topology_ = std::make_unique<kupl::topo::Topology>();
        ASSERT_EQ(topology_->num_numa_nodes(), 4);
        source_.resize(kBytes);
        for (std::size_t i = 0; i < kBytes; ++i)
            source_[i] = static_cast<unsigned char>(i * 131 + 7);
    }

    // One channel per node (KUPL_NUM_CHANNELS=4), no waiting callers counted as helpers.
    std::unique_ptr<SoftwareBackend> start(int channels) {
        kupl::topo::PlacementInputs inputs;
        inputs.num_channels = channels;
        SoftwareBackendOptions options;
        options.plan = topology_->plan(inputs);
        options.num_channels = static_cast<int>(options.plan.channels.size());
        options.helpers = 0;
        options.locate = [this](const void *address) { return node_of(address); };
        return std::make_unique<SoftwareBackend>(options, *topology_, counters_);
    }

    Buffer *buffer(int node, std::size_t bytes = kBytes) {
        std::lock_guard<std::mutex> lock(buffers_mutex_);
        buffers_.push_back(std::make_unique<Buffer>(Buffer{std::vector<unsigned char>(bytes, 0), node}));
        return buffers_.back().get();
    }

    int node_of(const void *address) {
        std::lock_guard<std::mutex> lock(buffers_mutex_);
        for (const auto &b : buffers_) {
            const auto *first = b->bytes.data();
            if (address >= first && address < first + b->bytes.size())
                return b->node;
        }
        return -1;
    }

    CopyDescriptor copy_to(Buffer *to, std::size_t bytes = kBytes) const {
        CopyDescriptor copy;
        copy.dst = to->bytes.data();
        copy.src = source_.data();
        copy.width = bytes;
        copy.dpitch = copy.spitch = bytes;
        return copy;
    }

    bool landed(const Buffer *b, std::size_t bytes = kBytes) const {
        return std::memcmp(b->bytes.data(), source_.data(), bytes) == 0;
    }

    std::unique_ptr<kupl::topo::Topology> topology_;
    kupl::support::Counters counters_;
    std::vector<unsigned char> source_;
    std::mutex buffers_mutex_; // guards buffers_ (locate runs on the submitting threads)
    std::vector<std::unique_ptr<Buffer>> buffers_;
};

TEST_F(RoutingBackend, ChannelsArePlacedOnePerNode) {
    auto backend = start(4);
    ASSERT_EQ(backend->num_channels(), 4);
    EXPECT_EQ(backend->channel_placement(0), "numa 0 (cpus 0-31)");
    EXPECT_EQ(backend->channel_placement(1), "numa 1 (cpus 32-63)");
    EXPECT_EQ(backend->channel_placement(2), "numa 2 (cpus 64-95)");
    EXPECT_EQ(backend->channel_placement(3), "numa 3 (cpus 96-127)");
}

TEST_F(RoutingBackend, SplitCopyWaitsForItsNodesChannelWhileOthersRun) {
    auto backend = start(4);
    Buffer *a = buffer(0), *b = buffer(0), *c = buffer(1), *d = buffer(-1);
    // A, for node 0: node 0's only channel completes it and is held there.
    Completion done_a(true), done_b, done_c, done_d;
    ASSERT_EQ(backend->submit(copy_to(a), &done_a), nullptr);
    ASSERT_TRUE(done_a.wait_for(10s));
    // B, also for node 0, must wait for that channel although three others are idle; C (node 1)
    // and D (node unknown: any channel) run.
    ASSERT_EQ(backend->submit(copy_to(b), &done_b), nullptr);
    ASSERT_EQ(backend->submit(copy_to(c), &done_c), nullptr);
    ASSERT_EQ(backend->submit(copy_to(d), &done_d), nullptr);
    ASSERT_TRUE(done_c.wait_for(10s));
    ASSERT_TRUE(done_d.wait_for(10s));
    EXPECT_TRUE(landed(c));
    EXPECT_TRUE(landed(d));
    std::this_thread::sleep_for(100ms);
    EXPECT_EQ(done_b.calls(), 0) << "a channel of another node took a piece routed to node 0";
    // A waiting caller (help_one) takes any node's pieces.
    int pieces = 0;
    while (done_b.calls() == 0 && backend->help_one())
        ++pieces;
    EXPECT_EQ(pieces, 8);
    EXPECT_EQ(done_b.calls(), 1);
    EXPECT_TRUE(landed(b));
    done_a.release();
    EXPECT_TRUE(landed(a));
    backend.reset(); // joins the channels
    for (Completion *done : {&done_a, &done_b, &done_c, &done_d}) {
        EXPECT_EQ(done->calls(), 1);
        EXPECT_EQ(done->error(), nullptr);
    }
}

TEST_F(RoutingBackend, UnsplitCopiesGoToAnyChannelAfterTheyPark) {
    auto backend = start(4);
    // Node 0's channel held: a small copy (one piece, never routed) still runs, also when every
    // channel has parked (the wake-up must reach the other nodes' channels).
    Buffer *a = buffer(0);
    Completion done_a(true);
    ASSERT_EQ(backend->submit(copy_to(a), &done_a), nullptr);
    ASSERT_TRUE(done_a.wait_for(10s));
    for (int round = 0; round < 20; ++round) {
        std::this_thread::sleep_for(2ms); // longer than the 50 us spin: the others park
        Buffer *small = buffer(0, 4096);
        Completion done;
        ASSERT_EQ(backend->submit(copy_to(small, 4096), &done), nullptr);
        ASSERT_TRUE(done.wait_for(10s)) << "round " << round;
        EXPECT_TRUE(landed(small, 4096));
    }
    done_a.release();
    backend.reset(); // joins the channels: the held one has left done_a before done_a goes
    EXPECT_EQ(done_a.calls(), 1);
}

TEST_F(RoutingBackend, ManyThreadsManyNodesEveryCopyLandsOnce) {
    auto backend = start(8); // two channels per node
    constexpr int kThreads = 4;
    const int per_thread = 40 / kScale;
    std::vector<std::vector<Buffer *>> targets(kThreads);
    std::mt19937 random(12);
    for (auto &list : targets)
        for (int i = 0; i < per_thread; ++i)
            list.push_back(buffer(static_cast<int>(random() % 5) - 1, (random() % 2) ? kBytes : 64 << 10));
    std::vector<std::unique_ptr<Completion>> completions(kThreads * per_thread);
    for (auto &c : completions)
        c = std::make_unique<Completion>();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < per_thread; ++i) {
                Buffer *to = targets[t][i];
                Completion &done = *completions[t * per_thread + i];
                EXPECT_EQ(backend->submit(copy_to(to, to->bytes.size()), &done), nullptr);
                if (t % 2 == 0) // half the submitters help, as waiting callers do
                    while (done.calls() == 0 && backend->help_one()) {
                    }
            }
        });
    for (auto &thread : threads)
        thread.join();
    for (auto &c : completions)
        ASSERT_TRUE(c->wait_for(30s));
    backend.reset();
    for (int t = 0; t < kThreads; ++t)
        for (int i = 0; i < per_thread; ++i) {
            EXPECT_EQ(completions[t * per_thread + i]->calls(), 1);
            EXPECT_TRUE(landed(targets[t][i], targets[t][i]->bytes.size())) << t << "/" << i;
        }
}

} // namespace
