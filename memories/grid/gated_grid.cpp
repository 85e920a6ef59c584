// memcap/memories/grid/gated_grid.cpp — see gated_grid.hpp.
#include "memories/grid/gated_grid.hpp"

#include "memories/grid/salience.hpp"
#include "memories/grid/unit_lower.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace memcap {

namespace {
using RowVec = GatedGrid::RowVec;
constexpr Eigen::Index kCheckpoint = 32;  // writes between the backward pass's saved states
}

GatedGrid::GatedGrid(const MemoryShape& shape, const Rule& rule, const std::string& phi, int nu, Rng& rng)
    : OuterProductGrid(shape, phi, nu, /*normalise=*/rule.delta(), rng), rule_(rule), feature_(shape.salience_feature) {
    const Eigen::Index d = grid_.cols();
    decays_.resize(d);
    for (Eigen::Index j = 0; j < d; ++j) {
        const double x = !rule_.per_channel ? 1.0 : d == 1 ? 1.0 : double(j) / double(d - 1);
        decays_(j) = static_cast<float>(std::pow(rule_.alpha, x));
    }
}

float GatedGrid::gate(ConstVecRef value) const {
    if (!rule_.gated) return 1.0f;
    return salience_step(value.data(), static_cast<int>(value.size()), feature_);
}

/// This write's decays a^Δ (a itself for Δ = 1), as a row.
GatedGrid::RowVec GatedGrid::decays_at(float delta) const {
    return delta == 1.0f ? RowVec(decays_.transpose()) : RowVec(decays_.transpose().array().pow(delta));
}

float GatedGrid::strength(float delta, std::optional<float> beta) const {
    double b = beta ? double(*beta) : rule_.beta;
    if (rule_.longhorn) b = b / (1.0 + b);  // β / (1 + β ‖φ‖²) with ‖φ‖ = 1 (the delta forms' unit features)
    return static_cast<float>(b * delta);
}

void GatedGrid::step(RowMat& grid, const float* fp, ConstVecRef value, Vec* update) const {
    const float delta = gate(value);
    if (delta == 0.0f) {  // a skipped token: the state exactly as it was
        if (update) update->setZero(value.size());
        return;
    }
    const bool decays = rule_.alpha != 1.0;
    RowVec a;  // this write's decays a^Δ
    if (decays) a = decays_at(delta);
    apply(grid, fp, value, decays ? &a : nullptr, !rule_.per_channel, strength(delta), update);
}

void GatedGrid::apply(RowMat& grid, const float* fp, ConstVecRef value, const RowVec* a, bool uniform, float b,
                      Vec* update) const {
    const Eigen::Index d = grid.cols();
    const Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic>> f(fp, d);
    thread_local Vec u, r;  // (a write per token: no allocation each time)
    if (!rule_.delta()) {
        u = b * value;
    } else {
        if (rule_.form == Rule::Form::delta_removal_first || !a) r.noalias() = grid * f.transpose();
        else r.noalias() = grid * (a->cwiseProduct(f)).transpose();
        u = b * (value - r);
    }
    if (a) {
        if (!uniform) grid.array().rowwise() *= a->array();
        else grid *= (*a)(0);
    }
    grid.noalias() += u * f;
    if (update) *update = u;
}

void GatedGrid::write(ConstVecRef key, ConstVecRef value) {
    const RowMat f = features(key.transpose());
    step(grid_, f.data(), value, nullptr);
}

void GatedGrid::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& g) {
    // refused before the state changes: what this rule does not take
    const Eigen::Index d = grid_.cols();
    if (g.beta && !rule_.delta())
        throw std::invalid_argument("an additive gated grid takes no per-token write strength beta");
    if (g.log_decay && g.decay_channels != 1 && (!rule_.per_channel || g.decay_channels != d))
        throw std::invalid_argument(rule_.per_channel ? "a per-channel decay must have d_phi = " + std::to_string(d) + " entries"
                                                      : "this grid's decay is one scalar: a per-channel decay is refused");
    const float delta = g.write_gate ? *g.write_gate : gate(value);
    if (delta == 0.0f) return;  // a skipped token: the state exactly as it was
    thread_local RowMat f;  // (a write per token: no allocation each time)
    thread_local RowVec a;
    features_into(key.transpose(), f);
    bool uniform = !rule_.per_channel;
    const RowVec* decay = nullptr;
    if (g.log_decay) {
        uniform = g.decay_channels == 1;
        if (uniform) a = RowVec::Constant(d, std::exp(g.log_decay[0]));
        else a = Eigen::Map<const RowVec>(g.log_decay, d).array().exp().matrix();
        decay = &a;
    } else if (rule_.alpha != 1.0) {
        a = decays_at(delta);
        decay = &a;
    }
    apply(grid_, f.data(), value, decay, uniform, strength(delta, g.beta), nullptr);
}

