// memcap/bench/bench_rng.cpp — nanoseconds per normal: the old per-entry Boost path
// against Rng::fill_normal's vectorised normal stream, in one run.
//
//   normal/boost_per_entry<T>/n   what fill_normal did before the normal stream:
//                                 one boost::random::normal_distribution<double>
//                                 draw per entry on an r123::Engine<Philox4x32>,
//                                 times sd, cast to T
//   normal/fill_normal<T>/n       Rng::fill_normal of an n-vector of T
//
// T ∈ {float, double}; n ∈ {64 (one row), 32768 (an assoc_recall episode's
// 512 × 64 keys), 2^20}. Counters: items = normals per second; per_normal =
// the thread's CPU time per normal (7.2ns, 652ps, …). The speed-up is the ratio
// of the two rows' items at the same T and n.
//
// And integers below n, as a sequence task draws an episode's 80 tokens (a fresh
// stream each time; n = 16, a power of two, and n = 1000, with Boost's rejection):
//
//   below/per_call/n              80 calls of Rng::below(n)
//   below/batch/n                 Rng::below(n, out, 80): the same numbers
//
//   build/bench/memcap_bench_rng --benchmark_filter=normal/
//   build/bench/memcap_bench_rng --benchmark_filter=below/
#include "core/rng.hpp"

#include <benchmark/benchmark.h>

#include <Eigen/Core>

#include <vector>

namespace {

using namespace memcap;

template <class T>
using Vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;

void set_counters(benchmark::State& state, std::int64_t n) {
    using benchmark::Counter;
    state.counters["items"] = Counter(double(n), Counter::kIsIterationInvariantRate);
    // the inverse rate: CPU seconds per normal, printed with an SI prefix (e.g. 652.1ps)
    state.counters["per_normal"] = Counter(double(n), Counter::kIsIterationInvariantRate | Counter::kInvert);
}

template <class T>
void bm_boost_per_entry(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    Rng::Engine engine;
    engine.seed(Rng::Engine::ukey_type{{0x5eedU, 0x1U}});
    boost::random::normal_distribution<double> normal;
    Vector<T> v(n);
    const double sd = 1.0;
    for (auto _ : state) {
        T* p = v.data();
        for (std::int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(sd * normal(engine));
        benchmark::DoNotOptimize(v.data());
        benchmark::ClobberMemory();
    }
    set_counters(state, n);
}

template <class T>
void bm_fill_normal(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    Rng rng = Rng::stream("bench/normal", n);
    Vector<T> v(n);
    for (auto _ : state) {
        rng.fill_normal(v);
        benchmark::DoNotOptimize(v.data());
        benchmark::ClobberMemory();
    }
    set_counters(state, n);
}

constexpr std::size_t kTokens = 80;  // one lag-recall episode

void set_draw_counters(benchmark::State& state) {
    using benchmark::Counter;
    state.counters["per_draw"] = Counter(double(kTokens), Counter::kIsIterationInvariantRate | Counter::kInvert);
}

/// One episode's tokens from a fresh stream: one call each, or one batch.
template <bool kBatch>
void bm_below(benchmark::State& state) {
    const std::int64_t n = state.range(0);
    std::vector<int> out(kTokens);
    std::int64_t episode = 0;
    for (auto _ : state) {
        Rng rng = Rng::stream("bench/below", n, episode++);
        if constexpr (kBatch) rng.below(n, out.data(), out.size());
        else
            for (auto& t : out) t = static_cast<int>(rng.below(n));
        benchmark::DoNotOptimize(out.data());
        benchmark::ClobberMemory();
    }
    set_draw_counters(state);
}

}  // namespace

BENCHMARK_TEMPLATE(bm_below, false)->Name("below/per_call")->Arg(16)->Arg(1000);
BENCHMARK_TEMPLATE(bm_below, true)->Name("below/batch")->Arg(16)->Arg(1000);

#define MEMCAP_NORMAL_SIZES ->Arg(64)->Arg(32768)->Arg(1 << 20)
BENCHMARK_TEMPLATE(bm_boost_per_entry, float)->Name("normal/boost_per_entry<float>") MEMCAP_NORMAL_SIZES;
BENCHMARK_TEMPLATE(bm_fill_normal, float)->Name("normal/fill_normal<float>") MEMCAP_NORMAL_SIZES;
BENCHMARK_TEMPLATE(bm_boost_per_entry, double)->Name("normal/boost_per_entry<double>") MEMCAP_NORMAL_SIZES;
BENCHMARK_TEMPLATE(bm_fill_normal, double)->Name("normal/fill_normal<double>") MEMCAP_NORMAL_SIZES;

BENCHMARK_MAIN();
