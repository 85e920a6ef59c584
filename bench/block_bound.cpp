// memcap/bench/block_bound.cpp — the arithmetic lower bound on the time of a `memcap run`
// block of associative-recall cells, with the two rates it rests on measured in this run.
//
//   memcap_block_bound -m softmax -m linear -m delta -m hrr -t assoc_recall
//                      --n 4 8 16 32 64 128 256 512 --seeds 200 --d 64 [--threads T]
//
// takes the arguments of the `memcap run` it bounds (memories, task, sizes, seeds, d; the
// natural budget and the native readout, as that run uses) and prints
//
//   work    FLOPs of every cell, summed: each memory's declared cost model
//           (MemoryEntry::cost, memories/<name>/entry.cpp) for one write_batch of the n pairs
//           and one read_batch of the episode's queries, plus the scoring of each read
//           against the n candidates, 2 · queries · n · d_v (the GEMM of score_reads);
//           normals drawn: the episode's keys and values, n · (d_k + d_v), and the
//           queries' noise or random queries when the task draws them — once per
//           (n, seed), since the memories of a block read one shared episode
//   rates   SGEMM (Eigen, 1024³) FLOP/s and Rng::fill_normal normals/s (2^20 floats),
//           one thread, median of 5, by the thread's CPU time, measured now
//   bound   cpu  = FLOPs / SGEMM rate + normals / normal rate   (one core)
//           wall = cpu / T                                     (T threads, perfectly split)
//
// The two terms are added, not maxed: both run on the same core's vector units one
// after the other (a max would assume they overlap, as compute and memory traffic do
// in a roofline). The SGEMM rate is the best this build reaches on a large GEMM, so the
// bound is optimistic for the small GEMMs, the FFTs and the softmax of the block: it is
// a floor, not a prediction. The last line is for scripts:
//
//   bound_cpu_s=0.0761 bound_wall_s=0.0381 gflop=10.03 mnormals=26.1 sgemm_gflops=167.2 gnormals_per_s=1.67
//
// Exit status 2 with a one-line error for arguments it does not model (another readout
// or a budget are not taken; an assoc_recall with absent queries or a vocabulary).
#include "core/error.hpp"
#include "core/rng.hpp"
#include "bench/thread_timing.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <Eigen/Core>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace memcap;

using bench::median_seconds;
using bench::thread_seconds;

/// FLOP/s of a 1024³ SGEMM through Eigen (as bench_memories.cpp's ceiling/sgemm).
double sgemm_rate() {
    constexpr int size = 1024;
    const Eigen::MatrixXf a = Eigen::MatrixXf::Random(size, size), b = Eigen::MatrixXf::Random(size, size);
    Eigen::MatrixXf c(size, size);
    volatile float sink = 0;
    const auto run = [&] { c.noalias() = a * b; sink = sink + c(0, 0); };
    run();  // warm-up: packing buffers, page faults
    return 2.0 * size * double(size) * size / median_seconds(5, run);
}

/// Normals/s of Rng::fill_normal into 2^20 floats (as bench_rng.cpp's normal/fill_normal<float>).
double normal_rate() {
    constexpr Eigen::Index count = Eigen::Index{1} << 20;
    Rng rng = Rng::stream("bench/block_bound");
    Vec v(count);
    volatile float sink = 0;
    const auto run = [&] { rng.fill_normal(v); sink = sink + v(0); };
    run();
    return double(count) / median_seconds(5, run);
}

[[noreturn]] void refuse(const std::string& what) {
    std::fprintf(stderr, "memcap_block_bound: %s\n", what.c_str());
    std::exit(2);
}

