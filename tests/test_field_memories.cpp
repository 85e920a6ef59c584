// The field's further memories (mlstm, …) beside the memories they reduce to, and the
// magnitude readout (harness/eval/readout.hpp) that makes a read's scale count.
#include "core/rng.hpp"
#include "harness/eval/cell.hpp"
#include "harness/eval/nearest.hpp"
#include "harness/eval/readout.hpp"
#include "memories/performer/performer.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"
#include "tasks/registry.hpp"
#include "tasks/task.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <limits>

using namespace memcap;
using memcap::test::unit_rows;

namespace field_test {

std::int64_t correct_of(const CellResult& r) {
    std::int64_t c = 0;
    for (const auto& s : r.slots) c += s.correct;
    return c;
}

CellResult run(const std::string& memory, const std::string& task, const std::string& readout, std::optional<std::int64_t> budget, int d,
               std::int64_t n, std::uint64_t seed) {
    return run_cell(make_cell(parse_memory_spec(memory), parse_task_spec(task), parse_readout_spec(readout), budget, d, n, seed));
}

}  // namespace field_test

using field_test::correct_of;
using field_test::run;

TEST_CASE("the magnitude readout: right only within radius x |target| of the target", "[readout][magnitude]") {
    // one episode of three unit candidates; reads along the target at several scales
    Episode e;
    const int d = 8;
    Rng rng = Rng::stream("test/magnitude");
    e.candidates = unit_rows(rng, 3, d);
    e.target = {1, 1, 1, 1};
    e.slot = {-1, -1, -1, -1};
    RowMat reads(4, d);
    const float scales[] = {1.0f, 0.6f, 1.4f, 3.0f};  // within 0.5 of c_1: 1, 0.6, 1.4; not 3
    for (int i = 0; i < 4; ++i) reads.row(i) = scales[i] * e.candidates.row(1);
    std::vector<SlotScore> native, ball, wide;
    score_reads(e, reads, native);
    score_reads(e, reads, ball, 0, nullptr, nullptr, 0.5);
    score_reads(e, reads, wide, 0, nullptr, nullptr, 2.5);
    REQUIRE(native.at(0).correct == 4);  // the nearest candidate ignores the scale
    REQUIRE(ball.at(0).correct == 3);    // 3 c_1 is 2 |c_1| away
    REQUIRE(wide.at(0).correct == 4);
    REQUIRE(ball.at(0).target_dist_sum == native.at(0).target_dist_sum);  // the same distances
    // through a cell: radius=inf is the native readout; a finite radius never adds a right read
    const CellResult a = run("linear", "assoc_recall", "native", 1024, 32, 48, 3);
    const CellResult b = run("linear", "assoc_recall", "magnitude:radius=inf", 1024, 32, 48, 3);
    const CellResult c = run("linear", "assoc_recall", "magnitude", 1024, 32, 48, 3);
    REQUIRE(a.ok);
    REQUIRE(b.ok);
    REQUIRE(c.ok);
    REQUIRE(correct_of(a) == correct_of(b));
    REQUIRE(correct_of(c) <= correct_of(a));
    REQUIRE(c.readout == "magnitude:radius=0.5");
}

