// memcap/memories/deep/online_mlp.cpp — see online_mlp.hpp.
#include "memories/deep/online_mlp.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace memcap {

namespace {

constexpr float kInvSqrt2 = 0.70710678118654752440f;
constexpr float kInvSqrt2Pi = 0.39894228040143267794f;
constexpr double kGeluFlops = 8.0;
/// The smallest ‖a‖² a step is normalised by (a hidden layer that is all but silent).
constexpr double kMinEnergy = 1e-6;

float gelu(float z) { return 0.5f * z * (1.0f + std::erf(z * kInvSqrt2)); }
float gelu_grad(float z) { return 0.5f * (1.0f + std::erf(z * kInvSqrt2)) + z * kInvSqrt2Pi * std::exp(-0.5f * z * z); }

}  // namespace

std::int64_t OnlineMlp::Dims::weight_floats() const {
    std::int64_t w = 0;
    for (int l = 0; l < depth; ++l) w += rows(l) * cols(l);
    return w;
}

std::int64_t OnlineMlp::Dims::min_budget() const {
    const std::int64_t per = depth == 1 ? d_value : d_key + std::int64_t{depth - 2} + d_value;
    return per * (momentum ? 2 : 1) + pending_floats();
}

double OnlineMlp::Dims::forward_flops() const {
    return 2.0 * static_cast<double>(weight_floats() + phi.param_floats) +
           kGeluFlops * static_cast<double>(hidden) * (depth - 1) + 3.0 * static_cast<double>(d_in()) + 2.0;
}

double OnlineMlp::Dims::write_flops() const {
    const double w = static_cast<double>(weight_floats());
    // forward (2w), the output error (2 d_v), δ back through every layer but the first
    // (2 (w − first layer)) with GELU' (8 h per hidden layer), the weighted gradients added
    // into W (2w: one GEMM); with momentum the second GEMM into S, S added into W and S decayed
    // (6w more). At depth 1 this is the delta rule's 4w.
    return forward_flops() + 2.0 * static_cast<double>(d_value) +
           2.0 * (w - static_cast<double>(rows(0) * cols(0))) + kGeluFlops * static_cast<double>(hidden) * (depth - 1) +
           2.0 * w + (momentum ? 6.0 : 0.0) * w;
}

OnlineMlp::Dims OnlineMlp::size(const MemoryShape& shape, int depth, bool momentum, int batch) {
    Dims d;
    d.depth = depth;
    d.d_key = shape.d_key;
    d.d_value = shape.d_value;
    d.momentum = momentum;
    d.pending = batch - 1;
    const std::int64_t copies = momentum ? 2 : 1;
    if (!shape.budget_floats) {
        d.phi = FeatureMap::size("proj", shape.d_key, shape.d_key, 1);
        if (depth > 1) d.hidden = 4 * std::int64_t{shape.d_key};
        return d;
    }
    const std::int64_t avail = std::max<std::int64_t>(*shape.budget_floats - d.pending_floats(), 0) / copies;
    if (depth == 1) {  // d_φ = the largest with d_v d_φ fitting, through proj as the grids' φ
        const std::int64_t max_dim = avail / shape.d_value;
        if (max_dim >= 1) d.phi = FeatureMap::size("proj", shape.d_key, max_dim, 1);
        return d;
    }
    d.phi = FeatureMap::size("proj", shape.d_key, shape.d_key, 1);
    // the largest h with h d_k + (depth − 2) h² + d_v h ≤ avail: the weights grow with h
    const std::int64_t lin = d.d_key + d.d_value, quad = depth - 2;
    auto fits = [&](std::int64_t h) { return h * lin + quad * h * h <= avail; };
    std::int64_t h = quad == 0 ? avail / lin
                               : static_cast<std::int64_t>((std::sqrt(double(lin) * lin + 4.0 * quad * avail) - lin) /
                                                           (2.0 * quad));
    while (h > 0 && !fits(h)) --h;
    while (fits(h + 1)) ++h;
    d.hidden = std::max<std::int64_t>(h, 0);
    return d;
}

