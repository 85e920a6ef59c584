// Codes drawn in the Fourier domain (tasks/spectral_codes.hpp) and the streamed native
// readout that uses them (harness/eval/readout.hpp, score_spectral_episode).
//
//   * Exact in distribution: the inverse transforms of the drawn spectra are N(0, I_d)
//     vectors — per-coordinate means, the whole covariance matrix and the pooled marginal
//     (Kolmogorov–Smirnov against N(0, 1)) within sampling error, for an even and an odd d.
//   * A range of bins drawn on its own is the same bits as those bins of the whole spectrum.
//   * HRR at D = d read streamed (never materialised) scores like the materialised episode
//     of the same cell (the same codes) through write_batch / read_batch / score_reads.
#include "core/fft.hpp"
#include "core/rng.hpp"
#include "harness/eval/readout.hpp"
#include "memories/hrr/hrr.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"
#include "tasks/spectral_codes.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>
#include <vector>

using namespace memcap;

TEST_CASE("spectral codes: the inverse transforms are N(0, I) within sampling error", "[spectral][rng]") {
    const int d = GENERATE(8, 7, 64);  // small d: one mis-scaled bin moves every covariance entry by ~1/d
    CAPTURE(d);
    const int count = 20000, bins = d / 2 + 1;
    const RealFft fft(d);
    const std::uint64_t key = Rng::stream("test_spectral_codes", d).key();
    std::vector<std::complex<float>> spectrum(static_cast<std::size_t>(bins));
    Eigen::MatrixXd z(count, d);
    Vec row(d);
    for (int i = 0; i < count; ++i) {
        const double squares = gaussian_spectrum(key, std::uint64_t(i) * d, d, 1.0, 0, bins, spectrum.data());
        fft.inverse(spectrum.data(), row.data());
        z.row(i) = (row / float(d)).cast<double>().transpose();
        REQUIRE(std::abs(z.row(i).squaredNorm() - squares) <= 1e-4 * squares);  // |z|² by Parseval
    }
    // Means: each coordinate's mean has SE 1/√count; the largest of d within 4.5 SE
    // (two-sided p ≈ 7e-6 each, under 5e-4 for all d).
    const double se = 1.0 / std::sqrt(double(count));
    REQUIRE(z.colwise().mean().cwiseAbs().maxCoeff() <= 4.5 * se);
    // Covariance: off-diagonal entries have SE 1/√count, diagonal ones √2/√count; the largest
    // of the d(d−1)/2 off-diagonal |z-scores| within 5 (p ≈ 6e-7 each, under 2e-3 for all).
    const Eigen::MatrixXd cov = (z.transpose() * z) / double(count);
    double worst_off = 0.0, worst_diag = 0.0;
    for (int a = 0; a < d; ++a) {
        worst_diag = std::max(worst_diag, std::abs(cov(a, a) - 1.0) / (std::sqrt(2.0) * se));
        for (int b = a + 1; b < d; ++b) worst_off = std::max(worst_off, std::abs(cov(a, b)) / se);
    }
    CAPTURE(worst_off, worst_diag);
    REQUIRE(worst_off <= 5.0);
    REQUIRE(worst_diag <= 4.5);
    // The pooled marginal against N(0, 1): the coordinates are independent if the draw is right,
    // so the Kolmogorov–Smirnov statistic of all count·d values is within its 0.1% point 1.95/√N.
    std::vector<double> all(z.data(), z.data() + z.size());
    std::sort(all.begin(), all.end());
    const double total = double(all.size());
    double ks = 0.0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        const double cdf = 0.5 * std::erfc(-all[i] / std::sqrt(2.0));
        ks = std::max({ks, std::abs(cdf - double(i) / total), std::abs(double(i + 1) / total - cdf)});
    }
    CAPTURE(ks);
    REQUIRE(ks <= 1.95 / std::sqrt(total));
}

TEST_CASE("spectral codes: a range of bins drawn alone equals those bins of the whole", "[spectral]") {
    const int d = GENERATE(4096, 4095);
    const int bins = d / 2 + 1;
    std::vector<std::complex<float>> whole(static_cast<std::size_t>(bins)), part(whole.size());
    gaussian_spectrum(77, 5 * std::uint64_t(d), d, 1.0, 0, bins, whole.data());
    double squares = 0.0;
    for (int b0 = 0; b0 < bins; b0 += 300) {
        const int b1 = std::min(bins, b0 + 300);
        squares += gaussian_spectrum(77, 5 * std::uint64_t(d), d, 1.0, b0, b1, part.data());
        for (int b = b0; b < b1; ++b) REQUIRE(part[std::size_t(b - b0)] == whole[std::size_t(b)]);
    }
    REQUIRE(squares == Approx(gaussian_spectrum(77, 5 * std::uint64_t(d), d, 1.0, 0, bins, whole.data())).epsilon(1e-12));
}

