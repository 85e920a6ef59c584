// memcap/memories/rotation/rotation_rnn.hpp — decaying rotation RNN (essay 004 Part 1).
//
// Stores:       one state vector s of D floats (s = 0 after reset).
// Write:        s ← ρ R s + U x, R orthogonal, ρ the decay; x is the value
//               when the inputs are declared positional_keys (core/inputs.hpp:
//               lag recall, copying, selective copying) or the pair [k; v]
//               (associative recall).
// Read:         the probe readout (harness/eval/probe.hpp): a least-squares linear map
//               from [s, 1] (per slot) or [s, q, 1] (associative recall), fitted
//               on training episodes. The native read() only decodes the state
//               through the input map, r = U_vᵀ s (U_v = I when D = d): it
//               ignores the query, because a linear RNN has no content-addressed
//               read — on associative recall it stays near chance by design.
// state_floats: D = B (D = d without a budget).
// Parameters:   rho = 0.9 (real in [0, 1)), angles = uniform (uniform|haar).
// Minimum budget: 1 float.
// Source:       essay 004 Part 1; Elman 1990; the orthogonal-RNN literature.
//
// State layout: with P = floor(D/2) rotation blocks, block j acts on the pair
// (s[j], s[P + j]) (halves, so the step vectorises); s[2P] is the ±1 entry
// when D is odd.
//
// Form. A Haar-random orthogonal R is R = Z T Zᵀ with Z orthogonal and T
// block-diagonal (2 × 2 rotations by angles θ_j, and ±1 entries). In the basis
// s' = Zᵀ s the update is s' ← ρ T s' + Zᵀ U x, which costs O(D) per step
// instead of O(D²). The least-squares readout is invariant to a fixed
// orthogonal change of basis, and the task's codes are isotropic random
// vectors, so the map Zᵀ U can be drawn directly (identity when D equals the
// input dimension, else Gaussian): the results are distributed exactly as
// with a dense Haar R. `angles=haar` (the essays' reading) takes θ from the
// eigenvalues of a dense Haar draw (O(D³) once per memory, allowed for
// D ≤ 2048); `angles=uniform` (the default, any D) draws θ_j i.i.d. uniform
// on [0, 2π), which lacks the eigenvalue repulsion of a Haar R.
#pragma once

#include "core/rng.hpp"
#include "memories/memory.hpp"

#include <string>
#include <unordered_map>
#include <vector>

namespace memcap {

class RotationRnn final : public Memory {
public:
    /// Largest D for angles=haar (the dense eigendecomposition is O(D³)).
    static constexpr std::int64_t kMaxHaarDim = 2048;
    /// Mapped inputs kept across write batches (positional keys with a map: see write_batch).
    static constexpr Eigen::Index kKeptInputs = 64;

    /// The state's dimensions at a shape: its one sizing function, used by the
    /// constructor, the table's cost model and minimum budget, and `memcap list`.
    struct Dims {
        int dim;         // D = B, or d_v without a budget
        int d_in;        // input size: d_v (positional keys) or d_k + d_v
        bool input_map;  // D ≠ d_in: inputs enter through U (D × d_in)
        std::int64_t build_scratch_bytes;  // angles=haar: the dense D × D QR and eigendecomposition (doubles)
        /// cos and sin per 2 × 2 block and a sign per 1 × 1 block (D in all), and U.
        std::int64_t param_floats() const { return dim + (input_map ? std::int64_t{dim} * d_in : 0); }
    };
    /// UsageError when D does not fit an int, or exceeds kMaxHaarDim with angles=haar.
    static Dims size(const MemoryShape& shape, const std::string& angles);

    RotationRnn(const MemoryShape& shape, double rho, const std::string& angles, Rng& rng);

    void reset() override { state_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override {
        return static_cast<std::int64_t>(cos_.size() + sin_.size() + sign_.size()) + input_map_.size();
    }
    void write_batch(ConstMatRef keys, ConstMatRef values) override;

    /// The dense D × D matrix ρ T that one step applies to the state (ρ times the
    /// block-diagonal rotation T), so that s ← ρ T s + U x. For tests and
    /// inspection (tests/test_rotation_form.cpp); the step itself never forms it.
    Eigen::MatrixXd transition() const;

private:
    RotationRnn(const MemoryShape& shape, const Dims& dims, double rho, const std::string& angles, Rng& rng);
    /// s ← ρ T s + x_t for t = 0 … count − 1, x_t = input(t) (already mapped, D floats).
    template <class Input>
    void steps(Eigen::Index count, Input input);
    int dim_, d_key_, d_value_;
    bool value_only_;
    float rho_;
    std::vector<float> cos_, sin_;  // one per 2 × 2 block, acting on s[j], s[P + j] (P blocks)
    std::vector<float> sign_;       // ±1 for the 1 × 1 blocks after the pairs
    RowMat input_map_;              // D × (d_v or d_k + d_v); empty = identity
    // Inputs mapped by earlier batches, kept for the next (positional keys with a map: the
    // tokens of a sequence task, the same in every episode): U x by x's bytes. Not state
    // (reset keeps them); at most kKeptInputs rows, the cost model's scratch counts them.
    std::unordered_map<std::string, Eigen::Index> kept_at_;
    RowMat kept_;
    Eigen::Index kept_rows_ = 0;
    Vec state_;
};

}  // namespace memcap
