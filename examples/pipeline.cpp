// pipeline.cpp — a chunked copy/compute pipeline on two queues.
//
// Input arrives in a large buffer; each chunk is copied into one of four staging
// buffers on the copy queue, then transformed on the compute queue, which waits for
// that chunk's copy event. The copy of chunk i+4 into the same staging buffer waits
// for the compute of chunk i. Neither wait blocks this thread
// (kuplx_queue_wait_event_async), so copy and compute of neighbouring chunks overlap.
// The compute sweeps each staged chunk in cache, as many times as makes it take
// about as long as the chunk's copy: a pipeline only pays off when the compute is
// not itself limited by memory bandwidth.
// Usage: pipeline [MiB of input, default 64]. Exit status 1 if the output is wrong.
#include "kupl.h"
#include "kupl_ext.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr size_t kChunkFloats = 256 * 1024; // 1 MiB chunks: a chunk stays in cache while it is swept
constexpr size_t kSlots = 4;                // staging buffers: the copy may run this far ahead

// The compute stage: `passes` in-place sweeps of x = x * 0.999 + 0.5 over the staged
// chunk, then its sum. It touches only the chunk (in cache), so it competes with the
// copy for cores, not for memory bandwidth.
double process(float *chunk, size_t n, int passes) {
    for (int p = 0; p < passes; ++p)
        for (size_t i = 0; i < n; ++i)
            chunk[i] = chunk[i] * 0.999f + 0.5f;
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i)
        sum += chunk[i];
    return sum;
}

} // namespace

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 64;
    if (mib == 0)
        mib = 64;
    const size_t chunks = std::max<size_t>(1, mib * (1u << 20) / (kChunkFloats * sizeof(float)));
    const size_t total = chunks * kChunkFloats;

    std::vector<float> input(total);
    std::vector<double> output(chunks), expected(chunks); // one sum per chunk
    for (size_t i = 0; i < total; ++i)
        input[i] = float(i % 10007);
    std::vector<std::vector<float>> staging(kSlots, std::vector<float>(kChunkFloats));

    kupl_queue_h copy_q = kupl_queue_create();
    kupl_queue_h compute_q = kupl_queue_create();
    std::vector<kupl_event_h> copied(chunks), computed(chunks);
    for (size_t c = 0; c < chunks; ++c) {
        copied[c] = kupl_event_create();
        computed[c] = kupl_event_create();
    }

    // Calibrate: sweeps per chunk so that computing a chunk takes about as long as copying it.
    double copy_time = 1e30, sweep_time = 1e30;
    for (int r = 0; r < 3; ++r) {
        double t0 = kupl_get_wtime();
        for (size_t c = 0; c < chunks; ++c)
            kupl_memcpy(staging[0].data(), &input[c * kChunkFloats], kChunkFloats * sizeof(float));
        double t1 = kupl_get_wtime();
        for (size_t c = 0; c < chunks; ++c)
            process(staging[0].data(), kChunkFloats, 4);
        double t2 = kupl_get_wtime();
        copy_time = std::min(copy_time, t1 - t0);
        sweep_time = std::min(sweep_time, (t2 - t1) / 4);
    }
    const int passes = std::max(1, int(copy_time / sweep_time + 0.5));

    // Serial baseline: copy a chunk, then transform it, one after the other.
    auto run_serial = [&] {
        for (size_t c = 0; c < chunks; ++c) {
            kupl_memcpy(staging[0].data(), &input[c * kChunkFloats], kChunkFloats * sizeof(float));
            expected[c] = process(staging[0].data(), kChunkFloats, passes);
        }
    };
    // The pipeline: only enqueues; the one wait is at the end.
    auto run_pipelined = [&] {
        int rc = KUPL_OK;
        for (size_t c = 0; c < chunks; ++c) {
            float *stage = staging[c % kSlots].data();
            if (c >= kSlots) // do not overwrite a staging buffer before its last chunk was computed
                rc |= kuplx_queue_wait_event_async(copy_q, computed[c - kSlots]);
            rc |= kupl_memcpy_async(stage, &input[c * kChunkFloats], kChunkFloats * sizeof(float), copy_q,
                                    copied[c]);
            rc |= kuplx_queue_wait_event_async(compute_q, copied[c]);
            double *out = &output[c];
            rc |= kupl::queue_submit(compute_q, nullptr,
                                     [stage, out, passes] { *out = process(stage, kChunkFloats, passes); });
            rc |= kupl_event_record(computed[c], compute_q);
        }
        rc |= kupl_queue_wait(compute_q);
        return rc;
    };

    // Medians of a few runs each, after one warm-up run of each.
    constexpr int kRepeats = 5;
    std::vector<double> serial_times, pipelined_times;
    int rc = KUPL_OK;
    for (int r = 0; r <= kRepeats; ++r) {
        double t0 = kupl_get_wtime();
        run_serial();
        double t1 = kupl_get_wtime();
        std::fill(output.begin(), output.end(), 0.0);
        double t2 = kupl_get_wtime();
        rc |= run_pipelined();
        double t3 = kupl_get_wtime();
        if (r > 0) {
            serial_times.push_back(t1 - t0);
            pipelined_times.push_back(t3 - t2);
        }
    }
    std::sort(serial_times.begin(), serial_times.end());
    std::sort(pipelined_times.begin(), pipelined_times.end());
    const double serial = serial_times[kRepeats / 2], pipelined = pipelined_times[kRepeats / 2];

    bool ok = rc == KUPL_OK && output == expected;
    std::printf(
        "kupl pipeline example: %zu chunks of %zu KiB, copy queue -> compute queue (%d sweeps/chunk)\n",
        chunks, kChunkFloats * sizeof(float) / 1024, passes);
    std::printf("  serial (copy, then compute) : %8.2f ms\n", serial * 1e3);
    std::printf("  pipelined on two queues     : %8.2f ms  (%.2fx)\n", pipelined * 1e3, serial / pipelined);
    std::printf("  (medians of %d runs)\n", kRepeats);
    std::printf("  result check                : %s\n", ok ? "every chunk's result correct" : "MISMATCH");

    for (size_t c = 0; c < chunks; ++c) {
        kupl_event_destroy(copied[c]);
        kupl_event_destroy(computed[c]);
    }
    kupl_queue_destroy(copy_q);
    kupl_queue_destroy(compute_q);
    return ok ? 0 : 1;
}