std::int64_t positive(const std::string& flag, const char* text) {
    char* end = nullptr;
    const long long v = std::strtoll(text, &end, 10);
    if (end == text || *end != '\0' || v < 1) refuse(flag + " needs a positive integer, got '" + text + "'");
    return v;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        std::vector<Spec> memories;
        std::vector<std::int64_t> sizes;
        std::string task_text;
        std::int64_t seeds = 1, threads = 1;
        int d = 64;
        for (int i = 1; i < argc; ++i) {
            const std::string a = argv[i];
            const auto value = [&]() -> const char* {
                if (i + 1 >= argc) refuse(a + " needs a value");
                return argv[++i];
            };
            if (a == "-m" || a == "--memory") memories.push_back(parse_memory_spec(value()));
            else if (a == "-t" || a == "--task") task_text = value();
            else if (a == "--seeds") seeds = positive(a, value());
            else if (a == "--d") d = static_cast<int>(positive(a, value()));
            else if (a == "--threads") threads = positive(a, value());
            else if (a == "--n") {
                sizes.push_back(positive(a, value()));
                while (i + 1 < argc && argv[i + 1][0] != '-') sizes.push_back(positive(a, argv[++i]));
            } else refuse("unknown argument '" + a + "' (takes -m, -t, --n, --seeds, --d, --threads)");
        }
        if (memories.empty() || task_text.empty() || sizes.empty()) refuse("give -m MEMORY..., -t TASK and --n N...");
        const Spec task_spec = parse_task_spec(task_text);
        if (task_spec.name() != "assoc_recall") refuse("only assoc_recall is modelled, got '" + task_spec.name() + "'");
        if (task_spec.has("absent") || task_spec.integer("vocab") != 0)
            refuse("assoc_recall with absent queries or a vocabulary is not modelled");
        const auto task = make_task(task_spec);
        const bool noisy = task_spec.real("noise") > 0.0 || task_spec.real("cosine") < 1.0 ||
                           task_spec.text("control") == "shuffled_query";

        std::map<std::string, double> flops;  // by part, over the block
        double normals = 0.0;
        for (const std::int64_t n : sizes) {
            const TaskCell tc{n, d, 0};
            task->check(tc);
            const MemoryShape shape(task->inputs(tc), std::nullopt);
            const double episodes = double(task->test_episodes(tc)) * double(seeds);
            const std::int64_t queries = task->queries_per_episode(tc);
            normals += episodes * (double(n) * (shape.d_key + shape.d_value) + (noisy ? double(queries) * shape.d_key : 0.0));
            for (const Spec& m : memories) {
                const MemoryEntry& entry = find_memory(m.name());
                if (!entry.native_read || !entry.cost)
                    refuse("memory '" + m.name() + "' has no native read or no cost model to bound");
                flops[m.name() + " write"] += episodes * entry.cost(m, shape, Kernel::write_batch, 0, n).flops;
                flops[m.name() + " read"] += episodes * entry.cost(m, shape, Kernel::read_batch, n, queries).flops;
                flops["scoring"] += episodes * 2.0 * double(queries) * double(n) * shape.d_value;
            }
        }
        double total = 0.0;
        for (const auto& [part, f] : flops) total += f;

        const double gemm = sgemm_rate(), draw = normal_rate();
        const double cpu = total / gemm + normals / draw, wall = cpu / double(threads);
        std::printf("work: %.3f GFLOP, %.1f M normals\n", total * 1e-9, normals * 1e-6);
        for (const auto& [part, f] : flops)
            std::printf("  %-16s %8.3f GFLOP  %7.2f ms at the SGEMM rate\n", part.c_str(), f * 1e-9, 1e3 * f / gemm);
        std::printf("  %-16s %8.1f M      %7.2f ms at the normal rate\n", "normals", normals * 1e-6, 1e3 * normals / draw);
        std::printf("rates (one thread, median of 5, thread CPU time, now): SGEMM %.1f GFLOP/s, fill_normal %.3f G normals/s\n",
                    gemm * 1e-9, draw * 1e-9);
        std::printf("bound: %.4f s on one core (CPU time), %.4f s wall on %lld threads\n", cpu, wall,
                    static_cast<long long>(threads));
        std::printf("bound_cpu_s=%.4f bound_wall_s=%.4f gflop=%.3f mnormals=%.2f sgemm_gflops=%.1f gnormals_per_s=%.3f\n", cpu,
                    wall, total * 1e-9, normals * 1e-6, gemm * 1e-9, draw * 1e-9);
        return 0;
    } catch (const UsageError& e) {
        refuse(e.what());
    }
}
