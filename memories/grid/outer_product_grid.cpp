// memcap/memories/grid/outer_product_grid.cpp — the grids' causal backward (see outer_product_grid.hpp).
#include "memories/grid/outer_product_grid.hpp"

#include "core/simd.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace memcap {

namespace {

namespace rows {  // the backward's row operations (a namespace of their own in a unity batch)

using simd::Floats;
using simd::kLanes;

/// Σ_j x_j y_j: one madd chain per lane over the blocks of 16, the lanes summed (simd::lane_sum), then
/// the tail in index order — the same bits at any vector width.
[[gnu::always_inline]] inline float dot(const float* x, const float* y, Eigen::Index n) {
    const Eigen::Index blocks = n / kLanes * kLanes;
    float sum = 0.0f;
    if (blocks > 0) {
        Floats acc = simd::broadcast(0.0f);
        for (Eigen::Index j = 0; j < blocks; j += kLanes) acc = simd::madd(simd::load(x + j), simd::load(y + j), acc);
        sum = simd::lane_sum(acc);
    }
    for (Eigen::Index j = blocks; j < n; ++j) sum = simd::madd(x[j], y[j], sum);
    return sum;
}

/// y_j ← s x_j + y_j (one madd each).
[[gnu::always_inline]] inline void axpy(float s, const float* x, float* y, Eigen::Index n) {
    const Eigen::Index blocks = n / kLanes * kLanes;
    const Floats sv = simd::broadcast(s);
    for (Eigen::Index j = 0; j < blocks; j += kLanes) simd::store(y + j, simd::madd(sv, simd::load(x + j), simd::load(y + j)));
    for (Eigen::Index j = blocks; j < n; ++j) y[j] = simd::madd(s, x[j], y[j]);
}

/// y_j ← x_j z_j + y_j (one madd each).
[[gnu::always_inline]] inline void madd_rows(const float* x, const float* z, float* y, Eigen::Index n) {
    const Eigen::Index blocks = n / kLanes * kLanes;
    for (Eigen::Index j = 0; j < blocks; j += kLanes)
        simd::store(y + j, simd::madd(simd::load(x + j), simd::load(z + j), simd::load(y + j)));
    for (Eigen::Index j = blocks; j < n; ++j) y[j] = simd::madd(x[j], z[j], y[j]);
}

/// One token's backward over the rows of G, S_{t−1} and S_t (row-major, d_v × d):
///     G_i += ∂o_i φ(q_t);  ∂φ(q_t) += ∂o_i S_t,i  (the read after write t)
///     r_i = S_{t−1},i · e;  u_i = b (v_i − r_i) (delta), b v_i (additive)
///     ∂u_i = G_i · φ_t;  ∂φ_t += u_i G_i;  ∂a += G_i ⊙ S_{t−1},i;  ∂v_i = b ∂u_i
///     delta: ∂r_i = −b ∂u_i, ∂e += ∂r_i S_{t−1},i;  G_i ← G_i ⊙ a + ∂r_i e (else G_i ⊙ a)
struct Token {
    float* g;
    const float *before, *after, *d_out, *fq, *f, *e, *v, *a;  // a: the decays, or null
    float *d_fq, *d_f, *d_e, *d_a, *d_value;
    float b;
    bool delta;
    bool frozen;  // the write skipped (WriteStep::frozen): the read's part only
};

/// backward_rows at d = kBlocks × 16 + kTail, a width known when compiled: the row of G and the four
/// sums over the rows (∂φ(q_t), ∂φ_t, ∂a, ∂e) held in registers or local arrays instead of loaded
/// and stored at every row. The same madds in the same order as the loop below — the blocks of 16
/// lane by lane, a dot product's lanes summed by lane_sum, then the tail in index order — so the
/// same bits (tests/test_causal_backward.cpp compares the two at every width this is built for).
template <int kBlocks, int kTail>
[[gnu::always_inline]] inline float backward_rows_fixed(const Token& k, Eigen::Index d_v) {
    constexpr int B = kBlocks, R = kTail;
    constexpr Eigen::Index d = Eigen::Index{B} * kLanes + R;
    constexpr Eigen::Index t0 = Eigen::Index{B} * kLanes;  // where the tail starts
    constexpr int B1 = B > 0 ? B : 1, R1 = R > 0 ? R : 1;  // (no zero-length arrays)
    const auto at = [](const float* p, int j) { return simd::load(p + j * kLanes); };
    const Floats zero = simd::broadcast(0.0f);
    Floats fq[B1], f[B1], e[B1], a[B1], d_fq[B1], d_f[B1], d_a[B1], d_e[B1];
    float fq_t[R1], f_t[R1], e_t[R1], a_t[R1], d_fq_t[R1], d_f_t[R1], d_a_t[R1], d_e_t[R1];
    for (int j = 0; j < B; ++j) {
        fq[j] = at(k.fq, j), f[j] = at(k.f, j), d_fq[j] = at(k.d_fq, j), d_f[j] = at(k.d_f, j);
        e[j] = k.delta ? at(k.e, j) : zero, d_e[j] = k.delta ? at(k.d_e, j) : zero;
        a[j] = k.a ? at(k.a, j) : zero, d_a[j] = k.a ? at(k.d_a, j) : zero;
    }
    for (int j = 0; j < R; ++j) {
        fq_t[j] = k.fq[t0 + j], f_t[j] = k.f[t0 + j], d_fq_t[j] = k.d_fq[t0 + j], d_f_t[j] = k.d_f[t0 + j];
        e_t[j] = k.delta ? k.e[t0 + j] : 0.0f, d_e_t[j] = k.delta ? k.d_e[t0 + j] : 0.0f;
        a_t[j] = k.a ? k.a[t0 + j] : 0.0f, d_a_t[j] = k.a ? k.d_a[t0 + j] : 0.0f;
    }
    float d_b = 0.0f;
    for (Eigen::Index i = 0; i < d_v; ++i) {
        float* gi = k.g + i * d;
        const float* bi = k.before + i * d;
        const float* ai = k.after + i * d;
        Floats g[B1];
        float g_t[R1];
        const float dout = k.d_out[i];
        const Floats dout_v = simd::broadcast(dout);
        // G_i += ∂o_i φ(q_t);  ∂φ(q_t) += ∂o_i S_t,i
        for (int j = 0; j < B; ++j) g[j] = simd::madd(dout_v, fq[j], at(gi, j));
        for (int j = 0; j < R; ++j) g_t[j] = simd::madd(dout, fq_t[j], gi[t0 + j]);
        for (int j = 0; j < B; ++j) d_fq[j] = simd::madd(dout_v, at(ai, j), d_fq[j]);
        for (int j = 0; j < R; ++j) d_fq_t[j] = simd::madd(dout, ai[t0 + j], d_fq_t[j]);
        if (!k.frozen) {
            // dot(x, y): the blocks' lanes (lane_sum), then the tail in index order
            const auto dot = [&](const Floats* xv, const float* xt, const Floats* yv, const float* yt) {
                float sum = 0.0f;
                if constexpr (B > 0) {
                    Floats acc = zero;
                    for (int j = 0; j < B; ++j) acc = simd::madd(xv[j], yv[j], acc);
                    sum = simd::lane_sum(acc);
                }
                for (int j = 0; j < R; ++j) sum = simd::madd(xt[j], yt[j], sum);
                return sum;
            };
            Floats b_v[B1];
            for (int j = 0; j < B; ++j) b_v[j] = at(bi, j);
            const float* b_t = bi + t0;
            const float r = k.delta ? dot(b_v, b_t, e, e_t) : 0.0f;
            const float w = k.delta ? k.v[i] - r : k.v[i];
            const float du = dot(g, g_t, f, f_t);
            const float bw = k.b * w;
            const Floats bw_v = simd::broadcast(bw);
            for (int j = 0; j < B; ++j) d_f[j] = simd::madd(bw_v, g[j], d_f[j]);
            for (int j = 0; j < R; ++j) d_f_t[j] = simd::madd(bw, g_t[j], d_f_t[j]);
            if (k.a) {
                for (int j = 0; j < B; ++j) d_a[j] = simd::madd(g[j], b_v[j], d_a[j]);
                for (int j = 0; j < R; ++j) d_a_t[j] = simd::madd(g_t[j], b_t[j], d_a_t[j]);
            }
            d_b = simd::madd(du, w, d_b);
            k.d_value[i] = k.b * du;
            if (k.a) {
                for (int j = 0; j < B; ++j) g[j] = g[j] * a[j];
                for (int j = 0; j < R; ++j) g_t[j] *= a_t[j];
            }
            if (k.delta) {
                const float dr = -k.b * du;
                const Floats dr_v = simd::broadcast(dr);
                for (int j = 0; j < B; ++j) d_e[j] = simd::madd(dr_v, b_v[j], d_e[j]);
                for (int j = 0; j < R; ++j) d_e_t[j] = simd::madd(dr, b_t[j], d_e_t[j]);
                for (int j = 0; j < B; ++j) g[j] = simd::madd(dr_v, e[j], g[j]);
                for (int j = 0; j < R; ++j) g_t[j] = simd::madd(dr, e_t[j], g_t[j]);
            }
        }
        for (int j = 0; j < B; ++j) simd::store(gi + j * kLanes, g[j]);
        for (int j = 0; j < R; ++j) gi[t0 + j] = g_t[j];
    }
    for (int j = 0; j < B; ++j) {
        simd::store(k.d_fq + j * kLanes, d_fq[j]), simd::store(k.d_f + j * kLanes, d_f[j]);
        if (k.delta) simd::store(k.d_e + j * kLanes, d_e[j]);
        if (k.a) simd::store(k.d_a + j * kLanes, d_a[j]);
    }
    for (int j = 0; j < R; ++j) {
        k.d_fq[t0 + j] = d_fq_t[j], k.d_f[t0 + j] = d_f_t[j];
        if (k.delta) k.d_e[t0 + j] = d_e_t[j];
        if (k.a) k.d_a[t0 + j] = d_a_t[j];
    }
    return d_b;
}

/// Token's rows (a frozen token: the read's part only); returns ∂b = Σ_i ∂u_i (v_i − r_i) (delta) or
/// Σ_i ∂u_i v_i. The reference, at any d; backward_rows_fixed is it at a width known when compiled.
float backward_rows(const Token& k, Eigen::Index d_v, Eigen::Index d) {
    float d_b = 0.0f;
    for (Eigen::Index i = 0; i < d_v; ++i) {
        float* gi = k.g + i * d;
        const float* bi = k.before + i * d;
        axpy(k.d_out[i], k.fq, gi, d);
        axpy(k.d_out[i], k.after + i * d, k.d_fq, d);
        if (k.frozen) continue;
        const float r = k.delta ? dot(bi, k.e, d) : 0.0f;
        const float w = k.delta ? k.v[i] - r : k.v[i];
        const float du = dot(gi, k.f, d);
        axpy(k.b * w, gi, k.d_f, d);
        if (k.a) madd_rows(gi, bi, k.d_a, d);
        d_b = simd::madd(du, w, d_b);
        k.d_value[i] = k.b * du;
        if (k.a)
            for (Eigen::Index j = 0; j < d; ++j) gi[j] *= k.a[j];
        if (k.delta) {
            const float dr = -k.b * du;
            axpy(dr, bi, k.d_e, d);
            axpy(dr, k.e, gi, d);
        }
    }
    return d_b;
}

/// backward_rows_fixed at each width OuterProductGrid::kUnrolledWidths names (the list is the
/// dispatch: a width listed is a width compiled), the reference loop at any other.
template <std::size_t I = 0>
float backward_rows_at(const Token& k, Eigen::Index d_v, Eigen::Index d) {
    constexpr std::size_t widths = sizeof OuterProductGrid::kUnrolledWidths / sizeof OuterProductGrid::kUnrolledWidths[0];
    if constexpr (I == widths) {
        return backward_rows(k, d_v, d);
    } else {
        constexpr int w = OuterProductGrid::kUnrolledWidths[I];
        if (d == w) return backward_rows_fixed<w / kLanes, w % kLanes>(k, d_v);
        return backward_rows_at<I + 1>(k, d_v, d);
    }
}

}  // namespace rows

}  // namespace

