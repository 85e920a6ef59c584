// memcap/memories/gsa/gsa.hpp — Gated Slot Attention: m slots read by softmax, written through a gate.
//
// Stores:       m slots, each a key row and a value row: K̃ (m × d_k) and Ṽ (m × d_v),
//               m = floor(B / (d_k + d_v)) (d_k without a budget).
// Write:        K̃ ← diag(α_t) K̃ + (1 − α_t) k_tᵀ, Ṽ ← diag(α_t) Ṽ + (1 − α_t) v_tᵀ (Zhang et al.
//               2024, GSA; ABC's slot memory, Peng et al. 2022, with a forget gate). A trained
//               model computes α_t from the token; untrained, 1 − α_t = g · r_t: a fixed random
//               router r_t over the slots (r_t = softmax(τ R k_t), R m fixed random unit rows;
//               τ = inf: the one slot whose direction is nearest the key, a hash), times a write
//               strength g. topk = k keeps the router's k largest weights only (renormalised),
//               so a write touches k slots and leaves the others exactly as they were (Raven's
//               routed writes). At g = 1 and τ = inf a slot holds the last pair routed to it.
// Read:         Ṽᵀ softmax(β K̃ q) (β = inf: the value of the slot whose key is nearest).
// state_floats: m (d_k + d_v).
// Parameters:   beta = 16 (≥ 0 or inf), write = 1 (g in (0, 1]), temp = inf (τ > 0 or inf),
//               topk (optional, ≥ 1: route to the top k slots only).
// Source:       Zhang, Yang et al. 2024 (Gated Slot Attention); Peng et al. 2022 (ABC).
//
// State layout: K̃ row-major, then Ṽ row-major.
#pragma once

#include "core/rng.hpp"
#include "memories/memory.hpp"

namespace memcap {

class GatedSlots final : public Memory {
public:
    /// Slots held at a shape: floor(B / (d_k + d_v)), d_k without a budget; minimum budget one slot.
    static std::int64_t slots(const MemoryShape& shape);

    GatedSlots(const MemoryShape& shape, double beta, double write, double temp, int topk, Rng& params);

    void reset() override;
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return static_cast<std::int64_t>(state_.size()); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }
    StateRef mutable_state() override { return StateRef(state_.data(), state_.size()); }
    std::int64_t param_floats() const override { return router_.size(); }

private:
    /// The router's weights over the slots for `key` (into route_).
    void route(ConstVecRef key);

    int dk_, dv_;
    Eigen::Index m_;
    float beta_, write_, temp_;
    int topk_;
    RowMat router_;  // m × d_k, unit rows
    Vec state_;      // [K̃ (m × d_k) | Ṽ (m × d_v)], row-major
    mutable Vec scores_;
    Vec route_;
};

}  // namespace memcap
