// memcap/memories/rotation_rnn.cpp — see rotation_rnn.hpp.
#include "memories/rotation_rnn.hpp"

#include "core/error.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <cmath>
#include <limits>

namespace memcap {
namespace {

// Eigenangles of a Haar-random orthogonal D × D matrix: θ in (0, π) for each
// conjugate pair, and the real eigenvalues (±1) as signs.
void haar_angles(int dim, Rng& rng, std::vector<double>& angles, std::vector<float>& signs) {
    Eigen::MatrixXd g(dim, dim);
    for (int j = 0; j < dim; ++j)
        for (int i = 0; i < dim; ++i) g(i, j) = rng.normal();
    Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
    Eigen::MatrixXd q = qr.householderQ();
    const Eigen::MatrixXd r = qr.matrixQR().triangularView<Eigen::Upper>();
    for (int j = 0; j < dim; ++j)  // Mezzadri's sign fix makes Q exactly Haar
        if (r(j, j) < 0) q.col(j) = -q.col(j);
    const Eigen::VectorXcd ev = Eigen::EigenSolver<Eigen::MatrixXd>(q, false).eigenvalues();
    std::vector<double> pos;
    for (Eigen::Index i = 0; i < ev.size(); ++i) {
        const double theta = std::arg(ev(i));
        if (std::abs(ev(i).imag()) < 1e-9) signs.push_back(ev(i).real() > 0 ? 1.0f : -1.0f);
        else if (theta > 0) pos.push_back(theta);
    }
    std::sort(pos.begin(), pos.end());  // a fixed order, independent of the solver's
    std::sort(signs.begin(), signs.end());
    // Rounding can classify a nearly real pair as two reals or vice versa; keep D exact.
    while (2 * pos.size() + signs.size() > static_cast<std::size_t>(dim)) signs.pop_back();
    while (2 * pos.size() + signs.size() < static_cast<std::size_t>(dim)) signs.push_back(1.0f);
    angles = pos;
}

}  // namespace

RotationRnn::Dims RotationRnn::size(const MemoryShape& shape, const std::string& angles) {
    const std::int64_t dim = shape.budget_floats.value_or(shape.d_value);
    if (dim > std::numeric_limits<int>::max())
        throw UsageError("memory 'rotation': a state of D = " + std::to_string(dim) +
                         " floats exceeds the largest supported (" + std::to_string(std::numeric_limits<int>::max()) +
                         "); lower the budget");
    if (angles == "haar" && dim > kMaxHaarDim)
        throw UsageError("memory 'rotation': angles=haar needs a dense " + std::to_string(dim) + " x " +
                         std::to_string(dim) + " eigendecomposition; it is allowed up to D = " +
                         std::to_string(kMaxHaarDim) + " (use rotation:angles=uniform)");
    const int d_in = shape.positional_keys ? shape.d_value : shape.d_key + shape.d_value;
    // haar: g, the QR's factors, Q and the eigensolver's work matrices, D × D doubles each
    const std::int64_t haar = angles == "haar" ? 6 * 8 * dim * dim : 0;
    return {static_cast<int>(dim), d_in, d_in != dim, haar};
}

RotationRnn::RotationRnn(const MemoryShape& shape, double rho, const std::string& angles, Rng& rng)
    : RotationRnn(shape, size(shape, angles), rho, angles, rng) {}

RotationRnn::RotationRnn(const MemoryShape& shape, const Dims& dims, double rho, const std::string& angles, Rng& rng)
    : dim_(dims.dim), d_key_(shape.d_key), d_value_(shape.d_value), value_only_(shape.positional_keys),
      rho_(static_cast<float>(rho)), state_(Vec::Zero(dim_)) {
    std::vector<double> theta;
    if (angles == "haar") {
        haar_angles(dim_, rng, theta, sign_);
    } else {
        for (int j = 0; j < dim_ / 2; ++j) theta.push_back(2.0 * M_PI * rng.uniform());
        if (dim_ % 2) sign_.push_back(1.0f);
    }
    for (double t : theta) cos_.push_back(static_cast<float>(std::cos(t))), sin_.push_back(static_cast<float>(std::sin(t)));

    if (dims.input_map) {
        input_map_.resize(dim_, dims.d_in);
        rng.fill_normal(input_map_, 1.0 / std::sqrt(static_cast<double>(dim_)));
    }
}

template <class Input>
void RotationRnn::steps(Eigen::Index count, Input input) {
    // Block j rotates the pair (s[j], s[P + j]) (the halves layout); the 1 × 1 blocks
    // scale s[2P + j] by ±1. Lanes are taken a tile at a time (two of the build's SIMD
    // packets, from Eigen), and each tile runs every step with its state held in
    // registers; a tile narrower than that (the last pairs, the ±1 entries) runs on a
    // zero-padded copy of its inputs. Each element sees the same operations, in the
    // same order, as when the state took one step at a time.
    constexpr Eigen::Index kTile = 2 * Eigen::internal::packet_traits<float>::size;
    using Tile = Eigen::Array<float, kTile, 1>;
    const auto pairs = static_cast<Eigen::Index>(cos_.size());
    const auto signs = static_cast<Eigen::Index>(sign_.size());
    float* re = state_.data();
    float* im = state_.data() + pairs;
    float* lone = state_.data() + 2 * pairs;
    const float rho = rho_;
    // Rows of 2 · kTile floats: lanes [from, from + w) of the step's input at offsets
    // `first` and `second` (second < 0: none), zero-padded.
    const auto pack = [&](Eigen::Index from, Eigen::Index w, Eigen::Index first, Eigen::Index second) {
        padded_.assign(static_cast<std::size_t>(count * 2 * kTile), 0.0f);
        for (Eigen::Index t = 0; t < count; ++t) {
            const float* x = input(t);
            float* row = padded_.data() + t * 2 * kTile;
            std::copy(x + first + from, x + first + from + w, row);
            if (second >= 0) std::copy(x + second + from, x + second + from + w, row + kTile);
        }
    };
    for (Eigen::Index j0 = 0; j0 < pairs; j0 += kTile) {
        const Eigen::Index w = std::min(kTile, pairs - j0);
        Tile a = Tile::Zero(), b = Tile::Zero(), c = Tile::Zero(), sn = Tile::Zero();
        a.head(w) = Eigen::Map<const Eigen::ArrayXf>(re + j0, w);
        b.head(w) = Eigen::Map<const Eigen::ArrayXf>(im + j0, w);
        c.head(w) = Eigen::Map<const Eigen::ArrayXf>(cos_.data() + j0, w);
        sn.head(w) = Eigen::Map<const Eigen::ArrayXf>(sin_.data() + j0, w);
        const auto run = [&](auto in_re, auto in_im) {
            for (Eigen::Index t = 0; t < count; ++t) {
                const Tile a2 = rho * (c * a - sn * b) + Eigen::Map<const Tile>(in_re(t));
                b = rho * (sn * a + c * b) + Eigen::Map<const Tile>(in_im(t));
                a = a2;
            }
        };
        if (w == kTile) {
            run([&](Eigen::Index t) { return input(t) + j0; }, [&](Eigen::Index t) { return input(t) + pairs + j0; });
        } else {
            pack(j0, w, 0, pairs);
            run([&](Eigen::Index t) { return padded_.data() + t * 2 * kTile; },
                [&](Eigen::Index t) { return padded_.data() + t * 2 * kTile + kTile; });
        }
        Eigen::Map<Eigen::ArrayXf>(re + j0, w) = a.head(w);
        Eigen::Map<Eigen::ArrayXf>(im + j0, w) = b.head(w);
    }
    for (Eigen::Index j0 = 0; j0 < signs; j0 += kTile) {
        const Eigen::Index w = std::min(kTile, signs - j0);
        Tile v = Tile::Zero(), f = Tile::Zero();
        v.head(w) = Eigen::Map<const Eigen::ArrayXf>(lone + j0, w);
        for (Eigen::Index j = 0; j < w; ++j) f(j) = rho * sign_[static_cast<std::size_t>(j0 + j)];
        pack(j0, w, 2 * pairs, -1);
        for (Eigen::Index t = 0; t < count; ++t) v = f * v + Eigen::Map<const Tile>(padded_.data() + t * 2 * kTile);
        Eigen::Map<Eigen::ArrayXf>(lone + j0, w) = v.head(w);
    }
}

Eigen::MatrixXd RotationRnn::transition() const {
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(dim_, dim_);
    const std::size_t pairs = cos_.size();
    const auto p = static_cast<Eigen::Index>(pairs);
    for (std::size_t j = 0; j < pairs; ++j) {
        const auto i = static_cast<Eigen::Index>(j);
        t(i, i) = cos_[j], t(i, i + p) = -sin_[j];
        t(i + p, i) = sin_[j], t(i + p, i + p) = cos_[j];
    }
    for (std::size_t j = 0; j < sign_.size(); ++j) {
        const auto i = static_cast<Eigen::Index>(2 * pairs + j);
        t(i, i) = sign_[j];
    }
    return double(rho_) * t;
}

void RotationRnn::write(ConstVecRef key, ConstVecRef value) { write_batch(key.transpose(), value.transpose()); }

void RotationRnn::write_batch(ConstMatRef keys, ConstMatRef values) {
    if (value_only_ && input_map_.size() == 0) {  // x_t is the value row itself (rows are contiguous)
        steps(values.rows(), [&](Eigen::Index t) { return values.row(t).data(); });
        return;
    }
    RowMat x;
    if (value_only_) x = values;
    else {
        x.resize(keys.rows(), d_key_ + d_value_);
        x.leftCols(d_key_) = keys;
        x.rightCols(d_value_) = values;
    }
    if (input_map_.size() == 0) {
        steps(x.rows(), [&](Eigen::Index t) { return x.row(t).data(); });
        return;
    }
    // Sequence tasks write a few distinct codes many times: map each distinct input
    // once (one GEMM over the distinct rows), then every step costs O(D).
    std::vector<Eigen::Index> which(static_cast<std::size_t>(x.rows()));
    std::unordered_map<std::string_view, Eigen::Index> seen;
    const auto row_bytes = static_cast<std::size_t>(x.cols()) * sizeof(float);
    std::vector<Eigen::Index> distinct;
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const std::string_view bytes(reinterpret_cast<const char*>(x.row(i).data()), row_bytes);
        const auto [it, fresh] = seen.emplace(bytes, static_cast<Eigen::Index>(distinct.size()));
        if (fresh) distinct.push_back(i);
        which[static_cast<std::size_t>(i)] = it->second;
    }
    RowMat unique(static_cast<Eigen::Index>(distinct.size()), x.cols());
    for (std::size_t u = 0; u < distinct.size(); ++u) unique.row(static_cast<Eigen::Index>(u)) = x.row(distinct[u]);
    const RowMat mapped = unique * input_map_.transpose();  // distinct × D
    steps(x.rows(), [&](Eigen::Index t) { return mapped.row(which[static_cast<std::size_t>(t)]).data(); });
}

void RotationRnn::read(ConstVecRef, VecRef out) const {
    if (input_map_.size() == 0) {
        out = value_only_ ? state_ : state_.tail(d_value_);
        return;
    }
    const int offset = value_only_ ? 0 : d_key_;
    out.noalias() = input_map_.middleCols(offset, d_value_).transpose() * state_;
}

}  // namespace memcap