TEST_CASE("mlstm at f = i = 1 is the linear grid: C bit for bit, reads divided by max(|n.q|, 1)", "[memory][mlstm]") {
    const int d = 16;
    Rng data = Rng::stream("test/mlstm");
    const RowMat k = unit_rows(data, 40, d), v = unit_rows(data, 40, d), q = unit_rows(data, 40, d);
    // the natural size (d_phi = d_k, no projection) and a budget whose d_phi is d_k: the same features
    for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>(), std::optional<std::int64_t>(d * (d + 1) + 1)}) {
        auto m = make_memory(parse_memory_spec("mlstm"), MemoryShape(d, d, budget), 1);
        auto lin = make_memory(parse_memory_spec("linear"), MemoryShape(d, d), 1);
        REQUIRE(m->state_floats() == d * d + d + 1);
        for (Eigen::Index i = 0; i < k.rows(); ++i) {
            m->write(k.row(i).transpose(), v.row(i).transpose());
            lin->write(k.row(i).transpose(), v.row(i).transpose());
        }
        const Vec s = m->state();
        REQUIRE(s.head(d * d) == Vec(lin->state()));  // C = M, bit for bit
        Vec n = Vec::Zero(d);
        for (Eigen::Index i = 0; i < k.rows(); ++i) n += k.row(i).transpose();
        REQUIRE((s.segment(d * d, d) - n).cwiseAbs().maxCoeff() < 1e-5f);
        REQUIRE(s(d * d + d) == 0.0f);  // the stabiliser stays 0
        int floor_binds = 0, exact = 0;
        for (Eigen::Index i = 0; i < q.rows(); ++i) {
            Vec a(d), b(d);
            m->read(q.row(i).transpose(), a);
            lin->read(q.row(i).transpose(), b);
            const float nq = std::abs(q.row(i).dot(n.transpose()));
            if (nq <= 1.0f) {
                ++floor_binds;
                exact += (a == b);
            }
            REQUIRE((a * std::max(nq, 1.0f) - b).cwiseAbs().maxCoeff() < 1e-4f * std::max(1.0f, b.cwiseAbs().maxCoeff()));
        }
        REQUIRE(floor_binds > 0);
        REQUIRE(floor_binds < q.rows());  // both cases met
        REQUIRE(exact == floor_binds);    // where the floor binds, the reads are the grid's bit for bit
    }
    // under the native readout the positive scale changes no decision (at the natural size both have
    // d_phi = d_k): the same right reads as linear, up to a near-tie that the scaled read's rounding
    // may flip (the candidates' squared norms are 1 only to float rounding)
    for (const std::int64_t n : {32, 96}) {
        CAPTURE(n);
        const CellResult a = run("mlstm", "assoc_recall", "native", std::nullopt, 32, n, 0);
        const CellResult b = run("linear", "assoc_recall", "native", std::nullopt, 32, n, 0);
        REQUIRE(std::abs(correct_of(a) - correct_of(b)) <= 1);
    }
}

TEST_CASE("mlstm's stabiliser changes no read: equal to the unstabilised recurrence in double", "[memory][mlstm]") {
    const int d = 8;
    Rng data = Rng::stream("test/mlstm/stabiliser");
    const RowMat k = unit_rows(data, 30, d), v = unit_rows(data, 30, d), q = unit_rows(data, 30, d);
    for (const double input : {-3.0, 0.0, 2.0, 12.0}) {
        CAPTURE(input);
        const double f = 0.9;
        auto m = make_memory(parse_memory_spec("mlstm:forget=0.9,input=" + std::to_string(input)), MemoryShape(d, d), 1);
        Eigen::MatrixXd c = Eigen::MatrixXd::Zero(d, d);
        Eigen::VectorXd n = Eigen::VectorXd::Zero(d);
        const double i_gate = std::exp(input);
        for (Eigen::Index t = 0; t < k.rows(); ++t) {
            m->write(k.row(t).transpose(), v.row(t).transpose());
            c = f * c + i_gate * v.row(t).transpose().cast<double>() * k.row(t).cast<double>();
            n = f * n + i_gate * k.row(t).transpose().cast<double>();
            Vec got(d);
            m->read(q.row(t).transpose(), got);
            const Eigen::VectorXd qq = q.row(t).transpose().cast<double>();
            const Eigen::VectorXd want = c * qq / std::max(std::abs(n.dot(qq)), 1.0);
            // float rounding of C and n, whose terms are up to e^12 and cancel in the reads
            REQUIRE((got.cast<double>() - want).cwiseAbs().maxCoeff() < 1e-3 * std::max(1.0, want.cwiseAbs().maxCoeff()));
        }
        REQUIRE(Vec(m->state()).allFinite());
    }
    // per-token gates: log f_t and i_t = beta_t, as the constants would give
    auto gated = make_memory(parse_memory_spec("mlstm"), MemoryShape(d, d), 1);
    auto fixed = make_memory(parse_memory_spec("mlstm:forget=0.9,input=0.5"), MemoryShape(d, d), 1);
    TokenGates g;
    g.log_decay = RowMat::Constant(k.rows(), 1, std::log(0.9f));
    g.beta = Vec::Constant(k.rows(), std::exp(0.5f));
    RowMat a(k.rows(), d), b(k.rows(), d);
    gated->causal(q, k, v, g, a);
    fixed->causal(q, k, v, TokenGates{}, b);
    REQUIRE((a - b).cwiseAbs().maxCoeff() < 1e-5f * std::max(1.0f, b.cwiseAbs().maxCoeff()));
}

