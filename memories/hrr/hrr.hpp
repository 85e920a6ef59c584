// memcap/memories/hrr/hrr.hpp — holographic reduced representation (Plate 1995).
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
//
// Small traces without maps (D = d_k = d_v ≤ kDirectDim): the direct forms.
//   write at D = 16, 32, 64: the FFT form with sixteen pairs in the lanes of a vector (one
//          complex FFT of k + i v per pair, radix 2, split into F k and F v), Σ F k · F v per
//          lane, the lanes added in order, one inverse FFT: no 64-point FFTW call per pair.
//   write at other D: Σ_i k_i ⊛ v_i has entry t = Σ_j G_{j,(t−j) mod D} with G = Kᵀ V: one
//          D × D GEMM over the batch, then a sum along G's wrapped diagonals.
//   read:  q ⋆ T = C q with C_{tj} = T_{(t+j) mod D}: all reads are Q Cᵀ, one product; at D
//          a multiple of 16 on register tiles, C's rows copied a vector at a time from T
//          written twice (row j starts at T_j).
//   2D² FLOPs a pair or query against two FFTs' 5 D log₂ D — 4.3× more at D = 64 — but a
//   64-point FFTW transform (the scalar codelet of an unaligned plan, fft.hpp) runs near
//   a tenth of the GEMM's rate, so at D ≤ 64 these are faster; the cost model keeps
//   counting the FFT forms' FLOPs, the fewest, so the benchmarks' bound stays a floor.
//   Which form runs depends on D alone, never on the machine: the bits do not either.
//
// Batches (exact algebra, different rounding; used when it costs fewer FLOPs,
// see write_flops/read_flops — in practice whenever D ≠ d, never at D = d):
//   write: F(P_k k) = A k with A = F P_k (bins × d_k, precomputed), so
//          F Σ_i k'_i ⊛ v'_i = Σ_i (A k_i) · (B v_i) = rowsum((A G) · B), G = Kᵀ V:
//          one d_k × d_v GEMM over the batch, one (bins × d_k)(d_k × d_v) GEMM,
//          one inverse FFT — instead of two D-sized maps and two FFTs per item.
//   write, positional keys with a map (sequence tasks: the keys are the positions' codes and
//          the values a vocabulary's, the same rows in every episode of a cell): each row's
//          spectrum F(P x) (P x by a matrix-vector product, so a row's bits do not depend on
//          the rows beside it) is kept by the row's bytes, up to kKeptSpectra per side, and
//          the batch is Σ_i F k'_i · F v'_i and one inverse FFT: after the first episodes,
//          8 · bins FLOPs a pair. Kept or not, a row's spectrum is the same bits, so a write
//          does not depend on the episodes before it. A read query by query takes its
//          queries' spectra (positions: keys) the same way.
//   read:  the read is linear in q, r = W q with W = P_vᵀ irfft(conj(A) · F T) / D
//          (d_v × d_k), then all reads are Q Wᵀ. By Parseval W needs no inverse
//          FFT: with Z = conj(A) · F T weighted by w_b/D (w = 1 at DC and Nyquist,
//          2 elsewhere), Wᵀ = Re(Z)ᵀ Re(B) + Im(Z)ᵀ Im(B) — two (d_k × bins)(bins × d_v)
//          GEMMs. (Without a value map, D = d_v: d_k inverse FFTs give W directly.)
#pragma once

#include "core/fft.hpp"
#include "core/rng.hpp"
#include "memories/memory.hpp"
#include "memories/spectral_memory.hpp"

#include <algorithm>
#include <complex>
#include <string>
#include <unordered_map>
#include <vector>

namespace memcap {

class Hrr final : public Memory, public SpectralMemory {
public:
    /// The trace's dimensions at a shape: its one sizing function, used by the
    /// constructor, the table's cost model and minimum budget, and `memcap list`.
    struct Dims {
        int dim;          // D = B, or d_k without a budget
        int d_key, d_value;
        bool key_map;     // D ≠ d_k: keys enter through P_k (D × d_k)
        bool value_map;   // D ≠ d_v: values through P_v (D × d_v)
        bool spectra;     // the factored batches can win at this size: the maps' spectra are kept
        bool kept = false;  // positional keys with a map: the rows' spectra are kept (write_kept)
        /// Rows whose spectra are kept, per side: at most kKeptSpectra, and kKeptBytes of spectra.
        std::int64_t kept_rows() const {
            return kept ? std::min<std::int64_t>(kKeptSpectra, std::max<std::int64_t>(1, kKeptBytes / (8 * std::int64_t{bins()}))) : 0;
        }
        int bins() const { return dim / 2 + 1; }
        std::int64_t param_floats() const {
            return (key_map ? std::int64_t{dim} * d_key : 0) + (value_map ? std::int64_t{dim} * d_value : 0);
        }
        /// Re and Im of A = F P_k and B = F P_v (bins × d each), when kept.
        std::int64_t derived_floats() const {
            return spectra ? 2 * std::int64_t{bins()} * (std::int64_t{d_key} + d_value) : 0;
        }
    };
    /// UsageError when D does not fit an int (FFTW's sizes).
    static Dims size(const MemoryShape& shape);

    Hrr(const MemoryShape& shape, Rng& rng);

