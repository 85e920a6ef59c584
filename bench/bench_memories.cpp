// memcap/bench/bench_memories.cpp — micro-benchmarks of every backend, with a roofline.
//
// Registered from the memory registry (memory_registry()): for every
// backend, `<name>/write_batch` (reset, then write n pairs) and
// `<name>/read_batch` (n queries of a memory holding n pairs), at budgets
// {1024, 4096, 16384} floats and n ∈ {64, 512, 4096}, d = 64, default
// parameters. A backend added to the table is benchmarked with no change here.
// Every backend with a causal backward (a trainable one) also has
// `<name>/causal_train` (bm_causal_train: a trained layer's memory work on one
// episode of n tokens, d = 32, 1024 floats). Two of the kernels under them are
// timed alone, in FLOP/s beside the SGEMM ceiling: `kernel/product` (core/simd.hpp's
// register tile: 256 rows × d by d × cols) and `kernel/nearest` (the readout's
// scoring, harness/eval/nearest.cpp: 256 reads against n candidates of width d).
//
// Counters, from the backend's declared FLOP-and-byte model (MemoryEntry::cost):
//   items     pairs written or queries read per second (items/s)
//   FLOP      declared FLOPs per second;  bytes  declared compulsory bytes per second
//   roofline_frac  (the roofline's lower bound on the time) / (measured time),
//             bound = max(FLOPs / peak, bytes / bandwidth): 1 = at the roofline.
//
// The two ceilings are measured by this binary, in this run, before the
// benchmarks start (median of 5, single thread): `peak` = a 1024³ SGEMM
// through Eigen (EIGEN_DONT_PARALLELIZE), `bandwidth` = a STREAM triad
// a = b + s·c over three arrays of 64 MiB (STREAM's convention: 12 bytes per
// element, write-allocate traffic not counted). They go into the JSON context
// (`peak_sgemm_gflops`, `triad_gbps`) and are also registered as the
// benchmarks `ceiling/sgemm` and `ceiling/triad`. All times are the thread's
// CPU time (the machine is shared; descheduled time is not counted).
//
// The ceilings are compiled with the same flags as the kernels (one set for the
// whole build), so they use the build's ISA: AVX2/FMA/AVX-512 in the default
// native build, SSE2 with -DMEMCAP_PORTABLE=ON. The context says which (`isa`:
// "native (-march=...: extensions)" or "portable x86-64 ..."), with the CPU
// model and the commit, and so does the ceilings line on stderr.
#include "harness/eval/nearest.hpp"
#include "harness/results/manifest.hpp"
#include "harness/train/layer.hpp"
#include "bench/thread_timing.hpp"
#include "memories/registry.hpp"
#include "core/simd.hpp"

#include <benchmark/benchmark.h>

#include <Eigen/Core>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

