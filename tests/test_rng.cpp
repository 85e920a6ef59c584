// The counter-based normal stream behind Rng::fill_normal (core/normal_stream.hpp):
// its Philox blocks, its reproducibility contract, its accuracy and its distribution.
//
// Statistical checks use 2^20 draws from fixed keys (so they are deterministic)
// and accept within 4 standard errors (two-sided p ≈ 6·10^−5 each) or, for the
// Kolmogorov–Smirnov tests, below the critical value at α = 0.001.
#include "core/normal_stream.hpp"
#include "core/rng.hpp"
#include "memories/grid/feature_map.hpp"

#include <Random123/philox.h>

#include <catch2/catch.hpp>

#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <utility>
#include <vector>

using namespace memcap;
namespace nd = memcap::normal_detail;

namespace {

constexpr std::size_t kDraws = std::size_t{1} << 20;
constexpr double kSqrtN = 1024.0;  // √kDraws

std::vector<float> stream(std::uint64_t key, std::uint64_t position, std::size_t n) {
    std::vector<float> z(n);
    normal_stream_fill(key, position, z.data(), n);
    return z;
}

/// The four normals of block b by the scalar route: Random123's Philox, then box_muller.
std::array<float, 4> reference_block(std::uint64_t key, std::uint64_t b) {
    const r123::Philox4x32::ctr_type ctr = {
        {static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), 0U, kNormalTag}};
    const r123::Philox4x32::key_type k = {{static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32)}};
    const auto w = r123::Philox4x32()(ctr, k);
    std::array<float, 4> z{};
    nd::box_muller(w[0], w[1], z[0], z[1]);
    nd::box_muller(w[2], w[3], z[2], z[3]);
    return z;
}

std::uint64_t fnv1a_bits(const std::vector<float>& z) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (float x : z) h = (h ^ nd::float_bits(x)) * 0x100000001b3ULL;
    return h;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
    const auto n = static_cast<double>(x.size());
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
    mx /= n, my /= n;
    double sxy = 0, sxx = 0, syy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        sxy += (x[i] - mx) * (y[i] - my);
        sxx += (x[i] - mx) * (x[i] - mx);
        syy += (y[i] - my) * (y[i] - my);
    }
    return sxy / std::sqrt(sxx * syy);
}

/// Kolmogorov–Smirnov statistic D_n of `x` against the continuous CDF `cdf`.
double ks_statistic(std::vector<double> x, const std::function<double(double)>& cdf) {
    std::sort(x.begin(), x.end());
    const auto n = static_cast<double>(x.size());
    double d = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
        const double f = cdf(x[i]);
        d = std::max({d, static_cast<double>(i + 1) / n - f, f - static_cast<double>(i) / n});
    }
    return d;
}

// Asymptotic Kolmogorov critical value at α = 0.001: √(−ln(α/2)/2) / √n.
double ks_critical(std::size_t n) { return std::sqrt(-std::log(0.001 / 2) / 2) / std::sqrt(static_cast<double>(n)); }

double phi(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

std::uint64_t key_of(const char* name, int i = 0) {
    StreamKey k;
    k.add(name).add(i);
    return k.value();
}

constexpr double kPi = 3.14159265358979323846;

}  // namespace