namespace {

bool same_floats(ConstMatRef a, const RowMat& b) {
    if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
    for (Eigen::Index i = 0; i < a.rows(); ++i)
        if (std::memcmp(a.row(i).data(), b.row(i).data(), sizeof(float) * static_cast<std::size_t>(a.cols())) != 0)
            return false;
    return true;
}
bool same_floats(const Vec& a, const Vec& b) {
    return a.size() == b.size() &&
           (a.size() == 0 || std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0);
}

}  // namespace

void OuterProductGrid::causal(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                              MatRef out) {
    kept_.valid = false;
    const Eigen::Index n = keys.rows(), floats = grid_.size();
    // from the zero state only (causal_backward's start): every float +0, as reset() leaves it
    const auto zero = [&] {
        return std::all_of(grid_.data(), grid_.data() + floats, [](float x) {
            std::uint32_t bits;
            std::memcpy(&bits, &x, sizeof bits);
            return bits == 0;
        });
    };
    if (!kept_.asked || n == 0 || (n + 1) * floats > backward_saved_floats_ || !zero())
        return causal_by_token(queries, keys, values, gates, out);
    kept_.states.resize(static_cast<std::size_t>((n + 1) * floats));
    causal_by_token(queries, keys, values, gates, out, kept_.states.data());
    kept_.keys = keys, kept_.values = values, kept_.gates = gates;
    kept_.valid = true;
}

