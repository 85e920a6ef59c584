// memcap/harness/train/layer.cpp — see layer.hpp.
#include "harness/train/layer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace memcap::train {
namespace {

constexpr float kNormEps = 1e-5f;
constexpr float kGlaTau = 16.0f;  // GLA's normaliser of logsigmoid
const float kRwkvScale = std::exp(-0.5f);

float softplus(float z) { return z > 20.0f ? z : std::log1p(std::exp(z)); }
float sigmoid(float z) { return 1.0f / (1.0f + std::exp(-z)); }
float logit(double p) { return static_cast<float>(std::log(p / (1.0 - p))); }
float inv_softplus(double y) { return static_cast<float>(std::log(std::expm1(y))); }

/// y_t = Σ_{j<4} c_j ⊙ p_{t−j} (p_{<0} = 0).
void conv_forward(const RowMat& p, Eigen::Map<const RowMat> c, RowMat& y) {
    y.setZero(p.rows(), p.cols());
    for (Eigen::Index t = 0; t < p.rows(); ++t)
        for (Eigen::Index j = 0; j < c.rows() && j <= t; ++j) y.row(t).array() += c.row(j).array() * p.row(t - j).array();
}
/// dp_t = Σ_j c_j ⊙ dy_{t+j};  dc_j += Σ_t dy_t ⊙ p_{t−j}.
void conv_backward(const RowMat& p, Eigen::Map<const RowMat> c, const RowMat& dy, RowMat& dp, Eigen::Map<RowMat> dc) {
    dp.setZero(p.rows(), p.cols());
    for (Eigen::Index t = 0; t < p.rows(); ++t)
        for (Eigen::Index j = 0; j < c.rows() && j <= t; ++j) {
            dp.row(t - j).array() += c.row(j).array() * dy.row(t).array();
            dc.row(j).array() += dy.row(t).array() * p.row(t - j).array();
        }
}

/// −log a of channel j of `channels`: log-spaced from 0.001 to 0.1 (an untrained spread of time scales).
double initial_rate(int j, int channels) {
    const double f = channels > 1 ? static_cast<double>(j) / (channels - 1) : 0.0;
    return 0.001 * std::pow(100.0, f);
}

}  // namespace

LayerRecipe LayerRecipe::for_memory(const MemoryEntry& entry) {
    const LayerGates& g = entry.layer;
    const GateInputs& in = entry.gates;
    LayerRecipe r;
    r.norm = g.norm;
    const bool channel = g.decay == Decay::channel_gla || g.decay == Decay::channel_kda || g.decay == Decay::channel_rwkv;
    if (channel ? in.channel_decay : in.log_decay) r.decay = g.decay;
    r.write_gate = g.write_gate && r.decay == Decay::scalar_softplus && in.write_gate;
    r.beta = g.beta && in.beta;
    return r;
}

std::string LayerRecipe::describe() const {
    std::string out = conv ? "short conv (kernel 4) on q, k, v" : "no short conv";
    switch (decay) {
    case Decay::none: break;
    case Decay::scalar_softplus:
        out += "; log a_t = -softplus(w.x+b) exp(A_log)";
        if (write_gate) out += ", write gate 1 - exp(-softplus(w.x+b))";
        break;
    case Decay::channel_gla: out += "; per-channel log a_t = logsigmoid(W2 W1 x + b)/16"; break;
    case Decay::channel_kda: out += "; per-channel log a_t = -softplus(W2 W1 x + b) exp(A_log)"; break;
    case Decay::channel_rwkv: out += "; per-channel log w_t = -e^-0.5 sigmoid(b + W2 tanh(W1 x))"; break;
    }
    if (beta) out += "; beta_t = sigmoid(w.x+b)";
    if (norm) out += "; RMSNorm on the outputs";
    return out;
}

Layer::Layer(const LayerShape& shape, const LayerRecipe& recipe, Rng& rng) : shape_(shape), recipe_(recipe) {
    layout();
    theta_.assign(groups_.empty() ? 0 : groups_.back().offset + groups_.back().size(), 0.0f);
    init(rng);
}

