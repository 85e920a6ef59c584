// The theory of associative-recall accuracy (memories/theory.hpp) against memcap's own
// measurements: each model within 3 standard errors of the measured mean, the standard
// error from the spread of per-seed accuracies across seeds (support.hpp).
#include "memories/theory.hpp"
#include "memories/theory/numeric.hpp"
#include "support.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace memcap;
using memcap::test::Measured;
using memcap::test::Run;

namespace {

// measure() of support.hpp with the seeds run on all cores (cells are independent and
// deterministic, so the result is the same as the serial one).
Measured measure_parallel(const Run& r) {
    const Spec memory = parse_memory_spec(r.memory), task = parse_task_spec(r.task), readout = parse_readout_spec(r.readout);
    std::vector<double> acc(static_cast<std::size_t>(r.seeds), 0.0);
    std::vector<std::string> errors(static_cast<std::size_t>(r.seeds));
    std::vector<double> queries(static_cast<std::size_t>(r.seeds), 0.0);
#pragma omp parallel for schedule(dynamic, 1)
    for (int seed = 0; seed < r.seeds; ++seed) {
        const auto s = static_cast<std::size_t>(seed);
        try {
            const CellResult o = run_cell(make_cell(memory, task, readout, r.budget, r.d, r.n, static_cast<std::uint64_t>(seed)));
            if (!o.ok || o.slots.size() != 1) {
                errors[s] = o.ok ? "expected one slot" : o.message;
                continue;
            }
            queries[s] = static_cast<double>(o.slots[0].queries);
            acc[s] = static_cast<double>(o.slots[0].correct) / queries[s];
        } catch (const std::exception& e) {
            errors[s] = e.what();
        }
    }
    std::string first_error;
    for (const auto& e : errors)
        if (first_error.empty()) first_error = e;
    INFO(first_error);
    REQUIRE(first_error.empty());
    return memcap::test::summarise(acc, queries[0]);
}

void require_within_3se(double model, const Measured& m) {
    INFO("model " << 100 * model << "%, measured " << 100 * m.mean << "% ± " << 100 * m.se() << " (SE over " << m.count
                  << " seeds), difference " << 100 * (model - m.mean) << " = " << (model - m.mean) / m.se() << " SE");
    REQUIRE(std::abs(model - m.mean) <= 3 * m.se());
}

}  // namespace

TEST_CASE("theory: the vectorisable exp is within 2 ulp of std::exp on x <= 0", "[theory]") {
    using theory::exp_nonpositive;
    const auto ulps = [](double a, double b) {  // distance in representable doubles (both >= 0)
        std::int64_t ia, ib;
        std::memcpy(&ia, &a, sizeof a), std::memcpy(&ib, &b, sizeof b);
        return ia > ib ? ia - ib : ib - ia;
    };
    std::mt19937_64 gen(7);
    std::uniform_real_distribution<double> wide(-750.0, 0.0), near(-1.0, 0.0);
    std::int64_t worst = 0;
    for (int i = 0; i < 200000; ++i) {
        const double x = i % 2 ? wide(gen) : near(gen);
        const std::int64_t u = ulps(exp_nonpositive(x), std::exp(x));
        CAPTURE(x);
        REQUIRE(u <= 2);
        worst = std::max(worst, u);
    }
    REQUIRE(worst >= 1);  // not std::exp itself: some results differ in the last bit
    // Edges: 0, the subnormal range, underflow and -infinity.
    REQUIRE(exp_nonpositive(0.0) == 1.0);
    REQUIRE(exp_nonpositive(-0.0) == 1.0);
    for (const double x : {-708.0, -709.5, -720.0, -740.0, -744.4})
        REQUIRE(ulps(exp_nonpositive(x), std::exp(x)) <= 2);
    REQUIRE(exp_nonpositive(-746.0) == 0.0);
    REQUIRE(exp_nonpositive(-1e300) == 0.0);
    REQUIRE(exp_nonpositive(-std::numeric_limits<double>::infinity()) == 0.0);
}

