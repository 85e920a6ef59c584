// memcap/memories/theory/numeric.hpp — small helpers the theory models share.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>

namespace memcap::theory {

/// log √(2π), for normal densities in log space.
inline constexpr double kLogSqrt2Pi = 0.91893853320467274178;

/// Throws std::invalid_argument(what) unless ok: the models' argument checks.
inline void require(bool ok, const char* what) {
    if (!ok) throw std::invalid_argument(what);
}

/// c ? a : b, chosen on the bits: both operands are computed first, so the choice is one
/// blend in a vector loop. Written as `?:`, GCC may move an arm's arithmetic (1 − h, or the
/// clamp's constant folded through what follows) into a branch of its own, and without
/// AVX-512's masked operations it does not vectorise a loop with arithmetic in a branch
/// (that arithmetic may trap: -ftrapping-math, GCC's default): on AVX2 crosstalk.cpp's inner
/// loop then ran one lane at a time, half the theory command's time. The same value as `?:`.
inline double select_bits(bool c, double a, double b) {
    std::uint64_t ua, ub;
    std::memcpy(&ua, &a, sizeof ua);
    std::memcpy(&ub, &b, sizeof ub);
    const std::uint64_t mask = std::uint64_t{0} - std::uint64_t{c};
    const std::uint64_t out_bits = (ua & mask) | (ub & ~mask);
    double out;
    std::memcpy(&out, &out_bits, sizeof out);
    return out;
}

/// exp(x) for x ≤ 0 (−∞ gives 0): e^x = 2^k e^r, k = round(x / ln 2), r = x − k ln 2 with ln 2 in
/// two parts (Cody–Waite), |r| ≤ ln 2 / 2, e^r by its Taylor series to r^13 (truncation under
/// 10⁻¹⁷), 2^k as two factors 2^(k/2) so that results down to the subnormals are one rounding.
/// Straight-line arithmetic and bit moves, no table and no branch: a loop of these vectorises
/// (crosstalk.cpp's inner loop), and the bits are the same in a vector lane as in scalar code
/// on any x86-64 (no FMA: -ffp-contract=off). Within 2 ulp of std::exp (tested).
inline double exp_nonpositive(double x) {
    constexpr double kLog2e = 1.4426950408889634, kLn2Hi = 6.93147180369123816490e-01, kLn2Lo = 1.90821492927058770002e-10;
    constexpr double kRound = 6755399441055744.0;  // 1.5 · 2^52: adding it rounds to an integer
    x = select_bits(x < -800.0, -800.0, x);           // e^−800 = 0 in double; also takes −∞
    const double k = (x * kLog2e + kRound) - kRound;
    const double r = (x - k * kLn2Hi) - k * kLn2Lo;
    double p = 1.0 / 6227020800.0;  // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    const double k1 = (k * 0.5 + kRound) - kRound, k2 = k - k1;  // each in [−578, 0]
    const auto two_to = [](double e) {  // 2^e for an integer e in [−1022, 1023]
        std::uint64_t bits;
        const double biased = e + (1023.0 + 4503599627370496.0);  // 2^52 + 1023 + e: the integer in the low bits
        std::memcpy(&bits, &biased, sizeof bits);
        bits <<= 52;
        double out;
        std::memcpy(&out, &bits, sizeof out);
        return out;
    };
    return p * two_to(k1) * two_to(k2);
}

}  // namespace memcap::theory