OuterProductGrid::WriteStep GatedGrid::write_step(ConstVecRef value, const TokenGate& g) const {
    // as write_gated: the same Δ, decays and strength
    WriteStep s;
    const Eigen::Index d = grid_.cols();
    const float delta = g.write_gate ? *g.write_gate : gate(value);
    if (delta == 0.0f && g.log_decay) {
        s.frozen = true;
        return s;
    }
    s.delta = rule_.delta();
    s.decay_first = rule_.form == Rule::Form::delta_decay_first;
    if (g.log_decay) {
        if (g.decay_channels == 1) s.a = RowVec::Constant(d, std::exp(g.log_decay[0]));
        else s.a = Eigen::Map<const RowVec>(g.log_decay, d).array().exp().matrix();
    } else if (rule_.alpha != 1.0) {
        s.a = decays_at(delta);
        s.dlog_a_dgate = decays_.transpose().array().log().matrix();
    }
    s.b = strength(delta, g.beta);
    const double beta = g.beta ? double(*g.beta) : rule_.beta;
    s.db_dgate = static_cast<float>(rule_.longhorn ? beta / (1.0 + beta) : beta);
    s.db_dbeta = static_cast<float>(rule_.longhorn ? delta / ((1.0 + beta) * (1.0 + beta)) : delta);
    return s;
}

void GatedGrid::write_batch(ConstMatRef keys, ConstMatRef values) {
    // Chunks of C writes with matrix products (exact algebra; the "UT" form of DeltaGrid::
    // write_batch with decays, as Gated DeltaNet's and KDA's chunked kernels). Within a chunk
    // from the state S₀, with Γ_i = Π_{j≤i} a_j (per channel; Γ₀ = 1):
    //     S_i = S₀ diag(Γ_i) + Σ_{j≤i} u_j (φ_j ⊙ Γ_i / Γ_j)ᵀ,
    //     r_i = S_{i−1} e_i = S₀ ê_i + Σ_{j<i} (φ̃_j · ê_i) u_j,   φ̃_j = φ_j / Γ_j,
    // with ê_i = Γ_i ⊙ φ_i (decay first) or Γ_{i−1} ⊙ φ_i (removal first). So u_i = b_i (v_i − r_i)
    // solve (I + L) U = diag(b) (V − Ê S₀ᵀ), L_ij = b_i ê_i · φ̃_j (j < i), and the chunk ends at
    // S_C = S₀ diag(Γ_C) + Uᵀ (Φ̃ diag(Γ_C)); the additive forms have U = diag(b) V. A chunk
    // whose decays fall below 1e−12 (φ̃ would overflow) is written one pair at a time.
    const RowMat f = features(keys);
    constexpr Eigen::Index kChunk = 16;
    const Eigen::Index d = f.cols();
    const bool decays = rule_.alpha != 1.0;
    RowMat u, lower, ehat, ftil;
    Eigen::ArrayXXd gam;
    Vec b;
    for (Eigen::Index start = 0; start < f.rows(); start += kChunk) {
        const Eigen::Index c = std::min(kChunk, f.rows() - start);
        gam.setOnes(c + 1, d);
        b.resize(c);
        for (Eigen::Index i = 0; i < c; ++i) {
            const float delta = gate(values.row(start + i).transpose());
            b(i) = delta == 0.0f ? 0.0f : strength(delta);
            if (!decays || delta == 0.0f) {
                gam.row(i + 1) = gam.row(i);
            } else {
                const Eigen::ArrayXd a = decays_.cast<double>().array().pow(double(delta));
                gam.row(i + 1) = gam.row(i) * a.transpose();
            }
        }
        if (decays && gam.row(c).minCoeff() < 1e-12) {
            for (Eigen::Index t = start; t < start + c; ++t) step(grid_, f.row(t).data(), values.row(t).transpose(), nullptr);
            continue;
        }
        const auto phi = f.middleRows(start, c);
        if (decays) ftil = (phi.array().cast<double>() / gam.bottomRows(c)).cast<float>();
        else ftil = phi;
        if (!rule_.delta()) {
            u = b.asDiagonal() * values.middleRows(start, c);
        } else {
            const bool decay_first = rule_.form == Rule::Form::delta_decay_first;
            if (decays) ehat = (phi.array().cast<double>() * (decay_first ? gam.bottomRows(c) : gam.topRows(c))).cast<float>();
            else ehat = phi;
            u = values.middleRows(start, c);
            u.noalias() -= ehat * grid_.transpose();  // V − Ê S₀ᵀ
            u = b.asDiagonal() * u;
            lower.noalias() = ehat * ftil.transpose();
            lower = b.asDiagonal() * lower;  // only its strictly lower part is used
            solve_unit_lower(lower, u);
        }
        if (decays) {
            const Eigen::Array<float, 1, Eigen::Dynamic> end = gam.row(c).cast<float>();
            grid_.array().rowwise() *= end;
            ftil.array().rowwise() *= end;
        }
        grid_.noalias() += u.transpose() * ftil;
    }
}

