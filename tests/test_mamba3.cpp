// Mamba-3 (memories/mamba3/): its special cases (λ = 1 and θ = 0 is Mamba-2 on the same stream),
// its write against the complex recurrence it is written from, and the rotary (RoPE) form of the
// same reads.
#include "core/rng.hpp"
#include "harness/eval/cell.hpp"
#include "harness/eval/readout.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/mamba3/mamba3.hpp"
#include "memories/registry.hpp"
#include "memories/selective/selective_state.hpp"
#include "registry_specs.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <vector>

using namespace memcap;
using memcap::test::unit_rows;

namespace mamba3_test {

float max_abs(const Vec& x) { return x.size() ? x.cwiseAbs().maxCoeff() : 0.0f; }

std::int64_t correct_of(const CellResult& r) {
    std::int64_t c = 0;
    for (const auto& s : r.slots) c += s.correct;
    return c;
}

/// n values, every third one the filler e_0 (the salience feature 0), the others with v_0 = 0.
RowMat values_with_fillers(Rng& rng, Eigen::Index n, Eigen::Index d) {
    RowMat v = unit_rows(rng, n, d);
    for (Eigen::Index i = 0; i < n; ++i) {
        if (i % 3 == 2) {
            v.row(i).setZero();
            v(i, 0) = 1.0f;
        } else {
            v(i, 0) = 0.0f;
        }
    }
    return v;
}

}  // namespace mamba3_test


TEST_CASE("mamba3 at lambda = 1 and theta = 0 is mamba2 on the same stream", "[memory][mamba3]") {
    const int d = 16, d_phi = 8;
    Rng data = Rng::stream("test/mamba3/mamba2");
    const Eigen::Index n = 45;
    const RowMat k = unit_rows(data, n, d), q = unit_rows(data, n, d);
    const RowMat v = mamba3_test::values_with_fillers(data, n, d);
    // budgets that buy the same d_phi: the grid's d_v d_phi, and that plus the trapezoid's d_v + d_phi
    InputDescription in;
    in.d_key = in.d_value = d;
    in.salience_feature = 0;  // the fillers are skipped (Δ = 0)
    const MemoryShape s2(in, std::int64_t{d} * d_phi), s3(in, std::int64_t{d} * d_phi + d + d_phi);
    REQUIRE(Mamba3::feature_budget(s3) == d_phi);
    for (const double rho : {1.0, 0.97}) {
        CAPTURE(rho);
        Rng pa = Rng::stream("test/mamba3/params"), pb = Rng::stream("test/mamba3/params");
        SelectiveState m2(s2, rho, /*gated=*/true, "proj", 1, pa);
        Mamba3 m3(s3, rho, /*lambda=*/1.0, /*theta=*/0.0, /*gated=*/true, pb);
        REQUIRE(m3.d_phi() == d_phi);
        REQUIRE(m3.state_floats() == std::int64_t{d} * d_phi + d + d_phi);
        float worst = 0.0f;
        for (Eigen::Index i = 0; i < n; ++i) {
            m2.write(k.row(i).transpose(), v.row(i).transpose());
            m3.write(k.row(i).transpose(), v.row(i).transpose());
            Vec a(d), b(d);
            m2.read(q.row(i).transpose(), a);
            m3.read(q.row(i).transpose(), b);
            worst = std::max(worst, mamba3_test::max_abs(a - b) / std::max(1.0f, mamba3_test::max_abs(a)));
        }
        const Vec st = m3.state();
        REQUIRE(mamba3_test::max_abs(st.head(d * d_phi) - Vec(m2.state())) < 1e-5f);
        REQUIRE(worst < 1e-5f);
        // the causal form under per-token gates (Mamba-2's Δ_t and decay): the same outputs
        TokenGates g;
        g.write_gate = Vec(n);
        g.log_decay = RowMat(n, 1);
        for (Eigen::Index i = 0; i < n; ++i) {
            g.write_gate(i) = i % 5 == 4 ? 0.0f : 0.25f + 0.75f * float(i % 4) / 3.0f;
            g.log_decay(i, 0) = -0.05f * float(i % 3);
        }
        RowMat o2(n, d), o3(n, d);
        m2.reset();
        m3.reset();
        m2.causal(q, k, v, g, o2);
        m3.causal(q, k, v, g, o3);
        REQUIRE((o2 - o3).cwiseAbs().maxCoeff() < 1e-5f * std::max(1.0f, o2.cwiseAbs().maxCoeff()));
    }
    // Through the table at the natural size (d_phi = d_k both, φ the identity) on the same cells:
    // the same right reads, up to a near-tie that rounding may flip
    for (const char* task : {"assoc_recall", "mqar:length=256"}) {
        for (const std::int64_t pairs : {16, 48}) {
            CAPTURE(task, pairs);
            const auto cell = [&](const char* memory) {
                return run_cell(make_cell(parse_memory_spec(memory), parse_task_spec(task), parse_readout_spec("native"),
                                          std::nullopt, 32, pairs, 2));
            };
            const CellResult a = cell("mamba2:rho=0.99"), b = cell("mamba3:rho=0.99,lambda=1,theta=0");
            REQUIRE(a.ok);
            REQUIRE(b.ok);
            REQUIRE(std::abs(mamba3_test::correct_of(a) - mamba3_test::correct_of(b)) <= 1);
        }
    }
}

