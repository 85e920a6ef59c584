// memcap/memories/grid/feature_map.cpp — see feature_map.hpp.
#include "memories/grid/feature_map.hpp"

#include "core/error.hpp"

#include <Eigen/QR>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace memcap {

RowMat unit_rows_backward(const RowMat& raw, ConstMatRef d_f) {
    RowMat d_raw(raw.rows(), raw.cols());
    for (Eigen::Index i = 0; i < raw.rows(); ++i) {
        const float norm = raw.row(i).norm();
        if (norm == 0.0f) {
            d_raw.row(i).setZero();
            continue;
        }
        const auto f = raw.row(i) / norm;
        d_raw.row(i) = (d_f.row(i) - f.dot(d_f.row(i)) * f) / norm;
    }
    return d_raw;
}

FeatureMap::Dims FeatureMap::size(const std::string& kind, int d_in, std::int64_t max_dim, int nu) {
    const bool dpfp = kind == "dpfp", taylor = kind == "taylor";
    std::int64_t m = dpfp ? max_dim / (2 * nu) : max_dim;
    if (taylor) {  // the largest m with 1 + m + m(m+1)/2 ≤ max_dim (y yᵀ's unique entries)
        const auto features = [](std::int64_t k) { return 1 + k + k * (k + 1) / 2; };
        m = static_cast<std::int64_t>(std::sqrt(2.0 * static_cast<double>(std::max<std::int64_t>(max_dim, 0))));
        if (m > 65535) m = 65535;  // d_φ beyond an int: refused below
        else {
            while (m > 0 && features(m) > max_dim) --m;
            while (features(m + 1) <= max_dim) ++m;
        }
        if (features(m) > std::numeric_limits<int>::max())
            throw UsageError("feature map 'taylor': " + std::to_string(features(m)) +
                             " features exceed the largest supported; lower the budget");
    }
    if (m > std::numeric_limits<int>::max() / (2 * nu))
        throw UsageError("feature map '" + kind + "': " + std::to_string(m) + " features exceed the largest supported (" +
                         std::to_string(std::numeric_limits<int>::max() / (2 * nu)) + "); lower the budget");
    Dims d;
    d.m = static_cast<int>(m);
    d.dim = dpfp ? 2 * nu * d.m : taylor ? 1 + d.m + d.m * (d.m + 1) / 2 : d.m;
    d.identity = d.m == d_in;
    if (!d.identity) {
        d.param_floats = std::int64_t{d.m} * d_in;
        // g, the QR's factors and Q: tall × wide doubles each (see the constructor)
        d.build_scratch_bytes = 3 * 8 * d.param_floats;
    }
    return d;
}

namespace {

/// Projections drawn before, kept by what drew them: the map's m and d_in and the Rng's state
/// before the draw; with each, the Rng as the draw left it. A cell's memory draws from a stream
/// named by its spec, shape and seed, not by n or the task, so the race's candidates on one
/// tuning seed, and the scored cells of one seed, draw the same projection at every n and task
/// (drawing it, the normals and the QR, was about 30% of Kimi Delta Attention's
/// sweep on the frontier in `perf`). A kept projection is the
/// same bits as a drawn one, so the cache changes no result, whatever it holds; up to
/// kBytes of projections, the oldest dropped first.
class ProjectionCache {
public:
    struct Drawn {
        RowMat proj;
        Rng after;
    };
    using Key = std::tuple<int, int, std::array<std::uint64_t, 5>>;
    static constexpr std::size_t kBytes = std::size_t{256} << 20;

    std::shared_ptr<const Drawn> find(const Key& key) {
        const std::lock_guard<std::mutex> lock(mutex_);
        const auto it = kept_.find(key);
        if (it == kept_.end()) return nullptr;
        ++hits_;
        return it->second;
    }
    void keep(const Key& key, std::shared_ptr<const Drawn> drawn) {
        const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(drawn->proj.size());
        if (bytes > kBytes / 4) return;
        const std::lock_guard<std::mutex> lock(mutex_);
        if (!kept_.emplace(key, std::move(drawn)).second) return;  // another thread drew it too
        order_.push_back(key);
        bytes_ += bytes;
        while (bytes_ > kBytes) {
            const auto it = kept_.find(order_.front());
            bytes_ -= sizeof(float) * static_cast<std::size_t>(it->second->proj.size());
            kept_.erase(it);
            order_.pop_front();
        }
    }
    std::uint64_t hits() {
        const std::lock_guard<std::mutex> lock(mutex_);
        return hits_;
    }
    static ProjectionCache& get() {
        static auto& cache = *new ProjectionCache;  // never destroyed: used until the process ends
        return cache;
    }

private:
    std::mutex mutex_;
    std::map<Key, std::shared_ptr<const Drawn>> kept_;
    std::deque<Key> order_;
    std::size_t bytes_ = 0;
    std::uint64_t hits_ = 0;
};

}  // namespace

std::uint64_t FeatureMap::kept_projections() { return ProjectionCache::get().hits(); }

