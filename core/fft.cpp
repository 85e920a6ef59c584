// memcap/core/fft.cpp — see fft.hpp.
#include "core/fft.hpp"

#include <fftw3.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>

namespace memcap {
namespace {

struct Plans {
    fftwf_plan forward, inverse;
};

// Plans live for the whole program, one pair per size. The cache is never destroyed
// (a map destroyed at exit would drop the only pointers to its plans, which
// LeakSanitizer then reports as leaks); it stays reachable until the process ends.
Plans plans_for(int size) {
    static std::mutex mutex;
    static auto& cache = *new std::map<int, Plans>;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(size);
    if (it != cache.end()) return it->second;
    std::vector<float> x(static_cast<std::size_t>(size));
    std::vector<fftwf_complex> X(static_cast<std::size_t>(size / 2 + 1));
    const unsigned flags = FFTW_ESTIMATE | FFTW_UNALIGNED;
    Plans p{fftwf_plan_dft_r2c_1d(size, x.data(), X.data(), flags),
            fftwf_plan_dft_c2r_1d(size, X.data(), x.data(), flags)};
    cache.emplace(size, p);
    return p;
}

}  // namespace

RealFft::RealFft(int size) : size_(size) {
    const Plans p = plans_for(size);
    forward_plan_ = p.forward;
    inverse_plan_ = p.inverse;
}

void RealFft::forward(const float* x, std::complex<float>* X) const {
    fftwf_execute_dft_r2c(static_cast<fftwf_plan>(forward_plan_), const_cast<float*>(x),
                          reinterpret_cast<fftwf_complex*>(X));
}

void RealFft::inverse(const std::complex<float>* X, float* x) const {
    // c2r transforms may overwrite their input: work on a copy, in a buffer kept
    // per thread (grown, never shrunk), so no call allocates in the steady state.
    thread_local std::vector<std::complex<float>> tmp;
    if (tmp.size() < static_cast<std::size_t>(bins())) tmp.resize(static_cast<std::size_t>(bins()));
    std::copy(X, X + bins(), tmp.begin());
    fftwf_execute_dft_c2r(static_cast<fftwf_plan>(inverse_plan_), reinterpret_cast<fftwf_complex*>(tmp.data()), x);
}

}  // namespace memcap