OnlineMlp::OnlineMlp(const MemoryShape& shape, const Dims& dims, const Settings& settings, Rng& rng)
    : dims_(dims), settings_(settings), phi_("proj", shape.d_key, dims.phi.dim, 1, rng) {
    if (settings_.batch != dims_.pending + 1 || (settings_.momentum != 0.0 && !dims_.momentum))
        throw std::logic_error("OnlineMlp: settings (batch, momentum) that its Dims were not sized for");
    for (int l = 0; l < dims_.depth; ++l) {
        offset_.push_back(weights_);
        weights_ += dims_.rows(l) * dims_.cols(l);
    }
    initial_ = Vec::Zero(weights_);
    for (int l = 0; l + 1 < dims_.depth; ++l) {  // the last layer starts at 0
        Eigen::Map<Vec> w(initial_.data() + offset_[static_cast<std::size_t>(l)], dims_.rows(l) * dims_.cols(l));
        rng.fill_normal(w, l == 0 ? 1.0 : 1.0 / std::sqrt(static_cast<double>(dims_.hidden)));
    }
    state_ = Vec::Zero(dims_.state_floats());
    reset();
}

OnlineMlp::WeightMap OnlineMlp::weights(Vec& st, int layer, bool momentum) const {
    return WeightMap(st.data() + (momentum ? weights_ : 0) + offset_[static_cast<std::size_t>(layer)], dims_.rows(layer),
                     dims_.cols(layer));
}
OnlineMlp::ConstWeightMap OnlineMlp::weights(const Vec& st, int layer) const {
    return ConstWeightMap(st.data() + offset_[static_cast<std::size_t>(layer)], dims_.rows(layer), dims_.cols(layer));
}

Eigen::Map<RowMat> OnlineMlp::pending_keys() {
    const std::int64_t at = weights_ * (dims_.momentum ? 2 : 1);
    return Eigen::Map<RowMat>(state_.data() + at, dims_.pending, dims_.d_key);
}
Eigen::Map<RowMat> OnlineMlp::pending_values() {
    const std::int64_t at = weights_ * (dims_.momentum ? 2 : 1) + dims_.pending * dims_.d_key;
    return Eigen::Map<RowMat>(state_.data() + at, dims_.pending, dims_.d_value);
}

void OnlineMlp::reset() {
    state_.setZero();
    state_.head(weights_) = initial_;
    pending_ = 0;
    writes_ = 0;
}

RowMat OnlineMlp::inputs(ConstMatRef x) const {
    RowMat f(x.rows(), phi_.dim());
    phi_.apply(x, f);
    normalise_rows(f);
    return f;
}

RowMat OnlineMlp::forward(const Vec& st, const RowMat& x, std::vector<RowMat>* z, std::vector<RowMat>* a) const {
    RowMat act = x;
    for (int l = 0; l < dims_.depth; ++l) {
        RowMat pre = act * weights(st, l).transpose();
        if (a) a->push_back(std::move(act));
        if (l + 1 == dims_.depth) return pre;
        act = pre.unaryExpr([](float v) { return gelu(v); });
        if (z) z->push_back(std::move(pre));
    }
    return act;  // not reached: depth ≥ 1
}