TEST_CASE("theory: select_bits gives what ?: gives, bit for bit", "[theory]") {
    using theory::select_bits;
    const auto bits = [](double a) {
        std::uint64_t u;
        std::memcpy(&u, &a, sizeof a);
        return u;
    };
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const double values[] = {0.0, -0.0, 1.0, -2.5, 1e-310, -inf, inf, nan, -nan, 6755399441055744.0};
    for (const double a : values)
        for (const double b : values) {
            CAPTURE(a, b);
            REQUIRE(bits(select_bits(true, a, b)) == bits(a));
            REQUIRE(bits(select_bits(false, a, b)) == bits(b));
        }
    // exp_nonpositive's clamp (a select_bits): NaN stays NaN; below about -1417 its two factors
    // 2^(k/2) would leave the exponent's range unclamped, and -800 gives 0 as e^x does
    REQUIRE(std::isnan(theory::exp_nonpositive(nan)));
    REQUIRE(theory::exp_nonpositive(-2000.0) == 0.0);
    REQUIRE(theory::exp_nonpositive(-1e300) == 0.0);
    REQUIRE(theory::exp_nonpositive(-0.0) == 1.0);
}

TEST_CASE("theory: the winner-take-all integral and the models' exact cases", "[theory]") {
    using namespace memcap::theory;
    // No signal: every one of M candidates equally likely.
    for (const double M : {2.0, 10.0, 512.0, 1e5}) {
        CAPTURE(M);
        REQUIRE(fks_recall(0, M) == Approx(1 / M).epsilon(1e-8));
    }
    REQUIRE(fks_recall(40, 1e5) == Approx(1.0));
    REQUIRE(fks_recall(3, 100) < fks_recall(3.5, 100));
    REQUIRE(fks_recall(3, 1000) < fks_recall(3, 100));
    // log Φ stays finite far in the tail (Mills' ratio series below −30).
    REQUIRE(normal_log_cdf(-5) == Approx(std::log(0.5 * std::erfc(5 / std::sqrt(2.0)))).epsilon(1e-12));
    REQUIRE(normal_log_cdf(-40) == Approx(-804.6084420137538).epsilon(1e-9));
    REQUIRE(normal_log_cdf(9) == Approx(-1.128588e-19).epsilon(1e-5));
    // HRR: the derived variances, and the extremes the integral must handle.
    const HrrMoments m = hrr_moments(256, 4096);
    REQUIRE(m.target_var == Approx(257.0 / 4096).epsilon(1e-3));
    REQUIRE(m.other_var == Approx(258.0 / 4096).epsilon(1e-3));
    REQUIRE(hrr_recall(1000, 1 << 20, 100000) == Approx(1.0));
    const double far = hrr_recall(1000000, 1 << 20, 100000);
    REQUIRE(far > 1e-5);
    REQUIRE(far < 1e-3);
    REQUIRE(hrr_recall(100000, 64, 100000) == Approx(1e-5).epsilon(0.2));  // chance
    // One coordinate of a random unit vector: symmetric; uniform on [−1, 1] at d = 3.
    REQUIRE(sphere_tail(64, 0) == Approx(0.5));
    REQUIRE(sphere_tail(3, 0.4) == Approx(0.3).epsilon(1e-4));
    // A single pair is always recalled; uniform attention (β = 0) is chance exactly.
    REQUIRE(grid_recall(1, 64) == 1.0);
    REQUIRE(cache_recall(1, 64, 16) == 1.0);
    for (const std::int64_t n : {2, 3, 16, 256}) {
        CAPTURE(n);
        REQUIRE(cache_recall(n, 64, 0) == Approx(1.0 / static_cast<double>(n)).epsilon(1e-3));
    }
}

TEST_CASE("theory: HRR at its natural size against the winner-take-all integral", "[theory][hrr][release_only]") {
    // D = d = 64: 400 seeds (SE 0.7 points at n = 16); D = 4096: fewer, the cells are slower.
    const auto [D, n, seeds] = GENERATE(table<int, std::int64_t, int>({{64, 64, 400},
                                                                        {64, 128, 400},
                                                                        {64, 256, 400},
                                                                        {64, 512, 400},
                                                                        {4096, 16, 4},
                                                                        {4096, 64, 4},
                                                                        {4096, 128, 10},
                                                                        {4096, 256, 48},
                                                                        {4096, 512, 48}}));
    CAPTURE(D, n, seeds);
    const Measured m = measure_parallel(Run{"hrr", "assoc_recall", n, seeds, std::nullopt, D});
    require_within_3se(theory::hrr_recall(n, D, n), m);
}