TEST_CASE("mamba3's write is the complex exponential-trapezoidal recurrence", "[memory][mamba3]") {
    // d_phi = 7: three complex pairs and one real channel that does not turn
    const int d = 12, d_phi = 7;
    InputDescription in;
    in.d_key = in.d_value = d;
    in.salience_feature = 0;
    const MemoryShape shape(in, std::int64_t{d} + std::int64_t{d_phi} * (d + 1));
    const double rho = 0.95, lambda = 0.3, theta = 0.7;
    Rng pa = Rng::stream("test/mamba3/complex"), pb = Rng::stream("test/mamba3/complex");
    Mamba3 m(shape, rho, lambda, theta, true, pa);
    REQUIRE(m.d_phi() == d_phi);
    const FeatureMap phi("proj", d, d_phi, 1, pb);  // the same draw: the memory's φ
    Rng data = Rng::stream("test/mamba3/complex/data");
    const Eigen::Index n = 30;
    const RowMat k = unit_rows(data, n, d), q = unit_rows(data, n, d);
    const RowMat v = mamba3_test::values_with_fillers(data, n, d);
    const int pairs = d_phi / 2;
    using C = std::complex<double>;
    // h: d_v rows of `pairs` complex numbers and one real channel; the previous written token's x and B
    std::vector<std::vector<C>> h(d, std::vector<C>(pairs));
    std::vector<double> h_real(d, 0.0), x_prev(d, 0.0), b_prev(d_phi, 0.0);
    for (Eigen::Index t = 0; t < n; ++t) {
        m.write(k.row(t).transpose(), v.row(t).transpose());
        const double delta = v(t, 0) != 0.0f ? 0.0 : 1.0;
        if (delta != 0.0) {
            RowMat f(1, d_phi);
            phi.apply(k.row(t), f);
            const double alpha = std::pow(rho, delta), beta = (1.0 - lambda) * delta * alpha, gamma = lambda * delta;
            for (int i = 0; i < d; ++i) {
                for (int j = 0; j < pairs; ++j) {
                    const C turn = std::polar(1.0, delta * Mamba3::pair_rate(theta, j, pairs));
                    const C prev(b_prev[2 * j], b_prev[2 * j + 1]), now(f(0, 2 * j), f(0, 2 * j + 1));
                    h[i][j] = turn * (alpha * h[i][j] + beta * x_prev[i] * prev) + gamma * double(v(t, i)) * now;
                }
                h_real[i] = alpha * h_real[i] + beta * x_prev[i] * b_prev[d_phi - 1] + gamma * double(v(t, i)) * f(0, d_phi - 1);
            }
            for (int i = 0; i < d; ++i) x_prev[i] = v(t, i);
            for (int j = 0; j < d_phi; ++j) b_prev[j] = f(0, j);
        }
        // the read: Re(Σ_j conj(C_j) h_j) + the real channel
        RowMat fq(1, d_phi);
        phi.apply(q.row(t), fq);
        Vec got(d);
        m.read(q.row(t).transpose(), got);
        for (int i = 0; i < d; ++i) {
            double want = h_real[i] * fq(0, d_phi - 1);
            for (int j = 0; j < pairs; ++j) want += (std::conj(C(fq(0, 2 * j), fq(0, 2 * j + 1))) * h[i][j]).real();
            REQUIRE(std::abs(double(got(i)) - want) < 1e-4);
        }
        // the trapezoid's memory of the last written token is state: its x and B
        const Vec s = m.state();
        for (int i = 0; i < d; ++i) REQUIRE(double(s(d * d_phi + i)) == x_prev[i]);
        for (int j = 0; j < d_phi; ++j) REQUIRE(std::abs(double(s(d * d_phi + d + j)) - b_prev[j]) < 1e-6);
    }
    // a skipped token (Δ = 0) leaves everything, the previous token too, exactly as it was
    const Vec before = m.state();
    Vec filler = Vec::Zero(d);
    filler(0) = 1.0f;
    m.write(k.row(0).transpose(), filler);
    REQUIRE(Vec(m.state()) == before);
}