TEST_CASE("performer: the random-feature estimate of exp(beta q.k) is unbiased, its variance the paper's, falling as 1/m",
          "[memory][performer]") {
    // x, y of norm 0.5 at cos 0.6 and beta = 1: K = exp(x.y) = e^0.15; Var K^ = (1/m) K^2 (e^{|x+y|^2} - 1)
    const int d = 16;
    RowMat x = RowMat::Zero(1, d), y = RowMat::Zero(1, d);
    x(0, 0) = 0.5f;
    y(0, 0) = 0.3f, y(0, 1) = 0.4f;
    const double dot = (x * y.transpose())(0, 0), sum_sq = (x + y).squaredNorm();
    const double kernel = std::exp(dot), var1 = kernel * kernel * (std::exp(sum_sq) - 1.0);
    const int draws = 400;
    double previous_mse = std::numeric_limits<double>::infinity();
    for (const std::int64_t m : {4, 64, 1024}) {
        CAPTURE(m);
        // draws independent feature sets: the memory's parameters under different seeds
        double mean = 0.0, mse = 0.0, sq_err4 = 0.0;
        for (int s = 0; s < draws; ++s) {
            Rng rng = Rng::stream("test/performer", m, s);
            const Performer p(MemoryShape(d, d, (d + 1) * m), 1.0, rng);
            REQUIRE(p.feature_count() == m);
            const double k_hat = (p.features(x) * p.features(y).transpose())(0, 0);
            const double e = k_hat - kernel;
            mean += k_hat / draws, mse += e * e / draws, sq_err4 += e * e * e * e / draws;
        }
        const double var = var1 / double(m);
        CAPTURE(mean, kernel, mse, var);
        // unbiased: the mean within 4 standard errors of the kernel
        REQUIRE(std::abs(mean - kernel) < 4.0 * std::sqrt(var / draws));
        // the variance: the sample MSE within 4 standard errors of Var (its se from the fourth moment)
        const double se_mse = std::sqrt(std::max(sq_err4 - mse * mse, 0.0) / draws);
        REQUIRE(std::abs(mse - var) < 4.0 * se_mse + 1e-12);
        REQUIRE(mse < previous_mse);  // converges as the feature count grows
        previous_mse = mse;
    }
}

TEST_CASE("performer's read approaches the softmax cache's as the feature count grows", "[memory][performer]") {
    const int d = 16, n = 12;
    Rng data = Rng::stream("test/performer/read");
    RowMat k = unit_rows(data, n, d), v = unit_rows(data, n, d);
    k *= 0.5f;  // a soft kernel (beta |k|^2 = 0.25): a feature count of thousands estimates it closely
    auto cache = make_memory(parse_memory_spec("softmax:beta=1"), MemoryShape(d, d), 0);
    cache->write_batch(k, v);
    double previous = std::numeric_limits<double>::infinity();
    for (const std::int64_t m : {16, 256, 4096}) {
        CAPTURE(m);
        double err = 0.0;
        for (int s = 0; s < 8; ++s) {
            auto p = make_memory(parse_memory_spec("performer:beta=1"), MemoryShape(d, d, (d + 1) * m), s);
            p->write_batch(k, v);
            for (int i = 0; i < n; ++i) {
                Vec a(d), b(d);
                p->read(k.row(i).transpose(), a);
                cache->read(k.row(i).transpose(), b);
                err += (a - b).squaredNorm() / (8.0 * n);
            }
        }
        CAPTURE(err);
        REQUIRE(err < previous);
        previous = err;
    }
    REQUIRE(previous < 1e-3);
}