TEST_CASE("theory: HRR at D = 64 and n = 16, where the model is known to read low", "[theory][hrr]") {
    // The two-Gaussian model leaves out two per-query factors shared by all competitors
    // (memories/theory.hpp): at D = 64 and n <= 16 it reads 1-2.6 points below memcap
    // (-1.04 points at n = 16 over 10,000 seeds). Asserted as that known offset, not hidden:
    // the measurement lies above the model by 0 to 3 points, within 3 SE.
    const Measured m = measure_parallel(Run{"hrr", "assoc_recall", 16, 400, std::nullopt, 64});
    const double model = theory::hrr_recall(16, 64, 16), gap = m.mean - model;
    INFO("model " << 100 * model << "%, measured " << 100 * m.mean << "% ± " << 100 * m.se() << ", gap " << 100 * gap);
    REQUIRE(gap >= -3 * m.se());
    REQUIRE(gap <= 0.03 + 3 * m.se());
}

TEST_CASE("theory: linear grid with finite-d crosstalk", "[theory][grid][release_only]") {
    const auto [d, n, noise, seeds] = GENERATE(table<int, std::int64_t, double, int>({{64, 64, 0.0, 400},
                                                                                      {64, 128, 0.0, 400},
                                                                                      {64, 256, 0.0, 400},
                                                                                      {64, 512, 0.0, 400},
                                                                                      {64, 64, 0.12, 400},
                                                                                      {64, 128, 0.12, 400},
                                                                                      {256, 2048, 0.0, 40},
                                                                                      {256, 3072, 0.0, 40}}));
    CAPTURE(d, n, noise, seeds);
    const std::string task = noise > 0 ? "assoc_recall:noise=" + std::to_string(noise) : "assoc_recall";
    const Measured m = measure_parallel(Run{"linear", task, n, seeds, std::nullopt, d});
    require_within_3se(theory::grid_recall(n, d, noise), m);
}

TEST_CASE("theory: softmax cache where the model is accurate", "[theory][softmax][release_only]") {
    const auto [d, beta, noise, n, seeds] = GENERATE(table<int, double, double, std::int64_t, int>({{64, 1, 0.0, 64, 300},
                                                                                                    {64, 3, 0.0, 1024, 300},
                                                                                                    {64, 16, 0.0, 1024, 100},
                                                                                                    {64, 2, 0.12, 64, 300},
                                                                                                    {64, 8, 0.25, 256, 300},
                                                                                                    {64, 16, 0.25, 1024, 300},
                                                                                                    {256, 4, 0.12, 1024, 100}}));
    CAPTURE(d, beta, noise, n, seeds);
    const std::string memory = "softmax:beta=" + std::to_string(beta);
    const std::string task = noise > 0 ? "assoc_recall:noise=" + std::to_string(noise) : "assoc_recall";
    const Measured m = measure_parallel(Run{memory, task, n, seeds, std::nullopt, d});
    require_within_3se(theory::cache_recall(n, d, beta, noise), m);
}

TEST_CASE("theory: softmax cache at strong noise and moderate beta is a lower bound within 2 points", "[theory][softmax]") {
    // σ = 0.25 at d = 64 (query–key cosine ≈ 0.45) with β = 4: the model ignores part of the
    // positive dependence between strong competitors and reads 0.3–1.1 points low (theory.hpp).
    const std::int64_t n = GENERATE(16, 64);
    CAPTURE(n);
    const Measured m = measure_parallel(Run{"softmax:beta=4", "assoc_recall:noise=0.25", n, 300, std::nullopt, 64});
    const double model = theory::cache_recall(n, 64, 4, 0.25);
    INFO("model " << 100 * model << "%, measured " << 100 * m.mean << "% ± " << 100 * m.se());
    REQUIRE(model <= m.mean + 3 * m.se());
    REQUIRE(model >= m.mean - 0.02 - 3 * m.se());
}