void OuterProductGrid::causal_for_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values,
                                           const TokenGates& gates, MatRef out) {
    kept_.asked = true;
    try {
        causal(queries, keys, values, gates, out);  // (virtual: linear's chunks keep nothing)
    } catch (...) {
        kept_.asked = false;
        throw;
    }
    kept_.asked = false;
}

bool OuterProductGrid::kept_for(ConstMatRef keys, ConstMatRef values, const TokenGates& gates) const {
    return kept_.valid && same_floats(keys, kept_.keys) && same_floats(values, kept_.values) &&
           same_floats(gates.log_decay, kept_.gates.log_decay) && same_floats(gates.beta, kept_.gates.beta) &&
           same_floats(gates.write_gate, kept_.gates.write_gate);
}

void OuterProductGrid::causal_backward(ConstMatRef queries, ConstMatRef keys, ConstMatRef values, const TokenGates& gates,
                                       ConstMatRef d_out, CausalGrads& grads) {
    const Eigen::Index n = keys.rows(), d = grid_.cols(), d_v = grid_.rows(), floats = grid_.size();
    if (d_out.rows() != n || d_out.cols() != values.cols())
        throw std::invalid_argument("causal_backward: d_out must be T x d_value");
    if (values.cols() != d_v) throw std::invalid_argument("causal_backward: the values must be d_value wide");
    require_causal_shapes(queries, keys, values, gates, d_out);  // what causal() checks
    const auto write_token = [&](Eigen::Index t) {  // causal_by_token's write of token t
        if (gates.empty()) write(keys.row(t).transpose(), values.row(t).transpose());
        else write_gated(keys.row(t).transpose(), values.row(t).transpose(), token_gate(gates, t));
    };
    // The states S_0 … S_T: those causal_for_backward kept from these inputs' writes, or the
    // writes again (a read changes no state). Written again: the state at each segment's start
    // first; one segment when every state fits, else ⌈√T⌉ tokens a segment, about 2√T states
    // kept at once.
    const bool kept = kept_for(keys, values, gates);
    kept_.valid = false;
    Eigen::Index segment = std::max<Eigen::Index>(n, 1);
    if (!kept && (n + 1) * floats > backward_saved_floats_) {
        segment = 1;
        while (segment * segment < n) ++segment;
    }
    reset();
    std::vector<RowMat> starts;
    for (Eigen::Index start = 0; start < n && !kept; start += segment) {
        starts.push_back(grid_);
        if (start + segment >= n) break;  // the last segment is written again below
        for (Eigen::Index t = start; t < start + segment; ++t) write_token(t);
    }
    const Eigen::Index segments = kept ? 1 : static_cast<Eigen::Index>(starts.size());

    const RowMat fq = features(queries), fk = features(keys);
    RowMat d_fq = RowMat::Zero(n, d), d_fk = RowMat::Zero(n, d);
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
    RowMat final_state;
    // S_{t−1} of each token of the segment, then its end state: one buffer per thread, grown to the
    // largest segment and kept (a training run calls this for every episode, on one thread)
    thread_local std::vector<float> states;
    RowVec e(d), d_e(d), d_a(d);
    for (Eigen::Index seg = segments - 1; seg >= 0; --seg) {
        const Eigen::Index start = seg * segment, end = std::min(n, start + segment);
        const float* saved = kept_.states.data();
        if (!kept) {
            grid_ = starts[static_cast<std::size_t>(seg)];
            const auto need = static_cast<std::size_t>((end - start + 1) * floats);
            if (states.size() < need) states.resize(need);
            for (Eigen::Index t = start; t < end; ++t) {
                std::memcpy(states.data() + (t - start) * floats, grid_.data(), sizeof(float) * floats);
                write_token(t);
            }
            std::memcpy(states.data() + (end - start) * floats, grid_.data(), sizeof(float) * floats);
            saved = states.data();
        }
        if (end == n) final_state = Eigen::Map<const RowMat>(saved + (end - start) * floats, grid_.rows(), grid_.cols());
        for (Eigen::Index t = end - 1; t >= start; --t) {
            const float* before = saved + (t - start) * floats;
            const float* after = before + floats;
            const float* dout = d_out.row(t).data();
            const float* fqt = fq.row(t).data();
            float* dfq = d_fq.row(t).data();
            const TokenGate tg = gates.empty() ? TokenGate{} : token_gate(gates, t);
            const WriteStep s = write_step(values.row(t).transpose(), tg);
            const float* f = fk.row(t).data();
            const float* v = values.row(t).data();
            const bool decays = s.a.size() > 0;
            const bool scaled_e = s.delta && s.decay_first && decays;
            if (scaled_e) e = s.a.cwiseProduct(fk.row(t));
            const float* ep = scaled_e ? e.data() : f;
            float* dfk = d_fk.row(t).data();
            d_e.setZero(), d_a.setZero();
            const rows::Token tok{g.data(), before, after, dout, fqt, f, ep, v, s.a.size() > 0 ? s.a.data() : nullptr,
                                  dfq, dfk, d_e.data(), d_a.data(), &grads.d_values(t, 0), s.b, s.delta, s.frozen};
            const float d_b = unrolled_backward_ ? rows::backward_rows_at(tok, d_v, d) : rows::backward_rows(tok, d_v, d);
            if (s.frozen) continue;  // its key, value and gate gradients stay 0
            if (s.delta) {
                if (scaled_e) {
                    for (Eigen::Index j = 0; j < d; ++j) dfk[j] += s.a(j) * d_e(j);
                    d_a += fk.row(t).cwiseProduct(d_e);
                } else {
                    for (Eigen::Index j = 0; j < d; ++j) dfk[j] += d_e(j);
                }
            }
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
    if (n > 0) grid_ = final_state;  // (T = 0: the zero state reset left)
    grads.d_queries.resize(n, queries.cols());
    grads.d_keys.resize(n, keys.cols());
    features_backward(queries, d_fq, grads.d_queries);
    features_backward(keys, d_fk, grads.d_keys);
}

}  // namespace memcap