Layer::Layer(const LayerShape& shape, const LayerRecipe& recipe, std::vector<float> theta)
    : shape_(shape), recipe_(recipe), theta_(std::move(theta)) {
    layout();
    if (theta_.size() != static_cast<std::size_t>(count(shape_, recipe_)))
        throw std::logic_error("Layer: parameters of the wrong size for the shape");
}

void Layer::layout() {
    const LayerShape& s = shape_;
    if (s.d_in <= 0 || s.d <= 0 || s.d_out <= 0) throw std::logic_error("Layer: widths must be positive");
    groups_.clear();
    std::size_t at = 0;
    const auto add = [&](const std::string& name, Eigen::Index rows, Eigen::Index cols) {
        groups_.push_back({name, at, rows, cols});
        at += static_cast<std::size_t>(rows * cols);
    };
    const int rank = std::min(s.rank, s.d_in);
    if (s.vocab > 0) add("embedding", s.vocab, s.d_in);
    add("w_q", s.d, s.d_in), add("w_k", s.d, s.d_in), add("w_v", s.d, s.d_in);
    if (recipe_.conv) add("conv_q", LayerShape::kConv, s.d), add("conv_k", LayerShape::kConv, s.d), add("conv_v", LayerShape::kConv, s.d);
    switch (recipe_.decay) {
    case LayerRecipe::Decay::none: break;
    case LayerRecipe::Decay::scalar_softplus: add("dt_w", 1, s.d_in), add("dt_b", 1, 1), add("a_log", 1, 1); break;
    case LayerRecipe::Decay::channel_kda: add("a_log", 1, 1); [[fallthrough]];
    case LayerRecipe::Decay::channel_gla:
    case LayerRecipe::Decay::channel_rwkv:
        add("decay_w1", rank, s.d_in), add("decay_w2", s.channels, rank), add("decay_b", 1, s.channels);
        break;
    }
    if (recipe_.beta) add("beta_w", 1, s.d_in), add("beta_b", 1, 1);
    if (recipe_.norm) add("norm_gain", 1, s.d);
    add("w_o", s.d_out, s.d);
    if (s.values > 0) add("head", s.values, s.d_out);
}

std::int64_t Layer::count(const LayerShape& shape, const LayerRecipe& recipe) {
    std::vector<float> none;
    Layer probe(shape, recipe, none, 0);
    return probe.groups_.empty() ? 0 : static_cast<std::int64_t>(probe.groups_.back().offset + probe.groups_.back().size());
}

Layer::Layer(const LayerShape& shape, const LayerRecipe& recipe, std::vector<float> theta, int)
    : shape_(shape), recipe_(recipe), theta_(std::move(theta)) {
    layout();
}

const ParamGroup& Layer::group(const std::string& name) const {
    for (const auto& g : groups_)
        if (g.name == name) return g;
    throw std::logic_error("Layer: no parameter group '" + name + "'");
}

Eigen::Map<RowMat> Layer::block(std::vector<float>& v, const std::string& name) const {
    const ParamGroup& g = group(name);
    return Eigen::Map<RowMat>(v.data() + g.offset, g.rows, g.cols);
}
Eigen::Map<const RowMat> Layer::block(const std::vector<float>& v, const std::string& name) const {
    const ParamGroup& g = group(name);
    return Eigen::Map<const RowMat>(v.data() + g.offset, g.rows, g.cols);
}
Eigen::Map<const RowMat> Layer::head() const { return block(theta_, "head"); }