TEST_CASE("deltaproduct at n_h = 1 is DeltaNet bit for bit, n_h steps on one key are DeltaNet's step 1 - (1 - beta)^n_h",
          "[memory][deltaproduct]") {
    const int d = 16;
    Rng data = Rng::stream("test/deltaproduct");
    const RowMat k = unit_rows(data, 40, d), v = unit_rows(data, 40, d), q = unit_rows(data, 40, d);
    // natural size and a budget of d_phi = d_k: no projection, the same features as delta's
    for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>(), std::optional<std::int64_t>(d * d)}) {
        auto one = make_memory(parse_memory_spec("deltaproduct:steps=1,alpha=1,beta=0.7"), MemoryShape(d, d, budget), 1);
        auto delta = make_memory(parse_memory_spec("delta:beta=0.7"), MemoryShape(d, d, budget), 1);
        for (Eigen::Index i = 0; i < k.rows(); ++i) {
            one->write(k.row(i).transpose(), v.row(i).transpose());
            delta->write(k.row(i).transpose(), v.row(i).transpose());
        }
        REQUIRE(Vec(one->state()) == Vec(delta->state()));
        RowMat a(q.rows(), d), b(q.rows(), d);
        one->read_batch(q, a);
        delta->read_batch(q, b);
        REQUIRE(a == b);
    }
    for (const int steps : {2, 3, 5}) {
        CAPTURE(steps);
        const double beta = 0.4, step = 1.0 - std::pow(1.0 - beta, steps);
        auto many = make_memory(parse_memory_spec("deltaproduct:alpha=1,beta=0.4,steps=" + std::to_string(steps)), MemoryShape(d, d), 1);
        auto delta = make_memory(parse_memory_spec("delta:beta=" + std::to_string(step)), MemoryShape(d, d), 1);
        for (Eigen::Index i = 0; i < k.rows(); ++i) {
            many->write(k.row(i).transpose(), v.row(i).transpose());
            delta->write(k.row(i).transpose(), v.row(i).transpose());
        }
        REQUIRE((Vec(many->state()) - Vec(delta->state())).cwiseAbs().maxCoeff() < 1e-5f);
    }
    // the decay once per token, before the steps: gated DeltaNet's order at n_h = 1
    auto gdp = make_memory(parse_memory_spec("deltaproduct:steps=1,alpha=0.9,beta=0.5"), MemoryShape(d, d), 1);
    auto gdn = make_memory(parse_memory_spec("gated_deltanet:alpha=0.9,beta=0.5,gate=none"), MemoryShape(d, d), 1);
    gdp->write_batch(k, v);
    gdn->write_batch(k, v);
    REQUIRE((Vec(gdp->state()) - Vec(gdn->state())).cwiseAbs().maxCoeff() < 1e-5f);
}

TEST_CASE("comba at removal = 1 and alpha = 1 is the delta rule bit for bit, a shrunk removal key removes less",
          "[memory][comba]") {
    const int d = 16;
    Rng data = Rng::stream("test/comba");
    const RowMat k = unit_rows(data, 40, d), v = unit_rows(data, 40, d);
    auto comba = make_memory(parse_memory_spec("comba:removal=1,alpha=1,beta=0.6"), MemoryShape(d, d), 1);
    auto delta = make_memory(parse_memory_spec("delta:beta=0.6"), MemoryShape(d, d), 1);
    for (Eigen::Index i = 0; i < k.rows(); ++i) {
        comba->write(k.row(i).transpose(), v.row(i).transpose());
        delta->write(k.row(i).transpose(), v.row(i).transpose());
    }
    REQUIRE(Vec(comba->state()) == Vec(delta->state()));
    // one key written twice with beta = 1: the delta rule reads the second value back exactly; with
    // p = b phi the first write leaves v1, the second adds v2 - b v1, so the read is v2 + (1 - b) v1
    for (const double b : {1.0, 0.5, 0.3}) {
        CAPTURE(b);
        auto m = make_memory(parse_memory_spec("comba:alpha=1,beta=1,removal=" + std::to_string(b)), MemoryShape(d, d), 1);
        m->write(k.row(0).transpose(), v.row(0).transpose());
        m->write(k.row(0).transpose(), v.row(1).transpose());
        Vec out(d);
        m->read(k.row(0).transpose(), out);
        const Vec want = v.row(1).transpose() + float(1.0 - b) * v.row(0).transpose();
        REQUIRE((out - want).cwiseAbs().maxCoeff() < 1e-5f);
    }
    // the decay applies after the correction is read from the state (fla's order)
    auto a = make_memory(parse_memory_spec("comba:alpha=0.5,beta=1,removal=1"), MemoryShape(d, d), 1);
    a->write(k.row(0).transpose(), v.row(0).transpose());
    a->write(k.row(0).transpose(), v.row(1).transpose());
    Vec out(d);
    a->read(k.row(0).transpose(), out);
    // S1 = v0 k0^T; u = v1 - v0; S2 = 0.5 v0 k0^T + (v1 - v0) k0^T: the read is v1 - 0.5 v0
    REQUIRE((out - (v.row(1).transpose() - 0.5f * v.row(0).transpose())).cwiseAbs().maxCoeff() < 1e-5f);
}