FeatureMap::FeatureMap(const std::string& kind, int d_in, std::int64_t max_dim, int nu, Rng& rng, double scale)
    : dpfp_(kind == "dpfp"), taylor_(kind == "taylor"), scale_(static_cast<float>(scale)), nu_(nu) {
    const Dims dims = size(kind, d_in, max_dim, nu);
    m_ = dims.m;
    dim_ = dims.dim;
    identity_ = dims.identity;
    if (!identity_) {
        const ProjectionCache::Key key{m_, d_in, rng.state()};
        if (const auto kept = ProjectionCache::get().find(key)) {
            proj_ = kept->proj;
            rng = kept->after;
            return;
        }
        // A random semi-orthogonal map: orthonormal columns when m ≥ d_in (inner
        // products kept exactly), orthonormal rows scaled by √(d_in/m) when m < d_in
        // (kept on average, with less spread than a Gaussian map).
        const int tall = std::max(m_, d_in), wide = std::min(m_, d_in);
        Eigen::MatrixXd g(tall, wide);
        for (int j = 0; j < wide; ++j)
            for (int i = 0; i < tall; ++i) g(i, j) = rng.normal();
        Eigen::HouseholderQR<Eigen::MatrixXd> qr(g);
        Eigen::MatrixXd q = qr.householderQ() * Eigen::MatrixXd::Identity(tall, wide);
        for (int j = 0; j < wide; ++j)
            if (qr.matrixQR()(j, j) < 0) q.col(j) = -q.col(j);
        if (m_ >= d_in) proj_ = q.cast<float>();
        else proj_ = (q.transpose() * std::sqrt(static_cast<double>(d_in) / m_)).cast<float>();
        ProjectionCache::get().keep(key, std::make_shared<const ProjectionCache::Drawn>(ProjectionCache::Drawn{proj_, rng}));
    }
}

void FeatureMap::apply(ConstMatRef x, MatRef phi) const {
    if (taylor_) {
        const RowMat y = scale_ * (identity_ ? RowMat(x) : RowMat(x * proj_.transpose()));
        const float half = static_cast<float>(std::sqrt(0.5));
        phi.col(0).setOnes();
        phi.middleCols(1, m_) = y;
        // y yᵀ's lower triangle, row by row: y_i² / √2 on the diagonal, y_i y_j (i > j) off it
        // (the two symmetric entries y_i y_j / √2 folded into one, so the kernel is unchanged)
        for (int i = 0, c = 1 + m_; i < m_; ++i)
            for (int j = 0; j <= i; ++j, ++c) phi.col(c) = (i == j ? half : 1.0f) * y.col(i).cwiseProduct(y.col(j));
        return;
    }
    if (!dpfp_) {
        if (identity_) phi = x;
        else phi.noalias() = x * proj_.transpose();
        return;
    }
    RowMat y = identity_ ? RowMat(x) : RowMat(x * proj_.transpose());
    const int two_m = 2 * m_;
    RowMat r(y.rows(), two_m);
    r.leftCols(m_) = y.cwiseMax(0.0f);
    r.rightCols(m_) = (-y).cwiseMax(0.0f);
    for (int j = 1; j <= nu_; ++j)
        for (int i = 0; i < two_m; ++i)
            phi.col(i + two_m * (j - 1)) = r.col(i).cwiseProduct(r.col((i + j) % two_m));
}

void FeatureMap::backward(ConstMatRef x, ConstMatRef d_phi, MatRef d_x) const {
    if (taylor_) {  // ∂y_i = ∂φ_{1+i} + √2 ∂φ_{ii} y_i + Σ_{j≠i} ∂φ_{ij} y_j (φ_{ij}, i ≥ j, the
                    // lower triangle as apply lays it out), and y = s P x
        const RowMat y = scale_ * (identity_ ? RowMat(x) : RowMat(x * proj_.transpose()));
        const float root2 = static_cast<float>(std::sqrt(2.0));
        RowMat d_y = d_phi.middleCols(1, m_);
        for (int i = 0, c = 1 + m_; i < m_; ++i)
            for (int j = 0; j <= i; ++j, ++c) {
                const auto g = d_phi.col(c);
                if (i == j) {
                    d_y.col(i) += root2 * g.cwiseProduct(y.col(i));
                } else {
                    d_y.col(i) += g.cwiseProduct(y.col(j));
                    d_y.col(j) += g.cwiseProduct(y.col(i));
                }
            }
        if (identity_) d_x = scale_ * d_y;
        else d_x.noalias() = scale_ * (d_y * proj_);
        return;
    }
    if (!dpfp_) {
        if (identity_) d_x = d_phi;
        else d_x.noalias() = d_phi * proj_;
        return;
    }
    const RowMat y = identity_ ? RowMat(x) : RowMat(x * proj_.transpose());
    const int two_m = 2 * m_;
    RowMat r(y.rows(), two_m);
    r.leftCols(m_) = y.cwiseMax(0.0f);
    r.rightCols(m_) = (-y).cwiseMax(0.0f);
    RowMat d_r = RowMat::Zero(y.rows(), two_m);
    for (int j = 1; j <= nu_; ++j)
        for (int i = 0; i < two_m; ++i) {  // φ_{i+2m(j−1)} = r_i r_{(i+j) mod 2m}
            const auto g = d_phi.col(i + two_m * (j - 1));
            d_r.col(i) += g.cwiseProduct(r.col((i + j) % two_m));
            d_r.col((i + j) % two_m) += g.cwiseProduct(r.col(i));
        }
    const RowMat d_y = (y.array() > 0.0f).select(d_r.leftCols(m_), 0.0f) - (y.array() < 0.0f).select(d_r.rightCols(m_), 0.0f);
    if (identity_) d_x = d_y;
    else d_x.noalias() = d_y * proj_;
}

}  // namespace memcap