    void reset() override { trace_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return trace_.size(); }
    ConstStateView state() const override { return ConstStateView(trace_.data(), trace_.size()); }
    StateRef mutable_state() override { return StateRef(trace_.data(), trace_.size()); }
    std::int64_t param_floats() const override { return key_map_.size() + value_map_.size(); }

    void write_batch(ConstMatRef keys, ConstMatRef values) override;
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override;
    /// With k' = P_k k, v' = P_v v, q' = P_k q, g = ∂L/∂r' = P_v ∂L/∂r (the read before P_vᵀ):
    ///     ∂q' = g ⋆ T = irfft(conj(F g) · F T),   ∂T = Σ_i q'_i ⊛ g_i,
    ///     ∂k'_i = v'_i ⋆ ∂T = irfft(conj(F v'_i) · F ∂T),   ∂k = P_kᵀ ∂k', ∂q = P_kᵀ ∂q'
    /// (⋆ circular correlation), per item through the same FFTs and maps as the forward;
    /// the trace T is the state write_batch left.
    void backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                  MatRef d_queries) const override;

    /// At D = d (no maps; Dims: neither key_map nor value_map): T += irfft(Σ K_i · V_i) / D (FFTW's inverse)
    /// over the pairs' spectra, the sum write_batch forms after its FFTs (one inverse FFT).
    bool takes_spectra() const override { return key_map_.size() == 0 && value_map_.size() == 0; }
    void write_spectra(std::int64_t count, const SpectraSource& draw) override;
    /// At D = d: R_i = conj(Q_i) · F T, the spectrum of read(q_i) = irfft(conj(F q_i) · F T) / D.
    void read_spectra(const std::complex<float>* queries, std::int64_t count, std::complex<float>* reads) const override;

    /// FLOPs of a batched write / read of n items of D = dim, per item (factored = false)
    /// or through the factored form (true). The batch takes the cheaper one; the
    /// benchmarks' cost model (registry.cpp) declares the same.
    static double write_flops(double dim, double d_key, double d_value, double n, bool factored);
    static double read_flops(double dim, double d_key, double d_value, double n, bool factored);
    /// FLOPs of write_kept's batch of n pairs once their rows' spectra are kept, and of a
    /// read of n queries one by one with their spectra kept (F T; per query conj(F q) · F T,
    /// the inverse, 1/D, and P_vᵀ when there is a value map).
    static double kept_write_flops(double dim, double n);
    static double kept_read_flops(double dim, double d_value, double n, bool value_map);
    /// Traces up to this size without maps take the direct forms (header).
    static constexpr int kDirectDim = 64;
    /// Kept spectra per side (keys, values): at most this many rows, and this many bytes.
    static constexpr std::int64_t kKeptSpectra = 512;
    static constexpr std::int64_t kKeptBytes = std::int64_t{32} << 20;

private:
    Hrr(const MemoryShape& shape, const Dims& dims, Rng& rng);
    void write_per_item(ConstMatRef keys, ConstMatRef values);
    void write_factored(ConstMatRef keys, ConstMatRef values);
    void write_kept(ConstMatRef keys, ConstMatRef values);
    void write_direct(ConstMatRef keys, ConstMatRef values);
    void read_direct(ConstMatRef queries, MatRef out) const;
    bool direct() const { return dim_ <= kDirectDim && key_map_.size() == 0 && value_map_.size() == 0; }
    /// F(P x) of one row x, from the kept spectra or computed (and kept while there is room).
    using Spectrum = std::vector<std::complex<float>>;
    struct Kept {
        std::unordered_map<std::string, std::int64_t> at;  // a row's bytes → its index in `spectra`
        Spectrum spectra;                                   // bins per kept row
    };
    const std::complex<float>* row_spectrum(const float* row, int cols, const RowMat& map, Kept& kept, Spectrum& scratch) const;
    void read_per_query(ConstMatRef queries, MatRef out) const;
    void read_factored(ConstMatRef queries, MatRef out) const;
    void add_spectrum(const std::complex<float>* sum);  // T += irfft(sum) / D
    /// Whether a batch takes the factored form (kept spectra, and cheaper by the given
    /// FLOPs); builds the spectra the first time it does. Not safe for concurrent reads
    /// of one memory (memcap runs one memory per thread).
    bool factored(double factored_flops, double per_item_flops) const;
    RowMat map_in(ConstMatRef x, const RowMat& map) const;  // rows into D dims
    int dim_;
    RealFft fft_;
    RowMat key_map_, value_map_;  // D × d_k, D × d_v; empty when D = d
    // Spectra of the maps' columns, A = F P_k and B = F P_v (P = I when D = d):
    // real and imaginary parts, bins × d. Derived from the maps, not parameters;
    // built on first use (factored()), empty until then.
    bool spectra_wanted_ = false;
    mutable Eigen::MatrixXf key_spec_re_, key_spec_im_, value_spec_re_, value_spec_im_;
    Vec trace_;
    std::int64_t kept_rows_ = 0;  // Dims::kept_rows(): 0 = nothing kept
    // Kept spectra (write_kept; read_per_query takes its queries' from the keys'): filled by
    // reads too, so mutable, as the maps' spectra are (one memory per thread).
    mutable Kept kept_keys_, kept_values_;
    mutable RowMat square_;  // the direct forms' D × D G or C, reused (one memory per thread)
};

}  // namespace memcap