void OnlineMlp::update(Vec& st, const RowMat& x, ConstMatRef v) const {
    const int b = static_cast<int>(x.rows()), L = dims_.depth;
    std::vector<RowMat> z, a;
    const RowMat out = forward(st, x, &z, &a);
    // a[l] is layer l's input (a[0] = x); δ[l] = ∂ℓ/∂(layer l's output), one row per pair
    std::vector<RowMat> delta(static_cast<std::size_t>(L));
    delta[static_cast<std::size_t>(L - 1)] = 2.0f * (out - v);
    for (int l = L - 1; l > 0; --l) {
        const RowMat back = delta[static_cast<std::size_t>(l)] * weights(static_cast<const Vec&>(st), l);
        const RowMat& pre = z[static_cast<std::size_t>(l - 1)];
        delta[static_cast<std::size_t>(l - 1)] = back.cwiseProduct(pre.unaryExpr([](float t) { return gelu_grad(t); }));
    }
    // Each pair's gradient g_s enters the weights and the momentum at the batch's end with a
    // coefficient (online_mlp.hpp: S_t = μ S_{t−1} − θ g_t, W_t = (1 − α) W_{t−1} + S_t):
    //   W_end = (1−α)^b W_start + c_S S_start + Σ_s c_W[s] g_s,   S_end = μ^b S_start + Σ_s c_M[s] g_s.
    // θ_s = lr / ‖a_{L−1,s}‖² at depth ≥ 2 (the last layer's input; online_mlp.hpp), lr at depth 1.
    const double mu = settings_.momentum, keep = 1.0 - settings_.forget;
    Vec c_w(b), c_m(b);
    double c_s = 0.0;
    for (int t = 0; t < b; ++t) c_s += std::pow(keep, b - 1 - t) * std::pow(mu, t + 1);
    for (int s = 0; s < b; ++s) {
        const double lr = L == 1 ? settings_.lr
                                 : settings_.lr / std::max(static_cast<double>(a[static_cast<std::size_t>(L - 1)].row(s).squaredNorm()),
                                                           kMinEnergy);
        double sum = 0.0;
        for (int t = s; t < b; ++t) sum += std::pow(keep, b - 1 - t) * (t == s ? 1.0 : std::pow(mu, t - s));
        c_w[s] = static_cast<float>(-lr * sum);
        c_m[s] = static_cast<float>(-lr * (s == b - 1 ? 1.0 : std::pow(mu, b - 1 - s)));
    }
    const float w_keep = static_cast<float>(std::pow(keep, b)), s_keep = static_cast<float>(std::pow(mu, b));
    for (int l = 0; l < L; ++l) {
        const RowMat& d = delta[static_cast<std::size_t>(l)];
        const RowMat& in = a[static_cast<std::size_t>(l)];
        WeightMap w = weights(st, l);
        if (settings_.forget != 0.0) w *= w_keep;
        if (dims_.momentum) {
            WeightMap m = weights(st, l, true);
            const RowMat step_m = (c_m.asDiagonal() * d).transpose() * in;
            w.noalias() += (c_w.asDiagonal() * d).transpose() * in;
            w += static_cast<float>(c_s) * m;
            m = s_keep * m + step_m;
        } else {
            w.noalias() += (c_w.asDiagonal() * d).transpose() * in;
        }
    }
}

void OnlineMlp::apply_batch(Vec& st, ConstMatRef keys, ConstMatRef values) const {
    const RowMat x = inputs(keys);
    for (int step = 0; step < settings_.steps; ++step) update(st, x, values);
}

void OnlineMlp::write_batch(ConstMatRef keys, ConstMatRef values) {
    const Eigen::Index n = keys.rows(), b = settings_.batch;
    auto check = [&] {
        if (!state_.head(weights_ * (dims_.momentum ? 2 : 1)).allFinite())
            throw MemoryFailure("non-finite weights after write " + std::to_string(writes_) +
                                " (the inner learning rate diverges)");
    };
    for (Eigen::Index i = 0; i < n;) {
        if (pending_ == 0 && n - i >= b) {  // a whole batch straight from the input
            apply_batch(state_, keys.middleRows(i, b), values.middleRows(i, b));
            i += b, writes_ += b;
            check();
            continue;
        }
        if (pending_ + 1 < b) {  // hold the pair until its batch is complete
            pending_keys().row(pending_) = keys.row(i);
            pending_values().row(pending_) = values.row(i);
            ++pending_, ++i, ++writes_;
            continue;
        }
        RowMat k(b, dims_.d_key), v(b, dims_.d_value);  // the batch's b − 1 pending pairs and this one
        k.topRows(pending_) = pending_keys(), v.topRows(pending_) = pending_values();
        k.row(b - 1) = keys.row(i), v.row(b - 1) = values.row(i);
        pending_keys().setZero(), pending_values().setZero();
        pending_ = 0, ++i, ++writes_;
        apply_batch(state_, k, v);
        check();
    }
}

const Vec& OnlineMlp::read_state(Vec& scratch) const {
    if (pending_ == 0) return state_;
    scratch = state_;
    auto* self = const_cast<OnlineMlp*>(this);  // the pending rows are only read here
    apply_batch(scratch, self->pending_keys().topRows(pending_), self->pending_values().topRows(pending_));
    return scratch;
}

void OnlineMlp::read(ConstVecRef query, VecRef out) const {
    Vec scratch;
    out = forward(read_state(scratch), inputs(query.transpose()), nullptr, nullptr).transpose();
}

void OnlineMlp::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    require_no_hidden(options);
    Vec scratch;
    out = forward(read_state(scratch), inputs(queries), nullptr, nullptr);
}

}  // namespace memcap
