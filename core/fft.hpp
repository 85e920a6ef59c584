// memcap/core/fft.hpp — real FFTs of one size through FFTW (single precision).
//
// Plans are made once per size and shared (FFTW's planner is not thread-safe,
// so plan creation takes a lock; executing a plan on new arrays is safe from
// any thread). Plans use FFTW_ESTIMATE: FFTW_MEASURE times candidate
// algorithms and could pick different ones run to run, changing the bits.
// Transforms are unnormalised, as in FFTW: inverse(forward(x)) = D · x.
// Plans are FFTW_UNALIGNED (no SIMD codelets, so the bits do not depend on the
// CPU or on array alignment); the inverse's scratch copy is a per-thread buffer.
#pragma once

#include <complex>
#include <vector>

namespace memcap {

class RealFft {
public:
    explicit RealFft(int size);
    int size() const { return size_; }
    int bins() const { return size_ / 2 + 1; }
    /// x: size floats → X: bins complex values.
    void forward(const float* x, std::complex<float>* X) const;
    /// X: bins complex values → x: size floats (unnormalised). X is not modified.
    void inverse(const std::complex<float>* X, float* x) const;

private:
    int size_;
    void* forward_plan_;
    void* inverse_plan_;
};

}  // namespace memcap