TEST_CASE("forgetting: the window's horizon is its rows, the decayed grid's model falls with the lag and meets the grid's at decay 1",
          "[theory][streams]") {
    REQUIRE(theory::window_horizon(1024, 32, 32) == 16);
    REQUIRE(theory::window_horizon(16384, 8, 8) == 1024);
    REQUIRE(theory::window_horizon(15, 8, 8) == 0);
    // at γ = 1 every lag reads alike, and the Gaussian scores are a little pessimistic beside the
    // exact sphere geometry of grid_recall (lighter tails): within 0.12, never above it
    for (const std::int64_t writes : {16, 32, 64, 128})
        for (const int d : {32, 64}) {
            CAPTURE(writes, d);
            const double exact = theory::grid_recall(writes, d);
            const double first = theory::decayed_grid_recall(1, writes, 1.0, d, d);
            REQUIRE(first == Approx(theory::decayed_grid_recall(writes, writes, 1.0, d, d)).margin(1e-12));
            REQUIRE(first <= exact + 1e-3);
            REQUIRE(first >= exact - 0.12);
        }
    // a decay: recall falls with the lag, and a slower decay reaches further back
    double last = 1.0;
    for (const std::int64_t lag : {1, 5, 10, 20, 40, 80}) {
        const double p = theory::decayed_grid_recall(lag, 512, 0.97, 64, 64);
        REQUIRE(p <= last + 1e-12);
        last = p;
    }
    REQUIRE(last < 0.05);
    const auto h90 = theory::decayed_grid_horizon(512, 0.9, 64, 64), h97 = theory::decayed_grid_horizon(512, 0.97, 64, 64),
               h99 = theory::decayed_grid_horizon(512, 0.99, 64, 64);
    CAPTURE(h90, h97, h99);
    REQUIRE(h90 < h97);
    REQUIRE(h97 < h99);
    REQUIRE(theory::decayed_grid_horizon(512, 1.0, 64, 64) == 0);  // undecayed, 512 pairs drown every lag at d = 64
    REQUIRE_THROWS_AS(theory::decayed_grid_recall(0, 8, 0.9, 8, 8), std::invalid_argument);
    REQUIRE_THROWS_AS(theory::decayed_grid_recall(1, 8, 1.5, 8, 8), std::invalid_argument);
}

TEST_CASE("theory: the root finder of the capacity lines against a closed form", "[theory][capacity]") {
    using namespace memcap::theory;
    // HRR read among two candidates: the winner-take-all integral is Φ(1/√(v_t + v_o)) and the
    // two variances are linear in n (hrr.hpp), v_t + v_o = s + (2n − 3)/D + 2(2D + 2)/(D(D + 2)),
    // s = 2D/(D + 2)²; so accuracy 0.9 is at n = (D(1/z² − s − 2(2D + 2)/(D(D + 2))) + 3)/2, z = Φ⁻¹(0.9).
    const std::int64_t D = 64;
    const double d = static_cast<double>(D), z = 1.2815515655446004;
    const double exact = (d * (1 / (z * z) - 2 * d / ((d + 2) * (d + 2)) - 2 * (2 * d + 2) / (d * (d + 2))) + 3) / 2;
    REQUIRE(exact > 16);
    REQUIRE(exact < 32);
    const auto acc = [&](double n) { return hrr_recall_real(n, D, 2); };
    REQUIRE(acc(exact) == Approx(0.9).epsilon(1e-9));  // the closed form is the model's
    const Crossing c = crossing_n(acc, 16, 32, 0.9, acc(16), acc(32));
    CAPTURE(exact, c.n, c.bracket_lo, c.bracket_hi, c.calls);
    REQUIRE(std::log(c.bracket_hi / c.bracket_lo) <= kCrossingTolerance * (1 + 1e-9));
    REQUIRE(c.bracket_lo <= exact * (1 + 1e-12));
    REQUIRE(exact <= c.bracket_hi * (1 + 1e-12));
    REQUIRE(std::abs(std::log(c.n / exact)) <= kCrossingTolerance / 2 * (1 + 1e-9));
    REQUIRE(c.calls < 20);
    // The real-n models are the integer ones at integer n.
    REQUIRE(hrr_recall_real(40, 256, 40) == hrr_recall(40, 256, 40));
    REQUIRE(hrr_noisy_recall_real(40, 256, 0.05) == hrr_noisy_recall(40, 256, 0.05));
    REQUIRE(grid_recall_real(40, 16, 0.1) == grid_recall(40, 16, 0.1));
    REQUIRE(cache_recall_real(12, 8, 32, 0.1) == cache_recall(12, 8, 32, 0.1));
    // A crossing needs a bracket.
    REQUIRE_THROWS_AS(crossing_n(acc, 32, 64, 0.9, acc(32), acc(64)), std::invalid_argument);
}