void Layer::init(Rng& rng) {
    const LayerShape& s = shape_;
    const auto normal = [&](const std::string& name, double sd) {
        auto b = block(theta_, name);
        for (Eigen::Index i = 0; i < b.rows(); ++i)
            for (Eigen::Index j = 0; j < b.cols(); ++j) b(i, j) = static_cast<float>(sd * rng.normal());
    };
    const double in = 1.0 / std::sqrt(static_cast<double>(s.d_in));
    if (s.vocab > 0) normal("embedding", 1.0);
    normal("w_q", in), normal("w_k", in), normal("w_v", in);
    if (recipe_.conv)
        for (const char* c : {"conv_q", "conv_k", "conv_v"}) {  // PyTorch's Conv1d: U(−1/√4, 1/√4)
            auto b = block(theta_, c);
            for (Eigen::Index i = 0; i < b.size(); ++i) b.data()[i] = static_cast<float>(rng.uniform() - 0.5);
        }
    const int rank = std::min(s.rank, s.d_in);
    switch (recipe_.decay) {
    case LayerRecipe::Decay::none: break;
    case LayerRecipe::Decay::scalar_softplus:  // Δ starts at 0.01 (Mamba's dt range 0.001 .. 0.1), A = 1
        normal("dt_w", 0.1 * in);
        block(theta_, "dt_b")(0, 0) = inv_softplus(0.01);
        block(theta_, "a_log")(0, 0) = 0.0f;
        break;
    case LayerRecipe::Decay::channel_gla:
    case LayerRecipe::Decay::channel_kda:
    case LayerRecipe::Decay::channel_rwkv: {
        normal("decay_w1", in);
        normal("decay_w2", 0.1 / std::sqrt(static_cast<double>(rank)));
        auto b = block(theta_, "decay_b");
        for (int j = 0; j < s.channels; ++j) {  // −log a_j log-spaced from 0.001 to 0.1 at x = 0
            const double rate = initial_rate(j, s.channels);
            if (recipe_.decay == LayerRecipe::Decay::channel_gla) b(0, j) = logit(std::exp(-kGlaTau * rate));
            else if (recipe_.decay == LayerRecipe::Decay::channel_kda) b(0, j) = inv_softplus(rate);
            else b(0, j) = logit(rate / kRwkvScale);
        }
        if (recipe_.decay == LayerRecipe::Decay::channel_kda) block(theta_, "a_log")(0, 0) = 0.0f;
        break;
    }
    }
    if (recipe_.beta) normal("beta_w", 0.1 * in), block(theta_, "beta_b")(0, 0) = 0.0f;
    if (recipe_.norm) block(theta_, "norm_gain").setOnes();
    normal("w_o", 1.0 / std::sqrt(static_cast<double>(s.d)));
    if (s.values > 0) normal("head", 0.1 / std::sqrt(static_cast<double>(s.d_out)));
}

