// memcap/memories/grid/outer_product_grid.cpp — the grids' causal backward (see outer_product_grid.hpp).
#include "memories/grid/outer_product_grid.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace memcap {

namespace {

constexpr Eigen::Index kSegment = 32;  // tokens between the causal backward's saved states

/// Rows [start, start + c) of each gate input present.
TokenGates slice(const TokenGates& g, Eigen::Index start, Eigen::Index c) {
    TokenGates s;
    if (g.log_decay.size() > 0) s.log_decay = g.log_decay.middleRows(start, c);
    if (g.beta.size() > 0) s.beta = g.beta.segment(start, c);
    if (g.write_gate.size() > 0) s.write_gate = g.write_gate.segment(start, c);
    return s;
}

}  // namespace

void OuterProductGrid::causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                                       ConstMatRef d_out, CausalGrads& grads) {
    const Eigen::Index n = keys.rows(), d = grid_.cols(), d_v = grid_.rows();
    if (d_out.rows() != n || d_out.cols() != values.cols())
        throw std::invalid_argument("causal_backward: d_out must be T x d_value");
    reset();
    // forward: the grid's own causal form, a segment at a time, from the zero state
    std::vector<RowMat> saved;
    RowMat out;
    for (Eigen::Index start = 0; start < n; start += kSegment) {
        const Eigen::Index c = std::min(kSegment, n - start);
        saved.push_back(grid_);
        out.resize(c, values.cols());
        causal(queries.middleRows(start, c), keys.middleRows(start, c), values.middleRows(start, c), slice(gates, start, c),
               out);
    }
    const RowMat final_state = grid_;

    const RowMat fq = features(queries), fk = features(keys);
    RowMat d_fq(n, d), d_fk = RowMat::Zero(n, d);
    grads.d_values.setZero(n, values.cols());
    const bool has_decay = gates.log_decay.size() > 0, has_beta = gates.beta.size() > 0,
               has_gate = gates.write_gate.size() > 0;
    if (has_decay) grads.d_log_decay.setZero(n, gates.log_decay.cols());
    else grads.d_log_decay.resize(0, 0);
    if (has_beta) grads.d_beta.setZero(n);
    else grads.d_beta.resize(0);
    if (has_gate) grads.d_write_gate.setZero(n);
    else grads.d_write_gate.resize(0);

    RowMat g = RowMat::Zero(d_v, d);  // ∂L/∂S_t
    std::vector<RowMat> states;       // S_{t−1} of each token of the segment, then its end state
    Vec r, d_u, d_r;
    RowVec u, e, d_e, d_a;
    for (Eigen::Index seg = static_cast<Eigen::Index>(saved.size()) - 1; seg >= 0; --seg) {
        const Eigen::Index start = seg * kSegment, end = std::min(n, start + kSegment);
        grid_ = saved[static_cast<std::size_t>(seg)];
        states.clear();
        for (Eigen::Index t = start; t < end; ++t) {  // causal_by_token's writes
            states.push_back(grid_);
            if (gates.empty()) write(keys.row(t).transpose(), values.row(t).transpose());
            else write_gated(keys.row(t).transpose(), values.row(t).transpose(), token_gate(gates, t));
        }
        states.push_back(grid_);
        for (Eigen::Index t = end - 1; t >= start; --t) {
            const RowMat& before = states[static_cast<std::size_t>(t - start)];
            const RowMat& after = states[static_cast<std::size_t>(t - start + 1)];
            // the read after write t
            g.noalias() += d_out.row(t).transpose() * fq.row(t);
            d_fq.row(t).noalias() = d_out.row(t) * after;
            // write t
            const TokenGate tg = gates.empty() ? TokenGate{} : token_gate(gates, t);
            const WriteStep s = write_step(values.row(t).transpose(), tg);
            if (s.frozen) continue;
            const auto f = fk.row(t);
            const auto v = values.row(t);
            const bool decays = s.a.size() > 0;
            const bool scaled_e = s.delta && s.decay_first && decays;
            if (s.delta) {
                e = scaled_e ? RowVec(s.a.cwiseProduct(f)) : RowVec(f);
                r.noalias() = before * e.transpose();
                u = s.b * (v - r.transpose());
            } else {
                u = s.b * v;
            }
            d_u.noalias() = g * f.transpose();
            d_fk.row(t).noalias() += u * g;
            if (decays) d_a = g.cwiseProduct(before).colwise().sum();
            float d_b = 0.0f;
            if (s.delta) {
                d_b = d_u.dot(v.transpose() - r);
                d_r = -s.b * d_u;
                d_e.noalias() = d_r.transpose() * before;
                if (scaled_e) {
                    d_fk.row(t) += s.a.cwiseProduct(d_e);
                    d_a += f.cwiseProduct(d_e);
                } else {
                    d_fk.row(t) += d_e;
                }
                if (decays) g.array().rowwise() *= s.a.array();
                g.noalias() += d_r * e;
            } else {
                d_b = d_u.dot(v.transpose());
                if (decays) g.array().rowwise() *= s.a.array();
            }
            grads.d_values.row(t) = s.b * d_u.transpose();
            if (has_decay && decays) {  // a = exp(log_decay): ∂log_decay_j = a_j ∂a_j
                const RowVec d_log = s.a.cwiseProduct(d_a);
                if (gates.log_decay.cols() == 1) grads.d_log_decay(t, 0) = d_log.sum();
                else grads.d_log_decay.row(t) = d_log;
            }
            if (has_beta) grads.d_beta(t) = d_b * s.db_dbeta;
            if (has_gate) {
                float dg = d_b * s.db_dgate;
                if (decays && s.dlog_a_dgate.size() > 0) dg += s.a.cwiseProduct(d_a).dot(s.dlog_a_dgate);
                grads.d_write_gate(t) = dg;
            }
        }
    }
    grid_ = final_state;
    grads.d_queries.resize(n, queries.cols());
    grads.d_keys.resize(n, keys.cols());
    features_backward(queries, d_fq, grads.d_queries);
    features_backward(keys, d_fk, grads.d_keys);
}

}  // namespace memcap