namespace {

using namespace memcap;

using bench::median_seconds;
using bench::thread_seconds;

constexpr int kGemmSize = 1024;
constexpr Eigen::Index kTriadFloats = Eigen::Index{1} << 24;  // 64 MiB per array, 2× the L3

struct GemmOperands {
    Eigen::MatrixXf a = Eigen::MatrixXf::Random(kGemmSize, kGemmSize), b = Eigen::MatrixXf::Random(kGemmSize, kGemmSize),
                    c = Eigen::MatrixXf::Zero(kGemmSize, kGemmSize);
    void run() { c.noalias() = a * b; benchmark::DoNotOptimize(c.data()); }
    static double flops() { return 2.0 * kGemmSize * double(kGemmSize) * kGemmSize; }
};

struct TriadOperands {
    Eigen::ArrayXf a = Eigen::ArrayXf::Zero(kTriadFloats), b = Eigen::ArrayXf::Constant(kTriadFloats, 1.0f),
                   c = Eigen::ArrayXf::Constant(kTriadFloats, 2.0f);
    void run() { a = b + 3.0f * c; benchmark::DoNotOptimize(a.data()); }
    static double bytes() { return 3.0 * sizeof(float) * double(kTriadFloats); }
};

struct Ceilings {
    double peak_flops = 0.0;  // FLOP/s
    double bandwidth = 0.0;   // bytes/s
};
Ceilings g_ceilings;

Ceilings measure_ceilings() {
    Ceilings c;
    {
        GemmOperands g;
        g.run();  // warm-up: packing buffers, page faults
        c.peak_flops = GemmOperands::flops() / median_seconds(5, [&] { g.run(); });
    }
    {
        TriadOperands t;
        t.run();
        c.bandwidth = TriadOperands::bytes() / median_seconds(5, [&] { t.run(); });
    }
    return c;
}

void bm_sgemm(benchmark::State& state) {
    GemmOperands g;
    for (auto _ : state) g.run();
    state.counters["FLOP"] = benchmark::Counter(GemmOperands::flops(), benchmark::Counter::kIsIterationInvariantRate);
}

void bm_triad(benchmark::State& state) {
    TriadOperands t;
    for (auto _ : state) t.run();
    state.counters["bytes"] = benchmark::Counter(TriadOperands::bytes(), benchmark::Counter::kIsIterationInvariantRate);
}

RowMat unit_rows(Rng& rng, Eigen::Index n, Eigen::Index d) {
    RowMat m(n, d);
    rng.fill_normal(m);
    normalise_rows(m);
    return m;
}

void bm_kernel(benchmark::State& state, const MemoryEntry* entry, Kernel kernel) {
    const std::int64_t budget = state.range(0), n = state.range(1);
    const Spec spec = parse_memory_spec(entry->name);
    MemoryShape shape;
    shape.budget_floats = budget;
    Rng rng = Rng::stream("bench", entry->name, budget, n);
    const RowMat keys = unit_rows(rng, n, shape.d_key), values = unit_rows(rng, n, shape.d_value);
    auto memory = make_memory(spec, shape, 0);
    // One write before the clock starts: one-time work a memory defers to its first batch
    // (HRR builds its maps' spectra then) is set-up, not the kernel measured here.
    if (kernel == Kernel::write_batch) memory->write_batch(keys, values);
    const double t0 = thread_seconds();
    if (kernel == Kernel::write_batch) {
        for (auto _ : state) {
            memory->reset();
            memory->write_batch(keys, values);
            benchmark::DoNotOptimize(memory->state().data());
            benchmark::ClobberMemory();
        }
    } else {
        memory->write_batch(keys, values);
        // Two query sets read in turn, so no read repeats the one before it (the
        // softmax cache reuses the last weights for a repeated read; not measured here).
        const RowMat other = unit_rows(rng, n, shape.d_key);
        RowMat out(n, shape.d_value);
        bool turn = false;
        for (auto _ : state) {
            memory->read_batch((turn = !turn) ? keys : other, out);
            benchmark::DoNotOptimize(out.data());
            benchmark::ClobberMemory();
        }
    }
    const double seconds_per_call = (thread_seconds() - t0) / double(std::max<benchmark::IterationCount>(state.iterations(), 1));
    using benchmark::Counter;
    // Rates print as items=…/s, FLOP=…G/s, bytes=…G/s; in the JSON they are per second.
    state.counters["items"] = Counter(double(n), Counter::kIsIterationInvariantRate);
    if (!entry->cost) return;  // no declared model: throughput only
    const KernelCost cost = entry->cost(spec, shape, kernel, kernel == Kernel::write_batch ? 0 : n, n);
    state.counters["FLOP"] = Counter(cost.flops, Counter::kIsIterationInvariantRate);
    state.counters["bytes"] = Counter(cost.bytes, Counter::kIsIterationInvariantRate);
    state.counters["flops_per_item"] = Counter(cost.flops / double(n));
    state.counters["bytes_per_item"] = Counter(cost.bytes / double(n));
    // The roofline's lower bound on the time of one call over the measured time
    // of one call (the loop above timed with the same clock as the ceilings).
    const double bound_seconds = std::max(cost.flops / g_ceilings.peak_flops, cost.bytes / g_ceilings.bandwidth);
    state.counters["roofline_frac"] = Counter(bound_seconds / seconds_per_call);
}

/// A trained layer's memory work on one episode: reset, the causal form (the forward), then its
/// causal backward, over T = n tokens at d = 32 (the trained study's width) with the gate inputs
/// its layer gives (LayerRecipe::for_memory: constant decays e^-0.01, β = 0.5, write gate 0.01),
/// so a memory's training speed is measured on its own. items = tokens per second.
void bm_causal_train(benchmark::State& state, const MemoryEntry* entry) {
    const std::int64_t budget = state.range(0), n = state.range(1);
    MemoryShape shape(32, 32, budget);
    auto memory = make_memory(parse_memory_spec(entry->name), shape, 0);
    Rng rng = Rng::stream("bench causal_train", entry->name, budget, n);
    const RowMat q = unit_rows(rng, n, 32), k = unit_rows(rng, n, 32), v = unit_rows(rng, n, 32),
                 d_out = unit_rows(rng, n, 32);
    const train::LayerRecipe recipe = train::LayerRecipe::for_memory(*entry);
    TokenGates gates;
    using Decay = train::LayerRecipe::Decay;
    if (recipe.decay == Decay::scalar_softplus) gates.log_decay = RowMat::Constant(n, 1, -0.01f);
    else if (recipe.decay != Decay::none) gates.log_decay = RowMat::Constant(n, memory->state_floats() / 32, -0.01f);
    if (recipe.write_gate) gates.write_gate = Vec::Constant(n, 0.01f);
    if (recipe.beta) gates.beta = Vec::Constant(n, 0.5f);
    RowMat out(n, 32);
    CausalGrads grads;
    for (auto _ : state) {
        memory->reset();
        memory->causal(q, k, v, gates, out);
        memory->causal_backward(q, k, v, gates, d_out, grads);
        benchmark::DoNotOptimize(grads.d_keys.data());
        benchmark::ClobberMemory();
    }
    state.counters["items"] = benchmark::Counter(double(n), benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

/// core/simd.hpp's product: 256 rows × d by d × cols (args d, cols).
void bm_product(benchmark::State& state) {
    const Eigen::Index rows = 256, d = state.range(0), cols = state.range(1);
    Rng rng = Rng::stream("bench_product", d, cols);
    RowMat a(rows, d), b(d, cols), c(rows, cols);
    rng.fill_normal(a), rng.fill_normal(b);
    for (auto _ : state) {
        simd::product(a.data(), d, b.data(), cols, d, c.data(), cols, rows, cols);
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["FLOP"] = benchmark::Counter(2.0 * rows * d * cols, benchmark::Counter::kIsIterationInvariantRate);
}

/// The readout's scoring: the nearest of n candidates for each of 256 reads of width d (args d, n).
void bm_nearest(benchmark::State& state) {
    const Eigen::Index m = 256, d = state.range(0), n = state.range(1);
    Rng rng = Rng::stream("bench_nearest", d, n);
    RowMat reads(m, d), candidates(n, d);
    rng.fill_normal(reads), rng.fill_normal(candidates);
    CandidatePanel panel;
    panel.build(candidates);
    std::vector<int> best(static_cast<std::size_t>(m));
    for (auto _ : state) {
        nearest_candidates(reads, panel, best.data());
        benchmark::DoNotOptimize(best.data());
    }
    state.counters["FLOP"] = benchmark::Counter(2.0 * m * d * n, benchmark::Counter::kIsIterationInvariantRate);
}

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;

    g_ceilings = measure_ceilings();
    benchmark::AddCustomContext("peak_sgemm_gflops", std::to_string(g_ceilings.peak_flops * 1e-9));
    benchmark::AddCustomContext("triad_gbps", std::to_string(g_ceilings.bandwidth * 1e-9));
    benchmark::AddCustomContext("ceilings", "single thread, median of 5, measured at start-up of this run: "
                                            "SGEMM 1024^3 (Eigen), STREAM triad 3 x 64 MiB");
    const auto build = build_info();
    const std::string isa = isa_description(), cpu = machine_info()["cpu"].get<std::string>();
    benchmark::AddCustomContext("isa", isa);
    benchmark::AddCustomContext("cpu_model", cpu);
    benchmark::AddCustomContext("eigen_simd", build["eigen_simd"].get<std::string>());
    benchmark::AddCustomContext("commit", build["commit"].get<std::string>() +
                                              (build["dirty"] == true ? " (dirty)" : ""));
    benchmark::AddCustomContext("compiler", build["compiler"].get<std::string>());
    std::fprintf(stderr, "ceilings: SGEMM %.1f GFLOP/s, triad %.1f GB/s (single thread; %s; %s)\n",
                 g_ceilings.peak_flops * 1e-9, g_ceilings.bandwidth * 1e-9, isa.c_str(), cpu.c_str());

    benchmark::RegisterBenchmark("ceiling/sgemm", bm_sgemm);
    benchmark::RegisterBenchmark("ceiling/triad", bm_triad);
    benchmark::RegisterBenchmark("kernel/product", bm_product)->ArgsProduct({{16, 64}, {64, 1024}})->ArgNames({"d", "cols"});
    benchmark::RegisterBenchmark("kernel/nearest", bm_nearest)->ArgsProduct({{16, 64}, {16, 1024}})->ArgNames({"d", "n"});
    for (const MemoryEntry& entry : memory_registry()) {
        for (Kernel kernel : {Kernel::write_batch, Kernel::read_batch}) {
            const std::string name = entry.name + (kernel == Kernel::write_batch ? "/write_batch" : "/read_batch");
            benchmark::RegisterBenchmark(name.c_str(), bm_kernel, &entry, kernel)
                ->ArgsProduct({{1024, 4096, 16384}, {64, 512, 4096}})
                ->ArgNames({"budget_floats", "n"});
        }
    }
    for (const MemoryEntry& entry : memory_registry()) {
        if (!entry.causal_backward) continue;
        benchmark::RegisterBenchmark((entry.name + "/causal_train").c_str(), bm_causal_train, &entry)
            ->ArgsProduct({{1024}, {64, 128}})
            ->ArgNames({"budget_floats", "n"});
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