void Layer::forward(Memory& memory, const std::vector<int>& tokens, const RowMat& inputs, LayerPass& p,
                    bool for_backward) const {
    const LayerShape& s = shape_;
    const std::vector<float>& th = theta_;
    if (s.vocab > 0) {
        const auto emb = block(th, "embedding");
        p.x.resize(static_cast<Eigen::Index>(tokens.size()), s.d_in);
        for (std::size_t t = 0; t < tokens.size(); ++t) p.x.row(static_cast<Eigen::Index>(t)) = emb.row(tokens[t]);
    } else {
        p.x = inputs;
    }
    const Eigen::Index T = p.x.rows();
    p.pq.noalias() = p.x * block(th, "w_q").transpose();
    p.pk.noalias() = p.x * block(th, "w_k").transpose();
    p.pv.noalias() = p.x * block(th, "w_v").transpose();
    if (recipe_.conv) {
        conv_forward(p.pq, block(th, "conv_q"), p.q);
        conv_forward(p.pk, block(th, "conv_k"), p.k);
        conv_forward(p.pv, block(th, "conv_v"), p.v);
    } else {
        p.q = p.pq, p.k = p.pk, p.v = p.pv;
    }
    p.gates = TokenGates{};
    switch (recipe_.decay) {
    case LayerRecipe::Decay::none: break;
    case LayerRecipe::Decay::scalar_softplus: {
        const auto w = block(th, "dt_w");
        const float b = block(th, "dt_b")(0, 0), a = std::exp(block(th, "a_log")(0, 0));
        p.z = p.x * w.transpose();
        p.z.array() += b;
        p.gates.log_decay.resize(T, 1);
        if (recipe_.write_gate) p.gates.write_gate.resize(T);
        for (Eigen::Index t = 0; t < T; ++t) {
            const float delta = softplus(p.z(t));
            p.gates.log_decay(t, 0) = -delta * a;
            if (recipe_.write_gate) p.gates.write_gate(t) = -std::expm1(-delta);
        }
        break;
    }
    case LayerRecipe::Decay::channel_gla:
    case LayerRecipe::Decay::channel_kda:
    case LayerRecipe::Decay::channel_rwkv: {
        p.h.noalias() = p.x * block(th, "decay_w1").transpose();
        p.hc = recipe_.decay == LayerRecipe::Decay::channel_rwkv ? RowMat(p.h.array().tanh()) : p.h;
        p.g.noalias() = p.hc * block(th, "decay_w2").transpose();
        p.g.rowwise() += block(th, "decay_b").row(0);
        p.gates.log_decay.resize(T, s.channels);
        const float a = recipe_.decay == LayerRecipe::Decay::channel_kda ? std::exp(block(th, "a_log")(0, 0)) : 1.0f;
        for (Eigen::Index t = 0; t < T; ++t)
            for (Eigen::Index j = 0; j < s.channels; ++j) {
                const float g = p.g(t, j);
                float ld = 0;
                if (recipe_.decay == LayerRecipe::Decay::channel_gla) ld = -softplus(-g) / kGlaTau;
                else if (recipe_.decay == LayerRecipe::Decay::channel_kda) ld = -softplus(g) * a;
                else ld = -kRwkvScale * sigmoid(g);
                p.gates.log_decay(t, j) = ld;
            }
        break;
    }
    }
    if (recipe_.beta) {
        p.zb = p.x * block(th, "beta_w").transpose();
        p.zb.array() += block(th, "beta_b")(0, 0);
        p.gates.beta = p.zb.unaryExpr([](float z) { return sigmoid(z); });
    }
    memory.reset();
    p.o.resize(T, s.d);
    if (for_backward) memory.causal_for_backward(p.q, p.k, p.v, p.gates, p.o);
    else memory.causal(p.q, p.k, p.v, p.gates, p.o);
    if (recipe_.norm) {
        const auto gain = block(th, "norm_gain");
        p.rms.resize(T);
        p.nrm.resize(T, s.d);
        for (Eigen::Index t = 0; t < T; ++t) {
            p.rms(t) = 1.0f / std::sqrt(p.o.row(t).squaredNorm() / static_cast<float>(s.d) + kNormEps);
            p.nrm.row(t) = p.o.row(t).cwiseProduct(gain.row(0)) * p.rms(t);
        }
    } else {
        p.nrm = p.o;
    }
    p.y.noalias() = p.nrm * block(th, "w_o").transpose();
}