TEST_CASE("fox without forgetting and without a budget is the softmax cache, a constant gate is its recency bias",
          "[memory][fox]") {
    const int d = 16;
    Rng data = Rng::stream("test/fox");
    const RowMat k = unit_rows(data, 30, d), v = unit_rows(data, 30, d), q = unit_rows(data, 30, d);
    const auto compare = [&](const std::string& fox, const std::string& cache, float tolerance = 1e-5f) {
        CAPTURE(fox, cache);
        auto a = make_memory(parse_memory_spec(fox), MemoryShape(d, d), 0);
        auto b = make_memory(parse_memory_spec(cache), MemoryShape(d, d), 0);
        RowMat ra(q.rows(), d), rb(q.rows(), d);
        a->causal(q, k, v, TokenGates{}, ra);  // read after every write, as the stream is written
        b->causal(q, k, v, TokenGates{}, rb);
        REQUIRE((ra - rb).cwiseAbs().maxCoeff() < tolerance);
    };
    compare("fox:beta=16", "softmax:beta=16");
    compare("fox:beta=4,forget=1,threshold=0", "softmax:beta=4");
    char slope[64];
    std::snprintf(slope, sizeof slope, "%.17g", -std::log(0.9));
    compare("fox:beta=8,forget=0.9", std::string("softmax:beta=8,slope=") + slope, 1e-4f);
    // no budget: every pair is kept, each with its row and its decay
    auto m = make_memory(parse_memory_spec("fox"), MemoryShape(d, d), 0);
    m->write_batch(k, v);
    REQUIRE(m->state_floats() == 30 * (2 * d + 1));
}

TEST_CASE("fox evicts what its gate has forgotten below the threshold, and under a budget the most forgotten first",
          "[memory][fox]") {
    const int d = 8, t = 20;
    Rng data = Rng::stream("test/fox/evict");
    const RowMat k = unit_rows(data, t, d), v = unit_rows(data, t, d);
    // a gate that forgets everything before token 10 (log f = -30 < log 1e-6)
    TokenGates g;
    g.log_decay = RowMat::Zero(t, 1);
    g.log_decay(10, 0) = -30.0f;
    auto m = make_memory(parse_memory_spec("fox:threshold=1e-06"), MemoryShape(d, d), 0);
    RowMat out(t, d);
    m->causal(k, k, v, g, out);
    REQUIRE(m->state_floats() == (t - 10) * (2 * d + 1));  // tokens 10..19 held
    // without a threshold nothing is dropped: the forgotten pairs stay, with weight e^-30
    auto keep = make_memory(parse_memory_spec("fox"), MemoryShape(d, d), 0);
    keep->causal(k, k, v, g, out);
    REQUIRE(keep->state_floats() == t * (2 * d + 1));
    // a budget of 6 pairs, gates that forget the even tokens fast: the odd ones are kept (FIFO would keep the last 6)
    TokenGates odd;
    odd.log_decay = RowMat::Zero(t, 1);
    for (int i = 1; i < t; i += 2) odd.log_decay(i, 0) = -1.0f;  // each odd token decays every pair before it
    auto budget = make_memory(parse_memory_spec("fox"), MemoryShape(d, d, 6 * (2 * d + 1)), 0);
    budget->causal(k, k, v, odd, out);
    REQUIRE(budget->state_floats() == 6 * (2 * d + 1));
    // the pairs held are the 6 newest (the oldest have the most decay): tokens 14..19
    const Vec s = budget->state();
    for (int r = 0; r < 6; ++r) REQUIRE(s.segment(r * (2 * d + 1), d) == k.row(14 + r).transpose());
}

TEST_CASE("cosformer reads the cos-reweighted relu attention it decomposes", "[memory][cosformer]") {
    // at the natural size phi is relu(k) (no projection): the O(T^2) attention of the paper, in double
    const int d = 8, t = 25;
    const double horizon = 40.0;
    Rng data = Rng::stream("test/cosformer");
    const RowMat k = unit_rows(data, t, d), v = unit_rows(data, t, d), q = unit_rows(data, t, d);
    auto m = make_memory(parse_memory_spec("cosformer:horizon=40"), MemoryShape(d, d), 0);
    RowMat out(t, d);
    m->causal(q, k, v, TokenGates{}, out);
    const double pi = std::acos(-1.0);
    for (int i = 0; i < t; ++i) {
        Eigen::VectorXd num = Eigen::VectorXd::Zero(d);
        double den = 0.0;
        const Eigen::VectorXd psi = q.row(i).transpose().cast<double>().cwiseMax(0.0);
        for (int j = 0; j <= i; ++j) {
            const double w = psi.dot(k.row(j).transpose().cast<double>().cwiseMax(0.0)) * std::cos(pi * (i - j) / (2.0 * horizon));
            num += w * v.row(j).transpose().cast<double>();
            den += w;
        }
        if (den <= 1e-6) continue;
        CAPTURE(i);
        REQUIRE((out.row(i).transpose().cast<double>() - num / den).cwiseAbs().maxCoeff() < 1e-4);
    }
}