TEST_CASE("normal stream: Philox4x32-10 blocks are Random123's", "[rng]") {
    // Random123's known-answer vectors (kat_vectors) for philox4x32 with 10 rounds.
    struct Kat {
        std::uint32_t ctr[4], key[2], out[4];
    };
    const Kat kats[] = {
        {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
        {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
         {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
        {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
         {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
    };
    for (const Kat& k : kats) {
        std::uint32_t c[4] = {k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]};
        nd::philox4x32_10(c[0], c[1], c[2], c[3], k.key[0], k.key[1]);
        for (int j = 0; j < 4; ++j) REQUIRE(c[j] == k.out[j]);
    }
}

TEST_CASE("normal stream: every kernel's fills equal the scalar route, bit for bit", "[rng]") {
    // Each compiled form of the loops this CPU can run (build target, AVX2,
    // AVX-512), float and double. Starts at 0, mid-block, mid-batch, and where
    // the block counter carries into its second word (b = 2^32); lengths cross
    // the 1024-normal batches.
    const std::uint64_t key = 0x0123456789abcdefULL;
    const std::uint64_t starts[] = {0, 3, 1021, 4 * ((std::uint64_t{1} << 32) - 5) + 2};
    int kernels = 0;
    for (nd::Kernel k : {nd::Kernel::build_target, nd::Kernel::avx2, nd::Kernel::avx512}) {
        if (!nd::kernel_available(k)) continue;
        ++kernels;
        for (std::uint64_t p : starts) {
            CAPTURE(static_cast<int>(k), p);
            std::vector<float> z(3001);
            std::vector<double> d(3001);
            nd::fill_with(k, key, p, z.data(), z.size());
            nd::fill_with(k, key, p, d.data(), d.size(), 0.37);
            for (std::size_t i = 0; i < z.size(); ++i) {
                const std::uint64_t q = p + i;
                const float expected = reference_block(key, q / 4)[q % 4];
                if (nd::float_bits(z[i]) != nd::float_bits(expected) || d[i] != 0.37 * static_cast<double>(expected)) {
                    CAPTURE(i, z[i], d[i], expected);
                    FAIL("fill differs from the scalar route");
                }
            }
        }
    }
    REQUIRE(kernels >= 1);
    const auto z = stream(key, 5, 2000);  // normal_stream_fill: the widest kernel
    for (std::size_t i = 0; i < z.size(); ++i)
        REQUIRE(nd::float_bits(z[i]) == nd::float_bits(reference_block(key, (5 + i) / 4)[(5 + i) % 4]));
}

TEST_CASE("rng: every kernel's Engine words are r123::Engine's, in its order", "[rng]") {
    // Starts at the Engine's first block, mid-way, and where the counter carries
    // into its second word; lengths cross the 256-block batches.
    const std::uint64_t key = 0x0fedcba987654321ULL;
    const r123::Philox4x32::ukey_type uk = {{static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32)}};
    int kernels = 0;
    for (nd::Kernel k : {nd::Kernel::build_target, nd::Kernel::avx2, nd::Kernel::avx512}) {
        if (!nd::kernel_available(k)) continue;
        ++kernels;
        for (std::uint64_t first : {std::uint64_t{1}, std::uint64_t{777}, (std::uint64_t{1} << 32) - 3}) {
            CAPTURE(static_cast<int>(k), first);
            std::vector<std::uint32_t> w(4 * 601);
            nd::engine_words_with(k, key, first, w.data(), 601);
            Rng::Engine engine(uk);
            Rng::Engine::ctr_type c = {{static_cast<std::uint32_t>(first - 1), static_cast<std::uint32_t>((first - 1) >> 32), 0, 0}};
            engine.setcounter(c, 0);
            for (std::size_t i = 0; i < w.size(); ++i)
                if (w[i] != engine()) FAIL("word " << i << " differs from the Engine's");
        }
    }
    REQUIRE(kernels >= 1);
}

TEST_CASE("rng: below(n, out, count) draws what count calls of below(n) draw", "[rng]") {
    // Ranges with and without Boost's rejection (n not dividing 2^32), n = 1 (no
    // word), n = 2^32 (a word as is) and n > 2^32 (several words per draw); counts
    // from 0 to past one batch of blocks; starts at a block's start and mid-block.
    // After the batch the stream continues exactly where the single calls leave it.
    const std::int64_t ns[] = {1, 2, 3, 16, 17, 1000, 1 << 30, (std::int64_t{1} << 31) + 12345,
                               (std::int64_t{1} << 32) - 1, std::int64_t{1} << 32, (std::int64_t{1} << 32) + 7,
                               std::int64_t{1} << 40};
    for (std::int64_t n : ns)
        for (std::size_t count : {0, 1, 3, 4, 5, 255, 256, 257, 1000})
            for (int lead : {0, 1, 3}) {  // single draws of below(5) first: the batch starts mid-block
                CAPTURE(n, count, lead);
                Rng batch = Rng::stream("test/below", n, static_cast<std::int64_t>(count), lead);
                Rng single = Rng::stream("test/below", n, static_cast<std::int64_t>(count), lead);
                for (int i = 0; i < lead; ++i) REQUIRE(batch.below(5) == single.below(5));
                std::vector<std::int64_t> got(count);
                batch.below(n, got.data(), count);
                for (std::size_t i = 0; i < count; ++i)
                    if (got[i] != single.below(n)) FAIL("draw " << i << " differs");
                for (int i = 0; i < 9; ++i) REQUIRE(batch.below(1000003) == single.below(1000003));
                REQUIRE(batch.normal() == single.normal());
                REQUIRE(batch.uniform() == single.uniform());
            }
}

TEST_CASE("normal stream: the reproducibility contract", "[rng]") {
    SECTION("pinned values: a change of algorithm must show here") {
        // Z_0..Z_3 of key 0 (−1.49703896, 1.03571522, 0.795600891, 0.362773925), and an
        // FNV-1a hash of the bits of Z_0..Z_65535 of key 0x0123456789abcdef.
        const auto z = stream(0, 0, 4);
        const std::uint32_t pinned[4] = {0xbfbf9ef9U, 0x3f849251U, 0x3f4bac80U, 0x3eb9bd81U};
        for (int j = 0; j < 4; ++j) {
            CAPTURE(j, z[j]);
            REQUIRE(nd::float_bits(z[j]) == pinned[j]);
        }
        REQUIRE(fnv1a_bits(stream(0x0123456789abcdefULL, 0, 65536)) == 0x61dbe38ef80d7ecaULL);
    }
    SECTION("same key, same bits; Rng fills are the stream of its key from position 0") {
        Rng a = Rng::stream("test/rng", 1), b = Rng::stream("test/rng", 1);
        Eigen::VectorXf x(5000), y(5000);
        a.fill_normal(x);
        b.fill_normal(y);
        REQUIRE(std::memcmp(x.data(), y.data(), sizeof(float) * 5000) == 0);
        const auto z = stream(key_of("test/rng", 1), 0, 5000);
        REQUIRE(std::memcmp(x.data(), z.data(), sizeof(float) * 5000) == 0);
    }
    SECTION("fills of different lengths share their prefix; consecutive fills continue the stream") {
        Rng one = Rng::stream("test/rng", 2), pieces = Rng::stream("test/rng", 2), shorter = Rng::stream("test/rng", 2);
        Eigen::VectorXf all(3025), s(1000);
        one.fill_normal(all);
        shorter.fill_normal(s);
        REQUIRE(std::memcmp(all.data(), s.data(), sizeof(float) * 1000) == 0);
        std::size_t at = 0;
        for (Eigen::Index len : {3, 1021, 1, 2000}) {  // mid-block, across a batch, one entry
            Eigen::VectorXf part(len);
            pieces.fill_normal(part);
            REQUIRE(std::memcmp(all.data() + at, part.data(), sizeof(float) * static_cast<std::size_t>(len)) == 0);
            at += static_cast<std::size_t>(len);
        }
        REQUIRE(pieces.fill_position() == 3025);
    }
    SECTION("float and double fills hold the same values; sd multiplies in double") {
        Rng f = Rng::stream("test/rng", 3), d = Rng::stream("test/rng", 3), fs = Rng::stream("test/rng", 3),
            ds = Rng::stream("test/rng", 3);
        Eigen::MatrixXf mf(37, 29), mfs(37, 29);
        Eigen::MatrixXd md(37, 29), mds(37, 29);
        f.fill_normal(mf);
        d.fill_normal(md);
        fs.fill_normal(mfs, 0.37);
        ds.fill_normal(mds, 0.37);
        for (Eigen::Index i = 0; i < mf.size(); ++i) {
            REQUIRE(md.data()[i] == static_cast<double>(mf.data()[i]));
            REQUIRE(mds.data()[i] == 0.37 * static_cast<double>(mf.data()[i]));
            REQUIRE(mfs.data()[i] == static_cast<float>(0.37 * static_cast<double>(mf.data()[i])));
        }
    }
    SECTION("scalar draws and fills can be interleaved: neither moves the other") {
        Rng mixed = Rng::stream("test/rng", 4), fills = Rng::stream("test/rng", 4), scalars = Rng::stream("test/rng", 4);
        Eigen::VectorXf a(100), b(100), a2(100), b2(100);
        mixed.fill_normal(a);
        const double u = mixed.uniform(), n = mixed.normal();
        const auto i = mixed.below(1000);
        mixed.fill_normal(b);
        fills.fill_normal(a2);
        fills.fill_normal(b2);
        REQUIRE(std::memcmp(a.data(), a2.data(), sizeof(float) * 100) == 0);
        REQUIRE(std::memcmp(b.data(), b2.data(), sizeof(float) * 100) == 0);
        REQUIRE(scalars.uniform() == u);
        REQUIRE(scalars.normal() == n);
        REQUIRE(scalars.below(1000) == i);
    }
    SECTION("unit_rows normalises the fill's rows") {
        Rng r = Rng::stream("test/rng", 5), f = Rng::stream("test/rng", 5);
        const Eigen::MatrixXd u = r.unit_rows<Eigen::MatrixXd>(7, 16);
        Eigen::MatrixXd m(7, 16);
        f.fill_normal(m);
        for (Eigen::Index i = 0; i < 7; ++i) {
            REQUIRE(u.row(i).norm() == Approx(1.0).epsilon(1e-12));
            REQUIRE((u.row(i) - m.row(i) / m.row(i).norm()).norm() < 1e-12);
        }
    }
}

TEST_CASE("normal stream: log, sin, cos and Box-Muller are float-accurate", "[rng]") {
    SECTION("u = RN((w + 1/2) 2^-32) exactly, in [2^-33, 1]") {
        for (std::uint64_t w = 0; w < (std::uint64_t{1} << 32); w += 65521) {
            const float ref = static_cast<float>((static_cast<double>(w) + 0.5) * 0x1p-32);  // exact, then one rounding
            REQUIRE(nd::uniform_open0(static_cast<std::uint32_t>(w)) == ref);
        }
        REQUIRE(nd::uniform_open0(0) == 0x1p-33f);
        REQUIRE(nd::uniform_open0(0xffffffffU) == 1.0f);
    }
    SECTION("log_f within 1 ulp on [2^-33, 1] (every 61st float; every float gives 0.83 ulp at most)") {
        const std::uint32_t lo = nd::float_bits(0x1p-33f), hi = nd::float_bits(1.0f);
        double worst = 0;
        for (std::uint32_t b = lo; b < hi; b += 61) {
            const float u = nd::bits_float(b), l = nd::log_f(u);
            const double ref = std::log(static_cast<double>(u));
            const float fr = static_cast<float>(ref);
            const double ulp = std::nextafter(std::fabs(fr), 1e30f) - std::fabs(fr);
            worst = std::max(worst, std::fabs(l - ref) / ulp);
            if (!(l < 0.0f)) FAIL("log_f(u) >= 0 for u < 1");
        }
        CAPTURE(worst);
        REQUIRE(worst <= 1.0);
        REQUIRE(nd::log_f(1.0f) == 0.0f);
    }
    SECTION("sin_f and cos_f within 2^-24 at every angle used") {
        constexpr float step = 0.785398163397448309615f * 1.1920928955078125e-07f;
        double es = 0, ec = 0;
        for (std::int32_t t = 0; t < (1 << 23); ++t) {
            const float a = (static_cast<float>(t) + 0.5f) * step;
            es = std::max(es, std::fabs(nd::sin_f(a) - std::sin(static_cast<double>(a))));
            ec = std::max(ec, std::fabs(nd::cos_f(a) - std::cos(static_cast<double>(a))));
        }
        CAPTURE(es, ec);
        REQUIRE(es <= 0x1p-24);
        REQUIRE(ec <= 0x1p-24);
    }
    SECTION("each Z within 3 2^-24 max(r, 1) of double-precision Box-Muller of the same u and angle") {
        double worst = 0;
        for (std::uint64_t a = 0; a < (std::uint64_t{1} << 32); a += 4099) {
            const auto c = static_cast<std::uint32_t>(a * 2654435761ULL);  // spread the angles
            float zc, zs;
            nd::box_muller(static_cast<std::uint32_t>(a), c, zc, zs);
            const double r = std::sqrt(-2 * std::log(static_cast<double>(nd::uniform_open0(static_cast<std::uint32_t>(a)))));
            const std::uint32_t octant = c >> 29;
            std::uint32_t t = (c >> 6) & 0x7fffffU;
            if (octant & 1U) t = 0x7fffffU - t;
            const double alpha = (t + 0.5) * (kPi / 4) / 8388608.0;
            const double angle = octant * (kPi / 4) + ((octant & 1U) ? kPi / 4 - alpha : alpha);
            worst = std::max(worst, std::max(std::fabs(zc - r * std::cos(angle)), std::fabs(zs - r * std::sin(angle))) /
                                        std::max(r, 1.0));
        }
        CAPTURE(worst / 0x1p-24);
        REQUIRE(worst <= 3 * 0x1p-24);
    }
}

TEST_CASE("normal stream: moments and tails of 2^20 draws", "[rng]") {
    // Standard errors for n = 2^20 normal draws: mean 1/√n = 0.00098, variance
    // √(2/n) = 0.0014, skewness √(6/n) = 0.0024, excess kurtosis √(24/n) = 0.0048;
    // a tail frequency p has √(p(1 − p)/n).
    Rng rng = Rng::stream("test/rng/moments");
    Eigen::VectorXf z(static_cast<Eigen::Index>(kDraws));
    rng.fill_normal(z);
    const double n = kDraws;
    double mean = 0;
    for (float x : z) mean += x;
    mean /= n;
    double m2 = 0, m3 = 0, m4 = 0, beyond3 = 0, beyond4 = 0;
    for (float x : z) {
        const double d = x - mean;
        m2 += d * d, m3 += d * d * d, m4 += d * d * d * d;
        beyond3 += std::fabs(x) > 3, beyond4 += std::fabs(x) > 4;
    }
    m2 /= n, m3 /= n, m4 /= n;
    const double skew = m3 / std::pow(m2, 1.5), kurt = m4 / (m2 * m2) - 3;
    CAPTURE(mean, m2, skew, kurt);
    REQUIRE(std::fabs(mean) < 4 / kSqrtN);
    REQUIRE(std::fabs(m2 - 1) < 4 * std::sqrt(2 / n));
    REQUIRE(std::fabs(skew) < 4 * std::sqrt(6 / n));
    REQUIRE(std::fabs(kurt) < 4 * std::sqrt(24 / n));
    const double p3 = 2 * phi(-3), p4 = 2 * phi(-4);  // 0.0027, 6.3e-5
    CAPTURE(beyond3 / n, p3, beyond4 / n, p4);
    REQUIRE(std::fabs(beyond3 / n - p3) < 4 * std::sqrt(p3 * (1 - p3) / n));
    REQUIRE(std::fabs(beyond4 / n - p4) < 4 * std::sqrt(p4 * (1 - p4) / n));
}

TEST_CASE("normal stream: Kolmogorov-Smirnov against Phi, and the pairs' radius and angle", "[rng]") {
    const auto z = stream(key_of("test/rng/ks"), 0, kDraws);
    std::vector<double> x(z.begin(), z.end());
    const double d = ks_statistic(x, phi), crit = ks_critical(kDraws);  // crit = 0.0019
    CAPTURE(d, crit);
    REQUIRE(d < crit);

    // Box–Muller pairs (Z_2k, Z_2k+1): exp(−r²/2) and the angle are independent
    // uniforms on (0, 1) when the pair is two independent normals.
    std::vector<double> radius, angle;
    for (std::size_t k = 0; k + 1 < z.size(); k += 2) {
        const double a = z[k], b = z[k + 1];
        radius.push_back(std::exp(-(a * a + b * b) / 2));
        angle.push_back((std::atan2(b, a) + kPi) / (2 * kPi));
    }
    const auto uniform_cdf = [](double u) { return std::clamp(u, 0.0, 1.0); };
    const double dr = ks_statistic(radius, uniform_cdf), da = ks_statistic(angle, uniform_cdf),
                 crit_pairs = ks_critical(radius.size());  // 0.0027
    CAPTURE(dr, da, crit_pairs);
    REQUIRE(dr < crit_pairs);
    REQUIRE(da < crit_pairs);
    // SE of a correlation between independent variables: 1/√n.
    REQUIRE(std::fabs(correlation(radius, angle)) < 4 / std::sqrt(static_cast<double>(radius.size())));
}

TEST_CASE("normal stream: different keys, lags and the scalar draws are uncorrelated", "[rng]") {
    // Correlation of n independent pairs has standard error 1/√n (n = 2^20: 0.00098).
    const double tol = 4 / kSqrtN;
    auto as_double = [](const std::vector<float>& f) { return std::vector<double>(f.begin(), f.end()); };
    const std::uint64_t pairs[][2] = {
        {key_of("test/rng/keys", 1), key_of("test/rng/keys", 2)},  // neighbouring stream names
        {0, 1},                            // keys one apart (low Philox key word)
        {7, 7 + (std::uint64_t{1} << 32)}  // keys one apart in the high word
    };
    for (const auto& p : pairs) {
        CAPTURE(p[0], p[1]);
        const double r = correlation(as_double(stream(p[0], 0, kDraws)), as_double(stream(p[1], 0, kDraws)));
        CAPTURE(r);
        REQUIRE(std::fabs(r) < tol);
    }

    // Within one stream: lag 1 (inside a Box–Muller pair and across pairs), lag 4
    // (the same word of consecutive blocks), and lag 1 of the squares.
    const auto z = as_double(stream(key_of("test/rng/keys", 1), 0, kDraws + 4));
    for (std::size_t lag : {1, 2, 4}) {
        std::vector<double> a(z.begin(), z.begin() + kDraws), b(z.begin() + lag, z.begin() + lag + kDraws);
        CAPTURE(lag);
        REQUIRE(std::fabs(correlation(a, b)) < tol);
        for (auto& v : a) v *= v;
        for (auto& v : b) v *= v;
        REQUIRE(std::fabs(correlation(a, b)) < tol);
    }

    // The fill stream and the scalar normal() of the same Rng (2^16 draws: SE 1/256).
    Rng rng = Rng::stream("test/rng/scalar");
    Eigen::VectorXd f(1 << 16);
    rng.fill_normal(f);
    std::vector<double> a(f.data(), f.data() + f.size()), b;
    for (int i = 0; i < (1 << 16); ++i) b.push_back(rng.normal());
    REQUIRE(std::fabs(correlation(a, b)) < 4.0 / 256);
}

TEST_CASE("rng: state() names where a stream stands", "[rng]") {
    Rng a = Rng::stream("test/state", 1), b = Rng::stream("test/state", 1), c = Rng::stream("test/state", 2);
    REQUIRE(a.state() == b.state());
    REQUIRE(a.state() != c.state());
    a.normal();
    REQUIRE(a.state() != b.state());  // a scalar draw moves the counter (or the word within a block)
    b.normal();
    REQUIRE(a.state() == b.state());
    Eigen::VectorXf v(5);
    a.fill_normal(v);
    REQUIRE(a.state() != b.state());  // a fill moves the fill position
    b.fill_normal(v);
    REQUIRE(a.state() == b.state());
    for (int i = 0; i < 9; ++i) REQUIRE(a.normal() == b.normal());  // the same state draws the same numbers
}

TEST_CASE("feature map: a projection kept from an earlier draw is the drawn one and leaves the stream as the draw does",
          "[rng]") {
    // Unique stream names: the first map of each shape is drawn, the second kept (the cache is
    // process-wide); both must read the same and leave their streams in the same state. One
    // normal drawn before the map leaves the stream mid-way through a pair of normals.
    for (const auto& [d_in, max_dim] : std::vector<std::pair<int, std::int64_t>>{{8, 64}, {64, 16}, {16, 16}}) {
        Rng first = Rng::stream("test/feature_map_cache", d_in, max_dim);
        Rng second = Rng::stream("test/feature_map_cache", d_in, max_dim);
        REQUIRE(first.normal() == second.normal());
        const FeatureMap drawn("proj", d_in, max_dim, 1, first);
        const std::uint64_t hits = FeatureMap::kept_projections();
        const FeatureMap kept("proj", d_in, max_dim, 1, second);
        // The second was taken from the cache (a projection is drawn only when not the identity).
        REQUIRE(FeatureMap::kept_projections() == hits + (drawn.param_floats() > 0 ? 1 : 0));
        REQUIRE(first.state() == second.state());
        REQUIRE(first.normal() == second.normal());
        Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> x(3, d_in), p1(3, drawn.dim()), p2(3, kept.dim());
        Rng::stream("test/feature_map_cache/x").fill_normal(x);
        drawn.apply(x, p1);
        kept.apply(x, p2);
        REQUIRE(drawn.param_floats() == kept.param_floats());
        REQUIRE(p1 == p2);
        // Another stream draws another projection (unless the map is the identity).
        Rng other = Rng::stream("test/feature_map_cache/other", d_in, max_dim);
        const FeatureMap another("proj", d_in, max_dim, 1, other);
        Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> p3(3, another.dim());
        another.apply(x, p3);
        if (drawn.param_floats() > 0) REQUIRE(p1 != p3);
    }
}
