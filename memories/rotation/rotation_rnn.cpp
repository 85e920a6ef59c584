// memcap/memories/rotation/rotation_rnn.cpp — see rotation_rnn.hpp.
#include "memories/rotation/rotation_rnn.hpp"

#include "core/error.hpp"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <algorithm>
#include <string_view>
#include <type_traits>
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

namespace {

constexpr Eigen::Index kLanes = Eigen::internal::packet_traits<float>::size;  // the build's SIMD width, from Eigen
using Lanes = Eigen::Array<float, kLanes, 1>;
using ConstLanes = Eigen::Map<const Lanes>;

/// `count` steps of the pairs in the window(s) of kLanes pairs from j0 (and j1 when
/// kSecond), and, when kSign, of the ±1 entries: the last `signs` lanes of the window
/// of the last kLanes floats of the state (factors ρ·(±1) in `f`, 0 in the other lanes,
/// whose results are dropped). The state stays in registers for all the steps.
template <bool kSecond, bool kSign, class Input>
void run_windows(Eigen::Index count, const Input& input, float rho, float* state, Eigen::Index pairs, Eigen::Index dim,
                 const float* cosine, const float* sine, Eigen::Index j0, Eigen::Index j1, const Lanes& f,
                 Eigen::Index signs) {
    float* re = state;
    float* im = state + pairs;
    Lanes a0 = ConstLanes(re + j0), b0 = ConstLanes(im + j0), a1, b1, v;
    const Lanes c0 = ConstLanes(cosine + j0), s0 = ConstLanes(sine + j0);
    Lanes c1, s1;
    if constexpr (kSecond) {
        a1 = ConstLanes(re + j1), b1 = ConstLanes(im + j1);
        c1 = ConstLanes(cosine + j1), s1 = ConstLanes(sine + j1);
    }
    if constexpr (kSign) v = ConstLanes(state + dim - kLanes);
    for (Eigen::Index t = 0; t < count; ++t) {
        const float* x = input(t);
        const Lanes n0 = rho * (c0 * a0 - s0 * b0) + ConstLanes(x + j0);
        b0 = rho * (s0 * a0 + c0 * b0) + ConstLanes(x + pairs + j0);
        a0 = n0;
        if constexpr (kSecond) {
            const Lanes n1 = rho * (c1 * a1 - s1 * b1) + ConstLanes(x + j1);
            b1 = rho * (s1 * a1 + c1 * b1) + ConstLanes(x + pairs + j1);
            a1 = n1;
        }
        if constexpr (kSign) v = f * v + ConstLanes(x + dim - kLanes);
    }
    Eigen::Map<Lanes>(re + j0) = a0;
    Eigen::Map<Lanes>(im + j0) = b0;
    if constexpr (kSecond) {  // overlapping windows hold the same values where they overlap
        Eigen::Map<Lanes>(re + j1) = a1;
        Eigen::Map<Lanes>(im + j1) = b1;
    }
    if constexpr (kSign) Eigen::Map<Eigen::ArrayXf>(state + dim - signs, signs) = v.tail(signs);
}

}  // namespace