TEST_CASE("mamba3's reads are linear attention with cumulative rotary angles on B and C", "[memory][mamba3]") {
    // Δ = 1 on every token (no salience feature): o_t = Σ_j c_j ρ^{t−j} v_j ⟨R(Θ_j)ᵀ k_j, R(Θ_t)ᵀ q⟩,
    // Θ_j = j θ_pair, with c_j = 1 for j < t and c_t = λ: each earlier token's two parts (λ at its own
    // step, 1 − λ at the next) sum to 1, and the newest is written λ so far.
    const int d = 10;  // the natural size: φ the identity, five pairs
    const Eigen::Index n = 25;
    Rng data = Rng::stream("test/mamba3/rope");
    const RowMat k = unit_rows(data, n, d), v = unit_rows(data, n, d), q = unit_rows(data, n, d);
    for (const double theta : {0.0, 0.5}) {
        for (const double lambda : {1.0, 0.4, 0.1}) {
            CAPTURE(theta, lambda);
            const double rho = 0.9;
            Rng p = Rng::stream("test/mamba3/rope/params");
            Mamba3 m(MemoryShape(d, d), rho, lambda, theta, true, p);
            REQUIRE(m.d_phi() == d);
            const auto rope = [&](const Eigen::Ref<const Eigen::RowVectorXf>& x, Eigen::Index pos) {
                std::vector<double> out(d);
                for (int j = 0; j < d / 2; ++j) {  // R(Θ)ᵀ: turn back by the cumulative angle
                    const double a = -double(pos) * Mamba3::pair_rate(theta, j, d / 2);
                    out[2 * j] = std::cos(a) * x(2 * j) - std::sin(a) * x(2 * j + 1);
                    out[2 * j + 1] = std::sin(a) * x(2 * j) + std::cos(a) * x(2 * j + 1);
                }
                return out;
            };
            for (Eigen::Index t = 0; t < n; ++t) {
                m.write(k.row(t).transpose(), v.row(t).transpose());
                Vec got(d);
                m.read(q.row(t).transpose(), got);
                const std::vector<double> cq = rope(q.row(t), t);
                std::vector<double> want(d, 0.0);
                for (Eigen::Index j = 0; j <= t; ++j) {
                    const std::vector<double> bk = rope(k.row(j), j);
                    double dot = 0.0;
                    for (int c = 0; c < d; ++c) dot += bk[c] * cq[c];
                    const double w = (j == t ? lambda : 1.0) * std::pow(rho, double(t - j)) * dot;
                    for (int c = 0; c < d; ++c) want[c] += w * v(j, c);
                }
                for (int c = 0; c < d; ++c) REQUIRE(std::abs(double(got(c)) - want[c]) < 1e-4);
            }
        }
    }
}

TEST_CASE("mamba3's size: the state formula, the trapezoid's floats counted, the minimum budget", "[memory][mamba3]") {
    const MemoryShape s(64, 64, 4096);
    const MemorySize size = memory_size(parse_memory_spec("mamba3"), s);
    const std::int64_t d_phi = (4096 - 64) / 65;
    REQUIRE(size.dim("d_phi") == d_phi);
    REQUIRE(size.state_floats == 64 * d_phi + 64 + d_phi);
    REQUIRE(size.state_floats <= 4096);
    auto m = make_memory(parse_memory_spec("mamba3"), s, 0);
    REQUIRE(m->state_floats() == size.state_floats);
    REQUIRE(size.min_budget == 2 * 64 + 1);
    REQUIRE_THROWS(make_memory(parse_memory_spec("mamba3"), MemoryShape(64, 64, 128), 0));
    REQUIRE_NOTHROW(make_memory(parse_memory_spec("mamba3"), MemoryShape(64, 64, 129), 0));
}