TEST_CASE("theory: capacity lines cross at 0.9 between the power-of-two capacity and the next power", "[theory][capacity]") {
    using namespace memcap::theory;
    ModelTable models;
    const auto& searches = capacity_models();
    const auto search = [&](const std::string& memory) {
        for (const auto& m : searches)
            if (m.memory == memory) return &m;
        FAIL("no capacity search for " << memory);
        return &searches.front();
    };
    struct Case {
        std::string memory;
        std::int64_t budget;
        double sigma;  // per entry, whatever the width
    };
    // The sanitizer build (MEMCAP_TEST_SANITIZED=1, tests/CMakeLists.txt), where the root finding
    // runs about 7 times slower, checks the cases up to 1024 floats.
    const bool sanitized = std::getenv("MEMCAP_TEST_SANITIZED") != nullptr;
    for (const Case& k : {Case{"hrr", 256, 0}, Case{"hrr", 4096, 0}, Case{"hrr", 1024, 0.05}, Case{"linear", 256, 0},
                          Case{"linear", 1024, 0}, Case{"linear", 4096, 0.02}}) {
        if (sanitized && k.budget > 1024) continue;
        CAPTURE(k.memory, k.budget, k.sigma);
        const CapacityLine line = search(k.memory)->search(k.budget, 0.9, [&](int) { return k.sigma; }, models);
        REQUIRE(line.n);
        const double pow2 = static_cast<double>(*line.n);
        CAPTURE(pow2, line.nstar, line.nstar_d, line.nstar_accuracy);
        REQUIRE(!line.nstar_at_limit);
        REQUIRE(line.nstar >= pow2);
        REQUIRE(line.nstar < 2 * pow2);
        // the model at n*: 0.9 to the root finder's bracket (kCrossingTolerance wide in log n, n* its midpoint)
        const auto model = [&](double n) {
            return k.memory == "hrr" ? hrr_noisy_recall_real(n, k.budget, k.sigma) : grid_recall_real(n, line.nstar_d, k.sigma);
        };
        const double below = model(line.nstar * std::exp(-kCrossingTolerance)), above = model(line.nstar * std::exp(kCrossingTolerance));
        CAPTURE(below, above);
        REQUIRE(below >= 0.9);
        REQUIRE(above < 0.9);
        REQUIRE(line.nstar_accuracy == model(line.nstar));
        REQUIRE(std::abs(line.nstar_accuracy - 0.9) <= below - above);
        if (k.memory == "linear") REQUIRE(line.nstar_d * line.nstar_d <= k.budget);
    }
}

TEST_CASE("theory: the noise-free cache's capacity line is its eviction limit at the narrowest width", "[theory][capacity][release_only]") {
    using namespace memcap::theory;
    ModelTable models;
    for (const auto& m : capacity_models())
        if (m.memory == "softmax") {
            const CapacityLine line = m.search(256, 0.9, [](int) { return 0.0; }, models);
            CAPTURE(line.nstar, line.nstar_d, line.nstar_beta, line.nstar_accuracy);
            REQUIRE(line.nstar_at_limit);
            REQUIRE(line.nstar == 256.0 / (2 * line.nstar_d));  // B / 2d pairs, then eviction
            REQUIRE(line.nstar_accuracy >= 0.9);
            REQUIRE(line.nstar_accuracy == cache_recall(256 / (2 * line.nstar_d), line.nstar_d, line.nstar_beta, 0.0));
            REQUIRE(line.nstar >= static_cast<double>(*line.n));
        }
}
