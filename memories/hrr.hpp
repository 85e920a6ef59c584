// memcap/memories/hrr.hpp — holographic reduced representation (Plate 1995).
//
// Stores:       one trace vector T of D floats (T = 0 after reset).
// Write:        T += k ⊛ v, circular convolution (k ⊛ v)_i = Σ_j k_j v_{(i−j) mod D},
//               computed as irfft(F k · F v).
// Read:         circular correlation with the query, q⁎ ⊛ T = irfft(conj(F q) · F T):
//               Plate's approximate inverse (the involution), not the exact inverse.
// state_floats: D = B (D = d without a budget).
// Parameters:   none. Minimum budget: 1 float.
// Vectors in/out: when D = d, keys and values enter as they are. Otherwise
//               fixed random maps P_k (D × d_k) and P_v (D × d_v), N(0, 1/D)
//               entries, map them in (k' = P_k k, v' = P_v v) and the read
//               leaves through P_vᵀ (P_vᵀ P_v ≈ I for D ≫ d_v).
// Source:       Plate, T. A. (1995). Holographic reduced representations. IEEE
//               Transactions on Neural Networks 6(3), 623–641. Essay 004 Part 3.
//
// FFTs: FFTW real-to-complex, plans made once per size (fft.hpp).
#pragma once

#include "core/rng.hpp"
#include "memories/fft.hpp"
#include "memories/memory.hpp"

#include <complex>
#include <vector>

namespace memcap {

class Hrr final : public Memory {
public:
    Hrr(const MemoryShape& shape, Rng& rng);

    void reset() override { trace_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return trace_.size(); }
    ConstStateView state() const override { return ConstStateView(trace_.data(), trace_.size()); }
    std::int64_t param_floats() const override { return key_map_.size() + value_map_.size(); }

    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    void read_batch(ConstMatRef queries, MatRef out) const override;

private:
    using Spectrum = std::vector<std::complex<float>>;
    RowMat map_in(ConstMatRef x, const RowMat& map) const;  // rows into D dims
    int dim_;
    RealFft fft_;
    RowMat key_map_, value_map_;  // D × d_k, D × d_v; empty when D = d
    Vec trace_;
};

}  // namespace memcap