TEST_CASE("spectral codes: HRR streamed scores as the materialised episode of the same codes", "[spectral][hrr]") {
    const int d = GENERATE(values<int>({kSpectralWidth, kSpectralWidth + 1}));  // even and odd (no Nyquist bin)
    const std::int64_t n = GENERATE(64, 400);
    const std::string spec = GENERATE(std::string("assoc_recall"), std::string("assoc_recall:cosine=0.72"));
    CAPTURE(d, n, spec);
    const auto task = make_task(parse_task_spec(spec));
    for (std::uint64_t seed = 0; seed < 2; ++seed) {
        const TaskCell cell{n, d, seed};
        const auto described = task->spectral_episode(cell, Split::Test, 0);
        REQUIRE(described);
        const Episode e = task->episode(cell, Split::Test, 0);
        REQUIRE(e.target == described->target);
        REQUIRE(std::abs(e.keys.row(0).norm() - 1.0f) <= 1e-5f);  // unit codes
        const MemoryShape shape{d, d, d};
        Rng r1 = Rng::stream("spectral_test", seed), r2 = Rng::stream("spectral_test", seed);
        Hrr materialised(shape, r1), streamed(shape, r2);
        REQUIRE(streamed.takes_spectra());
        materialised.write_batch(e.keys, e.values);
        RowMat reads(e.queries.rows(), d);
        materialised.read_batch(e.queries, reads);
        std::vector<SlotScore> a, b;
        score_reads(e, reads, a);
        REQUIRE(score_spectral_episode(streamed, *described, b));
        REQUIRE(a.size() == 1);
        REQUIRE(b.size() == 1);
        CAPTURE(seed, a[0].correct, b[0].correct);
        REQUIRE(a[0].queries == b[0].queries);
        // the same codes and reads up to float rounding: a query can only flip on a near tie
        REQUIRE(std::abs(a[0].correct - b[0].correct) <= 1);
        REQUIRE(b[0].target_dist_sum == Approx(a[0].target_dist_sum).epsilon(1e-4));
        REQUIRE(b[0].target_cos_sum == Approx(a[0].target_cos_sum).epsilon(1e-3));
    }
}

TEST_CASE("spectral codes: the registry's takes_spectra agrees with the built memory", "[spectral][hrr]") {
    const MemoryEntry& entry = find_memory("hrr");
    REQUIRE(entry.takes_spectra);
    for (const auto& [d, budget] : std::vector<std::pair<int, std::int64_t>>{{64, 64}, {64, 1024}, {1024, 64}, {63, 63}}) {
        const MemoryShape shape{d, d, budget};
        Rng rng = Rng::stream("takes_spectra", d, budget);
        const Hrr built(shape, rng);
        CAPTURE(d, budget);
        REQUIRE(entry.takes_spectra(parse_memory_spec("hrr"), shape) == built.takes_spectra());
        REQUIRE(built.takes_spectra() == (d == budget));
    }
}

TEST_CASE("spectral codes: HRR held at a lower precision streams as its materialised episode", "[spectral][hrr][precision]") {
    // Budgets whose bits hold exactly d = 16384 numbers at the precision: D = d, no maps.
    const auto row = GENERATE(table<std::string, std::int64_t>({{"bf16", 8192}, {"int8", 4608}}));
    const std::string precision = std::get<0>(row);
    const std::int64_t budget = std::get<1>(row);
    const int d = kSpectralWidth;
    const std::int64_t n = 64;
    CAPTURE(precision, budget);
    const Spec spec = parse_memory_spec("hrr:precision=" + precision);
    const MemoryShape shape{d, d, budget};
    REQUIRE(find_memory("hrr").takes_spectra(spec, shape));
    const auto task = make_task(parse_task_spec("assoc_recall"));
    const TaskCell cell{n, d, 3};
    const auto described = task->spectral_episode(cell, Split::Test, 0);
    REQUIRE(described);
    const Episode e = task->episode(cell, Split::Test, 0);
    auto materialised = make_memory(spec, shape, 3), streamed = make_memory(spec, shape, 3);
    auto* spectral = dynamic_cast<SpectralMemory*>(streamed.get());
    REQUIRE(spectral);
    REQUIRE(spectral->takes_spectra());
    materialised->write_batch(e.keys, e.values);
    RowMat reads(e.queries.rows(), d);
    materialised->read_batch(e.queries, reads);
    std::vector<SlotScore> a, b;
    score_reads(e, reads, a);
    REQUIRE(score_spectral_episode(*spectral, *described, b));
    REQUIRE(a.size() == 1);
    REQUIRE(b.size() == 1);
    CAPTURE(a[0].correct, b[0].correct);
    REQUIRE(a[0].queries == b[0].queries);
    REQUIRE(std::abs(a[0].correct - b[0].correct) <= 1);  // the same codes up to float rounding
    REQUIRE(b[0].target_cos_sum == Approx(a[0].target_cos_sum).epsilon(1e-3));
    // The streamed trace was rounded after the writes: its every entry is on the precision's grid.
    const ConstStateView state = streamed->state();
    REQUIRE(state.size() == d);
    const auto on_grid = [&](std::int64_t i) {
        const float x = state.data()[i];
        if (precision == "bf16") {  // the low 16 bits of the float are zero
            std::uint32_t bits = 0;
            std::memcpy(&bits, &x, sizeof bits);
            return (bits & 0xffffu) == 0u;
        }
        float m = 0;  // int8: one absmax scale per block of 32
        for (std::int64_t j = i / 32 * 32; j < i / 32 * 32 + 32; ++j) m = std::max(m, std::abs(state.data()[j]));
        const float q = x * 127.0f / m;
        return m == 0.0f || std::abs(q - std::nearbyint(q)) < 1e-3f;
    };
    std::int64_t off = 0;
    for (std::int64_t i = 0; i < state.size(); ++i) off += !on_grid(i);
    REQUIRE(off == 0);
}
