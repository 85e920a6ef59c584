// memcap/memories/mesanet/mesa_memory.cpp — see mesa_memory.hpp.
#include "memories/mesanet/mesa_memory.hpp"

#include "memories/grid/salience.hpp"

#include <Eigen/Cholesky>

#include <cmath>

namespace memcap {

MesaMemory::Dims MesaMemory::size(const MemoryShape& shape) {
    const std::int64_t dv = shape.d_value;
    std::int64_t d = shape.d_key;
    if (shape.budget_floats) {
        const std::int64_t b = *shape.budget_floats;
        const auto floats = [dv](std::int64_t k) { return k * (k + 1) / 2 + dv * k; };
        // d(d+1)/2 + d_v d ≤ B: d = (−(2 d_v + 1) + √((2 d_v + 1)² + 8B)) / 2, then exact
        const double c = 2.0 * double(dv) + 1.0;
        d = static_cast<std::int64_t>(std::floor((-c + std::sqrt(c * c + 8.0 * double(b))) / 2.0));
        while (d > 0 && floats(d) > b) --d;
        while (floats(d + 1) <= b) ++d;
        d = std::max<std::int64_t>(d, 1);  // below the minimum: make_memory refuses it
    }
    return {FeatureMap::size("proj", shape.d_key, d, 1), dv, 1 + dv};
}

MesaMemory::MesaMemory(const MemoryShape& shape, double lambda, double gamma, bool gated, Rng& rng)
    : phi_("proj", shape.d_key, size(shape).phi.dim, 1, rng), lambda_(lambda), gamma_(gamma), gated_(gated),
      feature_(shape.salience_feature), d_phi_(phi_.dim()), d_value_(shape.d_value),
      state_(Vec::Zero(std::int64_t{shape.d_value} * phi_.dim() + std::int64_t{phi_.dim()} * (phi_.dim() + 1) / 2)) {}

RowMat MesaMemory::features(ConstMatRef x) const {
    RowMat f(x.rows(), d_phi_);
    phi_.apply(x, f);
    normalise_rows(f);
    return f;
}

void MesaMemory::features_backward(ConstMatRef x, ConstMatRef d_f, MatRef d_x) const {
    RowMat raw(x.rows(), d_phi_);
    phi_.apply(x, raw);
    phi_.backward(x, unit_rows_backward(raw, d_f), d_x);
}

void MesaMemory::write_batch(ConstMatRef keys, ConstMatRef values) {
    const RowMat f = features(keys);
    double decay = 1.0;
    const Vec w = unrolled_weights(values, gamma_, gated_, feature_, decay);
    if (decay != 1.0) state_ *= static_cast<float>(decay);
    const RowMat wf = w.asDiagonal() * f;
    g().noalias() += values.transpose() * wf;
    // H's lower triangle only (H is symmetric): Σ w φ φᵀ on and below the diagonal, then packed
    RowMat h = RowMat::Zero(d_phi_, d_phi_);
    h.triangularView<Eigen::Lower>() += f.transpose() * wf;
    float* packed = state_.data() + std::int64_t{d_value_} * d_phi_;
    for (int i = 0; i < d_phi_; ++i) {
        Eigen::Map<Vec>(packed, i + 1) += h.row(i).head(i + 1).transpose();
        packed += i + 1;
    }
}

void MesaMemory::write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) {
    if (gate.beta) throw std::invalid_argument("MesaNet takes no per-token write strength beta");
    if (gate.log_decay && gate.decay_channels != 1)
        throw std::invalid_argument("MesaNet's decay is one scalar: a per-channel decay is refused");
    const float delta = gate.write_gate ? *gate.write_gate
                                        : (gated_ ? salience_step(value.data(), static_cast<int>(value.size()), feature_) : 1.0f);
    if (delta == 0.0f) return;  // a skipped token: the state exactly as it was
    const double a = gate.log_decay ? std::exp(double(gate.log_decay[0])) : std::pow(gamma_, double(delta));
    const RowMat f = features(key.transpose());
    if (a != 1.0) state_ *= static_cast<float>(a);
    g().noalias() += (delta * value) * f;
    float* packed = state_.data() + std::int64_t{d_value_} * d_phi_;
    for (int i = 0; i < d_phi_; ++i) {
        Eigen::Map<Vec>(packed, i + 1) += (delta * f(0, i)) * f.row(0).head(i + 1).transpose();
        packed += i + 1;
    }
}

Eigen::MatrixXd MesaMemory::h_plus_lambda() const {
    Eigen::MatrixXd a(d_phi_, d_phi_);
    const float* packed = state_.data() + std::int64_t{d_value_} * d_phi_;
    for (int i = 0; i < d_phi_; ++i)
        for (int j = 0; j <= i; ++j) a(i, j) = a(j, i) = static_cast<double>(*packed++);
    a.diagonal().array() += lambda_;
    return a;
}

Eigen::LLT<Eigen::MatrixXd> MesaMemory::factor() const {
    Eigen::LLT<Eigen::MatrixXd> llt(h_plus_lambda());  // exactly symmetric: unpacked from one triangle
    // H + λI is positive definite as computed; a state stored at a low precision (rounded H,
    // memories/precision.hpp) can lose that, and the read is then a measured failure.
    if (llt.info() != Eigen::Success)
        throw MemoryFailure("H + lambda I is not positive definite (its rounded state); the least-squares read fails");
    return llt;
}

void MesaMemory::read(ConstVecRef query, VecRef out) const {
    RowMat r(1, d_value_);
    read_batch(query.transpose(), r);
    out = r.row(0).transpose();
}

void MesaMemory::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    require_no_hidden(options);
    // Y = Φ_q A⁻¹ (A symmetric: Yᵀ = A⁻¹ Φ_qᵀ), then R = Y Gᵀ
    const Eigen::MatrixXd y = factor().solve(features(queries).cast<double>().transpose()).transpose();
    out = (y * g().cast<double>().transpose()).cast<float>();
}

void MesaMemory::backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                          MatRef d_queries) const {
    const RowMat fq = features(queries), fk = features(keys);
    const Eigen::LLT<Eigen::MatrixXd> llt = factor();
    const Eigen::MatrixXd y = llt.solve(fq.cast<double>().transpose()).transpose();  // Φ_q A⁻¹, m × d_φ
    const Eigen::MatrixXd g = this->g().cast<double>();                                // d_v × d_φ
    const Eigen::MatrixXd zd = llt.solve((d_reads.cast<double>() * g).transpose()).transpose();  // W G A⁻¹
    const Eigen::MatrixXd d_g = d_reads.cast<double>().transpose() * y;  // d_v × d_φ
    const Eigen::MatrixXd d_h = -(y.transpose() * zd);                    // d_φ × d_φ
    const Eigen::MatrixXd d_h_sym = d_h + d_h.transpose();
    double decay = 1.0;
    const Vec w = unrolled_weights(values, gamma_, gated_, feature_, decay);
    const Eigen::MatrixXd fkd = fk.cast<double>();
    Eigen::MatrixXd d_fk = fkd * d_h_sym + values.cast<double>() * d_g;  // row t: ((∂H + ∂Hᵀ) φ_t + ∂Gᵀ v_t)ᵀ
    d_fk = w.cast<double>().asDiagonal() * d_fk;
    features_backward(queries, zd.cast<float>(), d_queries);
    features_backward(keys, d_fk.cast<float>(), d_keys);
}

}  // namespace memcap