void Layer::backward(Memory& memory, const std::vector<int>& tokens, LayerPass& p, const RowMat& dy,
                     std::vector<float>& grad) const {
    const LayerShape& s = shape_;
    const std::vector<float>& th = theta_;
    const Eigen::Index T = p.x.rows();
    block(grad, "w_o").noalias() += dy.transpose() * p.nrm;
    RowMat dn = dy * block(th, "w_o");
    RowMat dout(T, s.d);
    if (recipe_.norm) {
        const auto gain = block(th, "norm_gain");
        auto dgain = block(grad, "norm_gain");
        for (Eigen::Index t = 0; t < T; ++t) {
            const float r = p.rms(t);
            dgain.row(0) += dn.row(t).cwiseProduct(p.o.row(t)) * r;
            const auto u = dn.row(t).cwiseProduct(gain.row(0));
            dout.row(t) = r * u - (r * r * r * u.dot(p.o.row(t)) / static_cast<float>(s.d)) * p.o.row(t);
        }
    } else {
        dout = dn;
    }
    CausalGrads cg;
    memory.causal_backward(p.q, p.k, p.v, p.gates, dout, cg);
    RowMat dpq, dpk, dpv;
    if (recipe_.conv) {
        conv_backward(p.pq, block(th, "conv_q"), cg.d_queries, dpq, block(grad, "conv_q"));
        conv_backward(p.pk, block(th, "conv_k"), cg.d_keys, dpk, block(grad, "conv_k"));
        conv_backward(p.pv, block(th, "conv_v"), cg.d_values, dpv, block(grad, "conv_v"));
    } else {
        dpq = cg.d_queries, dpk = cg.d_keys, dpv = cg.d_values;
    }
    block(grad, "w_q").noalias() += dpq.transpose() * p.x;
    block(grad, "w_k").noalias() += dpk.transpose() * p.x;
    block(grad, "w_v").noalias() += dpv.transpose() * p.x;
    RowMat dx = dpq * block(th, "w_q");
    dx.noalias() += dpk * block(th, "w_k");
    dx.noalias() += dpv * block(th, "w_v");
    switch (recipe_.decay) {
    case LayerRecipe::Decay::none: break;
    case LayerRecipe::Decay::scalar_softplus: {
        const auto w = block(th, "dt_w");
        const float a = std::exp(block(th, "a_log")(0, 0));
        Vec dz(T);
        double da = 0.0;
        for (Eigen::Index t = 0; t < T; ++t) {
            const float delta = softplus(p.z(t));
            float dd = cg.d_log_decay(t, 0) * -a;
            da += static_cast<double>(cg.d_log_decay(t, 0)) * -delta * a;
            if (recipe_.write_gate) dd += cg.d_write_gate(t) * std::exp(-delta);
            dz(t) = dd * sigmoid(p.z(t));
        }
        block(grad, "dt_w").row(0).noalias() += dz.transpose() * p.x;
        block(grad, "dt_b")(0, 0) += dz.sum();
        block(grad, "a_log")(0, 0) += static_cast<float>(da);
        dx.noalias() += dz * w.row(0);
        break;
    }
    case LayerRecipe::Decay::channel_gla:
    case LayerRecipe::Decay::channel_kda:
    case LayerRecipe::Decay::channel_rwkv: {
        const bool kda = recipe_.decay == LayerRecipe::Decay::channel_kda;
        const float a = kda ? std::exp(block(th, "a_log")(0, 0)) : 1.0f;
        RowMat dg(T, s.channels);
        double da = 0.0;
        for (Eigen::Index t = 0; t < T; ++t)
            for (Eigen::Index j = 0; j < s.channels; ++j) {
                const float g = p.g(t, j), up = cg.d_log_decay(t, j);
                if (recipe_.decay == LayerRecipe::Decay::channel_gla) dg(t, j) = up * sigmoid(-g) / kGlaTau;
                else if (kda) dg(t, j) = up * -sigmoid(g) * a, da += static_cast<double>(up) * -softplus(g) * a;
                else dg(t, j) = up * -kRwkvScale * sigmoid(g) * (1.0f - sigmoid(g));
            }
        if (kda) block(grad, "a_log")(0, 0) += static_cast<float>(da);
        block(grad, "decay_w2").noalias() += dg.transpose() * p.hc;
        block(grad, "decay_b").row(0) += dg.colwise().sum();
        RowMat dh = dg * block(th, "decay_w2");
        if (recipe_.decay == LayerRecipe::Decay::channel_rwkv) dh.array() *= 1.0f - p.hc.array().square();
        block(grad, "decay_w1").noalias() += dh.transpose() * p.x;
        dx.noalias() += dh * block(th, "decay_w1");
        break;
    }
    }
    if (recipe_.beta) {
        Vec dzb(T);
        for (Eigen::Index t = 0; t < T; ++t) {
            const float b = p.gates.beta(t);
            dzb(t) = cg.d_beta(t) * b * (1.0f - b);
        }
        block(grad, "beta_w").row(0).noalias() += dzb.transpose() * p.x;
        block(grad, "beta_b")(0, 0) += dzb.sum();
        dx.noalias() += dzb * block(th, "beta_w").row(0);
    }
    if (s.vocab > 0) {
        auto demb = block(grad, "embedding");
        for (std::size_t t = 0; t < tokens.size(); ++t) demb.row(tokens[t]) += dx.row(static_cast<Eigen::Index>(t));
    }
}

}  // namespace memcap::train