void GatedGrid::write_backward(ConstMatRef keys, ConstMatRef values, const RowMat& d_grid, MatRef d_keys) const {
    const RowMat f = features(keys);
    const Eigen::Index n = f.rows(), d = f.cols();
    // forward, saving S at the start of every segment of kCheckpoint writes
    std::vector<RowMat> saved;
    RowMat grid = RowMat::Zero(grid_.rows(), d);
    for (Eigen::Index t = 0; t < n; ++t) {
        if (t % kCheckpoint == 0) saved.push_back(grid);
        step(grid, f.row(t).data(), values.row(t).transpose(), nullptr);
    }
    RowMat g = d_grid, d_f = RowMat::Zero(n, d);
    std::vector<RowMat> states;  // S_{t−1} for each t of the segment
    std::vector<Vec> updates;
    for (Eigen::Index seg = static_cast<Eigen::Index>(saved.size()) - 1; seg >= 0; --seg) {
        const Eigen::Index start = seg * kCheckpoint, end = std::min(n, start + kCheckpoint);
        states.clear(), updates.clear();
        grid = saved[static_cast<std::size_t>(seg)];
        for (Eigen::Index t = start; t < end; ++t) {
            states.push_back(grid);
            updates.emplace_back();
            step(grid, f.row(t).data(), values.row(t).transpose(), &updates.back());
        }
        for (Eigen::Index t = end - 1; t >= start; --t) {
            const float delta = gate(values.row(t).transpose());
            if (delta == 0.0f) continue;  // S_t = S_{t−1}: φ_t has no effect
            const RowMat& prev = states[static_cast<std::size_t>(t - start)];
            const Vec& u = updates[static_cast<std::size_t>(t - start)];
            const auto phi = f.row(t);
            const bool decays = rule_.alpha != 1.0;
            RowVec a = RowVec::Ones(d);
            if (decays) a = decays_at(delta);
            d_f.row(t).noalias() = u.transpose() * g;  // Gᵀ u
            if (rule_.delta()) {
                const float b = strength(delta);
                const Vec d_r = -b * (g * phi.transpose());  // ∂r = −b G φ
                const bool decay_first = rule_.form == Rule::Form::delta_decay_first && decays;
                RowVec back = d_r.transpose() * prev;  // (S_{t−1}ᵀ ∂r)ᵀ
                if (decay_first) back = back.cwiseProduct(a);
                d_f.row(t) += back;
                if (decays) g.array().rowwise() *= a.array();
                const RowVec e = decay_first ? RowVec(a.cwiseProduct(phi)) : RowVec(phi);
                g.noalias() += d_r * e;
            } else if (decays) {
                g.array().rowwise() *= a.array();
            }
        }
    }
    features_backward(keys, d_f, d_keys);
}

}  // namespace memcap
