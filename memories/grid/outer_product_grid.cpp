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

/// The lanes of v summed as a tree in a fixed order (halves, then quarters, …): the same bits at any
/// vector width.
[[gnu::always_inline]] inline float lane_sum(Floats v) {
    using F8 = float __attribute__((vector_size(32)));
    using F4 = float __attribute__((vector_size(16)));
    static_assert(kLanes == 16);
    F8 lo8, hi8;
    std::memcpy(&lo8, &v, sizeof lo8);
    std::memcpy(&hi8, reinterpret_cast<const char*>(&v) + sizeof lo8, sizeof hi8);
    const F8 s8 = lo8 + hi8;
    F4 lo4, hi4;
    std::memcpy(&lo4, &s8, sizeof lo4);
    std::memcpy(&hi4, reinterpret_cast<const char*>(&s8) + sizeof lo4, sizeof hi4);
    const F4 s4 = lo4 + hi4;
    const float s2[2] = {s4[0] + s4[2], s4[1] + s4[3]};
    return s2[0] + s2[1];
}

/// Σ_j x_j y_j: one madd chain per lane over the blocks of 16, the lanes summed (lane_sum), then
/// the tail in index order — the same bits at any vector width.
[[gnu::always_inline]] inline float dot(const float* x, const float* y, Eigen::Index n) {
    const Eigen::Index blocks = n / kLanes * kLanes;
    float sum = 0.0f;
    if (blocks > 0) {
        Floats acc = simd::broadcast(0.0f);
        for (Eigen::Index j = 0; j < blocks; j += kLanes) acc = simd::madd(simd::load(x + j), simd::load(y + j), acc);
        sum = lane_sum(acc);
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

/// backward_rows at d = kBlocks × 16 with the row of G and the four sums over the rows (∂φ(q_t),
/// ∂φ_t, ∂a, ∂e) held in registers instead of loaded and stored at every row: the same madds in
/// the same order as the loop below, so the same bits (the finite-difference tests run d_φ = 8, 16, 32, 64).
template <int kBlocks>
[[gnu::always_inline]] inline float backward_rows_held(const Token& k, Eigen::Index d_v) {
    constexpr Eigen::Index d = Eigen::Index{kBlocks} * kLanes;
    const auto at = [](const float* p, int j) { return simd::load(p + j * kLanes); };
    const Floats zero = simd::broadcast(0.0f);
    Floats fq[kBlocks], f[kBlocks], e[kBlocks], a[kBlocks], d_fq[kBlocks], d_f[kBlocks], d_a[kBlocks], d_e[kBlocks];
    for (int j = 0; j < kBlocks; ++j) {
        fq[j] = at(k.fq, j), f[j] = at(k.f, j), d_fq[j] = at(k.d_fq, j), d_f[j] = at(k.d_f, j);
        e[j] = k.delta ? at(k.e, j) : zero, d_e[j] = k.delta ? at(k.d_e, j) : zero;
        a[j] = k.a ? at(k.a, j) : zero, d_a[j] = k.a ? at(k.d_a, j) : zero;
    }
    float d_b = 0.0f;
    for (Eigen::Index i = 0; i < d_v; ++i) {
        float* gi = k.g + i * d;
        const float* bi = k.before + i * d;
        const float* ai = k.after + i * d;
        Floats g[kBlocks];
        const Floats dout = simd::broadcast(k.d_out[i]);
        for (int j = 0; j < kBlocks; ++j) g[j] = simd::madd(dout, fq[j], at(gi, j));       // G_i += ∂o_i φ(q_t)
        for (int j = 0; j < kBlocks; ++j) d_fq[j] = simd::madd(dout, at(ai, j), d_fq[j]);  // ∂φ(q_t) += ∂o_i S_t,i
        if (!k.frozen) {
            float r = 0.0f;
            if (k.delta) {
                Floats acc = zero;
                for (int j = 0; j < kBlocks; ++j) acc = simd::madd(at(bi, j), e[j], acc);
                r = lane_sum(acc);
            }
            const float w = k.delta ? k.v[i] - r : k.v[i];
            Floats acc = zero;
            for (int j = 0; j < kBlocks; ++j) acc = simd::madd(g[j], f[j], acc);
            const float du = lane_sum(acc);
            const Floats bw = simd::broadcast(k.b * w);
            for (int j = 0; j < kBlocks; ++j) d_f[j] = simd::madd(bw, g[j], d_f[j]);
            if (k.a)
                for (int j = 0; j < kBlocks; ++j) d_a[j] = simd::madd(g[j], at(bi, j), d_a[j]);
            d_b = simd::madd(du, w, d_b);
            k.d_value[i] = k.b * du;
            if (k.a)
                for (int j = 0; j < kBlocks; ++j) g[j] = g[j] * a[j];
            if (k.delta) {
                const Floats dr = simd::broadcast(-k.b * du);
                for (int j = 0; j < kBlocks; ++j) d_e[j] = simd::madd(dr, at(bi, j), d_e[j]);
                for (int j = 0; j < kBlocks; ++j) g[j] = simd::madd(dr, e[j], g[j]);
            }
        }
        for (int j = 0; j < kBlocks; ++j) simd::store(gi + j * kLanes, g[j]);
    }
    for (int j = 0; j < kBlocks; ++j) {
        simd::store(k.d_fq + j * kLanes, d_fq[j]), simd::store(k.d_f + j * kLanes, d_f[j]);
        if (k.delta) simd::store(k.d_e + j * kLanes, d_e[j]);
        if (k.a) simd::store(k.d_a + j * kLanes, d_a[j]);
    }
    return d_b;
}

/// backward_rows at d = D below a vector's 16 lanes (the trained study's grids at 256 floats: d_φ = 8),
/// every row's floats and the four sums in local arrays: the loop's scalar madds in the same order
/// (its dot products one chain in index order), so the same bits, at a width the compiler unrolls.
template <int D>
[[gnu::always_inline]] inline float backward_rows_small(const Token& k, Eigen::Index d_v) {
    static_assert(D > 0 && D < kLanes);
    float fq[D], f[D], e[D], a[D], d_fq[D], d_f[D], d_a[D], d_e[D];
    for (int j = 0; j < D; ++j) {
        fq[j] = k.fq[j], f[j] = k.f[j], d_fq[j] = k.d_fq[j], d_f[j] = k.d_f[j];
        e[j] = k.delta ? k.e[j] : 0.0f, d_e[j] = k.delta ? k.d_e[j] : 0.0f;
        a[j] = k.a ? k.a[j] : 0.0f, d_a[j] = k.a ? k.d_a[j] : 0.0f;
    }
    float d_b = 0.0f;
    for (Eigen::Index i = 0; i < d_v; ++i) {
        float* gi = k.g + i * D;
        const float* bi = k.before + i * D;
        const float* ai = k.after + i * D;
        const float dout = k.d_out[i];
        float g[D];
        for (int j = 0; j < D; ++j) g[j] = simd::madd(dout, fq[j], gi[j]);
        for (int j = 0; j < D; ++j) d_fq[j] = simd::madd(dout, ai[j], d_fq[j]);
        if (!k.frozen) {
            float r = 0.0f;
            if (k.delta)
                for (int j = 0; j < D; ++j) r = simd::madd(bi[j], e[j], r);
            const float w = k.delta ? k.v[i] - r : k.v[i];
            float du = 0.0f;
            for (int j = 0; j < D; ++j) du = simd::madd(g[j], f[j], du);
            const float bw = k.b * w;
            for (int j = 0; j < D; ++j) d_f[j] = simd::madd(bw, g[j], d_f[j]);
            if (k.a)
                for (int j = 0; j < D; ++j) d_a[j] = simd::madd(g[j], bi[j], d_a[j]);
            d_b = simd::madd(du, w, d_b);
            k.d_value[i] = k.b * du;
            if (k.a)
                for (int j = 0; j < D; ++j) g[j] *= a[j];
            if (k.delta) {
                const float dr = -k.b * du;
                for (int j = 0; j < D; ++j) d_e[j] = simd::madd(dr, bi[j], d_e[j]);
                for (int j = 0; j < D; ++j) g[j] = simd::madd(dr, e[j], g[j]);
            }
        }
        for (int j = 0; j < D; ++j) gi[j] = g[j];
    }
    for (int j = 0; j < D; ++j) {
        k.d_fq[j] = d_fq[j], k.d_f[j] = d_f[j];
        if (k.delta) k.d_e[j] = d_e[j];
        if (k.a) k.d_a[j] = d_a[j];
    }
    return d_b;
}

/// Token's rows (a frozen token: the read's part only); returns ∂b = Σ_i ∂u_i (v_i − r_i) (delta) or Σ_i ∂u_i v_i. kBlocks > 0: d is
/// kBlocks × 16, a constant the compiler unrolls; 0: any d.
template <int kBlocks>
float backward_rows(const Token& k, Eigen::Index d_v, Eigen::Index d_any) {
    if constexpr (kBlocks > 0) return backward_rows_held<kBlocks>(k, d_v);
    const Eigen::Index d = kBlocks > 0 ? Eigen::Index{kBlocks} * kLanes : d_any;
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
            float d_b = 0.0f;
            switch (d) {  // a common width as a compile-time constant (the same arithmetic, unrolled)
            case 8: d_b = rows::backward_rows_small<8>(tok, d_v); break;
            case 16: d_b = rows::backward_rows<1>(tok, d_v, d); break;
            case 32: d_b = rows::backward_rows<2>(tok, d_v, d); break;
            case 64: d_b = rows::backward_rows<4>(tok, d_v, d); break;
            default: d_b = rows::backward_rows<0>(tok, d_v, d); break;
            }
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