template <class Input>
void RotationRnn::steps(Eigen::Index count, Input input) {
    // Block j rotates the pair (s[j], s[P + j]) (the halves layout); the 1 × 1 blocks
    // scale s[2P + j] by ±1. Each element sees the same operations, in the same order,
    // as when the state took one step at a time; what changes is the loop order.
    const auto pairs = static_cast<Eigen::Index>(cos_.size());
    const auto signs = static_cast<Eigen::Index>(sign_.size());
    const float rho = rho_;
    float* s = state_.data();
    if (pairs < kLanes || signs > kLanes) {  // narrower than one SIMD packet (or a state of many ±1 entries)
        float* re = s;
        float* im = s + pairs;
        for (Eigen::Index t = 0; t < count; ++t) {
            const float* x = input(t);
            for (Eigen::Index j = 0; j < pairs; ++j) {
                const float a = re[j], b = im[j];
                re[j] = rho * (cos_[static_cast<std::size_t>(j)] * a - sin_[static_cast<std::size_t>(j)] * b) + x[j];
                im[j] = rho * (sin_[static_cast<std::size_t>(j)] * a + cos_[static_cast<std::size_t>(j)] * b) + x[pairs + j];
            }
            for (Eigen::Index j = 0; j < signs; ++j) {
                const Eigen::Index i = 2 * pairs + j;
                s[i] = rho * sign_[static_cast<std::size_t>(j)] * s[i] + x[i];
            }
        }
        return;
    }
    // Windows of one SIMD packet of pairs (the last one moved back to end at the last
    // pair, so it may overlap the one before), run two at a time from the end, each
    // pair of windows through every step with its state in registers; the ±1 entries
    // ride along with the first two.
    Lanes f = Lanes::Zero();
    for (Eigen::Index j = 0; j < signs; ++j) f(kLanes - signs + j) = rho * sign_[static_cast<std::size_t>(j)];
    const Eigen::Index windows = (pairs + kLanes - 1) / kLanes;
    const auto start = [&](Eigen::Index k) { return std::min(k * kLanes, pairs - kLanes); };
    bool sign = signs > 0;
    for (Eigen::Index k = windows - 1; k >= 0; k -= 2) {
        const bool second = k >= 1;
        const Eigen::Index j1 = start(k), j0 = second ? start(k - 1) : j1;
        const auto run = [&](auto two, auto with_sign) {
            run_windows<decltype(two)::value, decltype(with_sign)::value>(count, input, rho, s, pairs, dim_, cos_.data(),
                                                                           sin_.data(), j0, j1, f, signs);
        };
        using Yes = std::true_type;
        using No = std::false_type;
        if (second && sign) run(Yes{}, Yes{});
        else if (second) run(Yes{}, No{});
        else if (sign) run(No{}, Yes{});
        else run(No{}, No{});
        sign = false;
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
    // once (one GEMM over the distinct rows), then every step costs O(D). Their codes are
    // also the same in every episode of a cell (positional keys: x is the value, a token
    // of the task's vocabulary), so up to kKeptInputs mapped rows are kept across batches
    // and only rows not seen before are mapped.
    const bool keep = value_only_;
    std::vector<const float*> input(static_cast<std::size_t>(x.rows()));
    std::vector<Eigen::Index> which(static_cast<std::size_t>(x.rows()), -1);  // row of `mapped`, or −1: kept
    std::unordered_map<std::string_view, Eigen::Index> seen;
    const auto row_bytes = static_cast<std::size_t>(x.cols()) * sizeof(float);
    std::vector<Eigen::Index> distinct;
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        const std::string_view bytes(reinterpret_cast<const char*>(x.row(i).data()), row_bytes);
        if (keep) {
            const auto k = kept_at_.find(std::string(bytes));
            if (k != kept_at_.end()) {
                input[static_cast<std::size_t>(i)] = kept_.row(k->second).data();
                continue;
            }
        }
        const auto [it, fresh] = seen.emplace(bytes, static_cast<Eigen::Index>(distinct.size()));
        if (fresh) distinct.push_back(i);
        which[static_cast<std::size_t>(i)] = it->second;
    }
    RowMat mapped;
    if (!distinct.empty()) {
        // Kept rows must be the bits any later batch would map them to, but a row of Eigen's
        // GEMM rounds differently when it falls outside the kernel's blocks of 4 (and a single
        // row is a matrix-vector product): when rows are kept, the batch is padded with copies
        // of its last row to a multiple of 4, so every row is mapped in a block of 4.
        const auto rows = static_cast<Eigen::Index>(distinct.size());
        RowMat unique(keep ? (rows + 3) / 4 * 4 : rows, x.cols());
        for (Eigen::Index u = 0; u < unique.rows(); ++u)
            unique.row(u) = x.row(distinct[static_cast<std::size_t>(std::min(u, rows - 1))]);
        // Constructed from the product, not assigned to: Eigen evaluates `m = A * B` into a
        // temporary by another kernel path whose rows' bits depend on the batch's size.
        RowMat product = unique * input_map_.transpose();  // distinct (padded) × D
        mapped.swap(product);
        for (Eigen::Index i = 0; i < x.rows(); ++i)
            if (which[static_cast<std::size_t>(i)] >= 0) input[static_cast<std::size_t>(i)] = mapped.row(which[static_cast<std::size_t>(i)]).data();
    }
    steps(x.rows(), [&](Eigen::Index t) { return input[static_cast<std::size_t>(t)]; });
    if (!keep) return;
    // Keep the new rows while there is room (mapped in blocks of 4, a row's bits do not depend
    // on the rows mapped beside it, so a kept row is the row a fresh batch would give).
    for (std::size_t u = 0; u < distinct.size() && kept_rows_ < kKeptInputs; ++u) {
        if (kept_.rows() == 0) kept_.resize(kKeptInputs, dim_);
        kept_.row(kept_rows_) = mapped.row(static_cast<Eigen::Index>(u));
        kept_at_.emplace(std::string(reinterpret_cast<const char*>(x.row(distinct[u]).data()), row_bytes), kept_rows_++);
    }
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
