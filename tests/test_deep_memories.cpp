// Memories that are models trained at test time (ttt_linear, ttt_mlp, titans; the class
// memories/deep/online_mlp.hpp): TTT-Linear at b = 1 is the delta rule at beta = 2 eta; each
// update is the published one, checked against the recurrence computed in double with
// gradients by finite differences (independent of the memory's backward pass); mini-batches
// give the same state written in one call or one pair at a time; the sizing rule; a diverging
// learning rate is an error row naming the write. (The contract every backend honours is
// tests/test_conformance.cpp.)
#include "core/rng.hpp"
#include "harness/eval/cell.hpp"
#include "harness/eval/readout.hpp"
#include "memories/deep/online_mlp.hpp"
#include "memories/delta/delta_grid.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

using namespace memcap;

namespace {

RowMat unit_codes(int n, int d, const char* tag) {
    Rng rng = Rng::stream("deep_memories", tag, n, d);
    RowMat x(n, d);
    rng.fill_normal(x);
    normalise_rows(x);
    return x;
}

double relative(const RowMat& a, const RowMat& b) { return (a - b).norm() / std::max(1e-30f, b.norm()); }

// ---- The reference: the recurrence of online_mlp.hpp in double, gradients by central finite
// differences of the loss |f(k) - v|^2, f an MLP with GELU between layers.
using Mat = Eigen::MatrixXd;
using DVec = Eigen::VectorXd;

double gelu(double z) { return 0.5 * z * (1.0 + std::erf(z / std::sqrt(2.0))); }

/// The input of layer `upto` (x for 0); f(x) for upto = depth.
DVec mlp(const std::vector<Mat>& w, const DVec& x, std::size_t upto) {
    DVec a = x;
    for (std::size_t l = 0; l < upto; ++l) {
        a = w[l] * a;
        if (l + 1 < w.size()) a = a.unaryExpr([](double z) { return gelu(z); });
    }
    return a;
}
DVec mlp(const std::vector<Mat>& w, const DVec& x) { return mlp(w, x, w.size()); }

std::vector<Mat> fd_gradient(const std::vector<Mat>& w, const DVec& k, const DVec& v) {
    std::vector<Mat> g;
    const double h = 1e-6;
    for (std::size_t l = 0; l < w.size(); ++l) {
        g.push_back(Mat::Zero(w[l].rows(), w[l].cols()));
        for (Eigen::Index i = 0; i < w[l].size(); ++i) {
            std::vector<Mat> up = w, down = w;
            up[l].data()[i] += h, down[l].data()[i] -= h;
            g[l].data()[i] = ((mlp(up, k) - v).squaredNorm() - (mlp(down, k) - v).squaredNorm()) / (2 * h);
        }
    }
    return g;
}

struct Reference {
    std::vector<Mat> w, s;  // weights and momentum
    double lr, mu, alpha;
    int batch;
    std::vector<std::pair<DVec, DVec>> pending;

    // The pairs of one mini-batch, gradients at the weights it starts from (a prefix of a batch
    // is what a read sees mid-batch).
    static void apply(std::vector<Mat>& w, std::vector<Mat>& s, const std::vector<std::pair<DVec, DVec>>& pairs,
                      double lr, double mu, double alpha) {
        const std::vector<Mat> start = w;
        for (const auto& [k, v] : pairs) {
            const std::vector<Mat> g = fd_gradient(start, k, v);
            // the token's rate: lr / |a|^2, a the last layer's input at the batch's start
            const double theta = lr / mlp(start, k, start.size() - 1).squaredNorm();
            for (std::size_t l = 0; l < w.size(); ++l) {
                s[l] = mu * s[l] - theta * g[l];
                w[l] = (1 - alpha) * w[l] + s[l];
            }
        }
    }
    void write(const DVec& k, const DVec& v) {
        pending.emplace_back(k.normalized(), v);
        if (static_cast<int>(pending.size()) == batch) apply(w, s, pending, lr, mu, alpha), pending.clear();
    }
    DVec read(const DVec& q) const {
        std::vector<Mat> ww = w, ss = s;
        apply(ww, ss, pending, lr, mu, alpha);
        return mlp(ww, q.normalized());
    }
};

/// The reference started from the memory's own initial weights (its state after reset).
Reference reference_of(const Memory& m, const OnlineMlp::Dims& dims, const OnlineMlp::Settings& st) {
    Reference r{{}, {}, st.lr, st.momentum, st.forget, st.batch, {}};
    const Vec state = m.state();
    std::int64_t at = 0;
    for (int l = 0; l < dims.depth; ++l) {
        Mat w(dims.rows(l), dims.cols(l));
        for (Eigen::Index i = 0; i < w.rows(); ++i)
            for (Eigen::Index j = 0; j < w.cols(); ++j) w(i, j) = state[at + i * w.cols() + j];
        at += w.size();
        r.w.push_back(w);
        r.s.push_back(Mat::Zero(w.rows(), w.cols()));
    }
    return r;
}

}  // namespace

TEST_CASE("TTT-Linear with one-pair batches is the delta rule at beta = 2 eta", "[memory][deep]") {
    const int d = 64, n = 128;
    const RowMat keys = unit_codes(n, d, "keys"), values = unit_codes(n, d, "values"), queries = unit_codes(n, d, "keys");
    for (const double eta : {0.05, 0.25, 0.5}) {
        for (const std::optional<std::int64_t> budget :
             {std::optional<std::int64_t>(), std::optional<std::int64_t>(1024), std::optional<std::int64_t>(4096),
              std::optional<std::int64_t>(16384)}) {
            CAPTURE(eta, budget.value_or(-1));
            const MemoryShape shape(d, d, budget);
            Rng r1 = Rng::stream("deep_memories", "phi"), r2 = Rng::stream("deep_memories", "phi");
            DeltaGrid delta(shape, 2 * eta, "proj", 1, r1);  // the same stream draws the same projection
            OnlineMlp::Settings st;
            st.lr = eta;
            OnlineMlp ttt(shape, OnlineMlp::size(shape, 1, false, 1), st, r2);
            REQUIRE(ttt.state_floats() == delta.state_floats());
            delta.write_batch(keys, values);
            ttt.write_batch(keys, values);
            RowMat a(n, d), b(n, d);
            delta.read_batch(queries, a);
            ttt.read_batch(queries, b);
            REQUIRE(relative(b, a) < 1e-5);
            REQUIRE((Vec(ttt.state()) - Vec(delta.state())).norm() <= 1e-5 * Vec(delta.state()).norm());
        }
    }
    SECTION("through the registry: ttt_linear:lr=eta and delta:beta=2eta at the natural size (phi the identity)") {
        const MemoryShape shape(d, d);
        auto ttt = make_memory(parse_memory_spec("ttt_linear:lr=0.25"), shape, 3);
        auto delta = make_memory(parse_memory_spec("delta:beta=0.5"), shape, 3);
        ttt->write_batch(keys, values), delta->write_batch(keys, values);
        RowMat a(n, d), b(n, d);
        delta->read_batch(queries, a), ttt->read_batch(queries, b);
        REQUIRE(relative(b, a) < 1e-5);
    }
    SECTION("s steps per one-pair batch are one delta step at beta = 1 - (1 - 2 eta)^s") {
        const MemoryShape shape(d, d);
        auto ttt = make_memory(parse_memory_spec("ttt_linear:lr=0.25,steps=2"), shape, 3);
        auto delta = make_memory(parse_memory_spec("delta:beta=0.75"), shape, 3);
        ttt->write_batch(keys, values), delta->write_batch(keys, values);
        RowMat a(n, d), b(n, d);
        delta->read_batch(queries, a), ttt->read_batch(queries, b);
        REQUIRE(relative(b, a) < 1e-5);
    }
}

TEST_CASE("TTT-Linear with one batch of every pair is the linear grid scaled by 2 eta", "[memory][deep]") {
    const int d = 16, n = 24;
    const RowMat keys = unit_codes(n, d, "keys"), values = unit_codes(n, d, "values");
    auto m = make_memory(parse_memory_spec("ttt_linear:lr=0.1,batch=24"), MemoryShape(d, d, 16 * 16 + 23 * 32), 1);
    m->write_batch(keys, values);
    const RowMat w = 0.2f * values.transpose() * keys;  // 2η Σ v kᵀ from W = 0
    const Vec s = m->state();
    REQUIRE((s.head(d * d) - Eigen::Map<const Vec>(w.data(), d * d)).norm() < 1e-5 * w.norm());
}

TEST_CASE("the online networks' updates are the published ones", "[memory][deep]") {
    const int d = 6, n = 7;
    const RowMat keys = unit_codes(n, d, "keys") * 1.7f, values = unit_codes(n, d, "values");
    struct Case {
        const char* what;
        int depth;
        bool momentum;
        OnlineMlp::Settings st;
    };
    std::vector<Case> cases;
    {
        OnlineMlp::Settings st;
        st.lr = 0.2;
        cases.push_back({"TTT-MLP, one pair a step", 2, false, st});
        st.batch = 3;
        cases.push_back({"TTT-MLP, mini-batches of 3 (two complete, one pair pending)", 2, false, st});
        st.batch = 1, st.momentum = 0.5, st.forget = 0.1;
        cases.push_back({"Titans: S = mu S - theta grad, M = (1 - alpha) M + S", 2, true, st});
        st.batch = 3;
        cases.push_back({"Titans, chunks of 3 (gradients at the chunk's start)", 2, true, st});
        st.batch = 2, st.momentum = 0.9, st.forget = 0.0;
        cases.push_back({"Titans at depth 3", 3, true, st});
    }
    for (const Case& c : cases) {
        CAPTURE(c.what);
        const MemoryShape shape(d, d, 600);
        const OnlineMlp::Dims dims = OnlineMlp::size(shape, c.depth, c.momentum, c.st.batch);
        REQUIRE(dims.state_floats() <= 600);
        Rng rng = Rng::stream("deep_memories", "weights");
        OnlineMlp m(shape, dims, c.st, rng);
        Reference ref = reference_of(m, dims, c.st);
        for (int t = 0; t < n; ++t) {
            m.write(keys.row(t).transpose(), values.row(t).transpose());
            ref.write(keys.row(t).transpose().cast<double>(), values.row(t).transpose().cast<double>());
            for (int q = 0; q <= t; ++q) {  // every read, including those inside an unfinished batch
                Vec got(d);
                m.read(keys.row(q).transpose(), got);
                const DVec want = ref.read(keys.row(q).transpose().cast<double>());
                CAPTURE(t, q);
                REQUIRE((got.cast<double>() - want).norm() <= 1e-4 * std::max(1.0, want.norm()));
            }
        }
    }
}

TEST_CASE("a mini-batch memory written in one call equals one written a pair at a time", "[memory][deep]") {
    const int d = 16, n = 23;
    const RowMat keys = unit_codes(n, d, "keys"), values = unit_codes(n, d, "values");
    for (const char* spec : {"ttt_linear:batch=4,steps=2", "ttt_mlp:batch=5,lr=0.1", "titans:batch=4,depth=3"}) {
        CAPTURE(spec);
        const Spec s = parse_memory_spec(spec);
        auto one = make_memory(s, MemoryShape(d, d, 2048), 2), two = make_memory(s, MemoryShape(d, d, 2048), 2);
        one->write_batch(keys.topRows(9), values.topRows(9));
        one->write_batch(keys.bottomRows(n - 9), values.bottomRows(n - 9));
        for (int t = 0; t < n; ++t) two->write(keys.row(t).transpose(), values.row(t).transpose());
        REQUIRE((Vec(one->state()) - Vec(two->state())).cwiseAbs().maxCoeff() < 1e-5f);
        RowMat a(n, d), b(n, d);
        one->read_batch(keys, a), two->read_batch(keys, b);
        REQUIRE((a - b).cwiseAbs().maxCoeff() < 1e-5f);
    }
}

TEST_CASE("the deep memories' sizing: every weight, the momentum and the pending batch are state", "[memory][deep][sizing]") {
    const MemoryShape shape(64, 64, 4096);
    auto dims = [&](const char* spec) { return memory_size(parse_memory_spec(spec), shape); };
    REQUIRE(dims("ttt_mlp").dim("hidden") == 32);                 // 32 · (64 + 64) = 4096
    REQUIRE(dims("titans").dim("hidden") == 16);                  // weights and momentum: 2 · 16 · 128
    REQUIRE(dims("titans:depth=3").dim("hidden") == 14);          // 2 (128 h + h²) ≤ 4096
    REQUIRE(dims("ttt_mlp:batch=4").dim("hidden") == 29);         // 3 pending pairs take 384 floats
    REQUIRE(dims("ttt_linear").dim("d_phi") == 64);               // as delta
    REQUIRE(dims("ttt_linear:batch=16").dim("d_phi") == 34);      // (4096 − 15 · 128) / 64
    REQUIRE(dims("titans").param_floats == 16 * 128);             // the initial weights
    REQUIRE(find_memory("titans").min_budget(parse_memory_spec("titans"), shape) == 256);
    REQUIRE(find_memory("ttt_mlp").min_budget(parse_memory_spec("ttt_mlp:batch=2"), shape) == 128 + 128);
    for (const char* spec : {"ttt_linear", "ttt_mlp", "titans", "titans:depth=4,batch=3"})
        for (const std::int64_t budget : {600, 1024, 4097}) {
            CAPTURE(spec, budget);
            REQUIRE(memory_size(parse_memory_spec(spec), MemoryShape(64, 64, budget)).state_floats <= budget);
        }
}

TEST_CASE("a diverging inner learning rate is an error row naming the write", "[memory][deep]") {
    const CellSpec cell = make_cell(parse_memory_spec("titans:lr=1,momentum=0.9"), parse_task_spec("assoc_recall"),
                                    parse_readout_spec("auto"), 4096, 64, 256, 0);
    const CellResult r = run_cell(cell);
    CAPTURE(r.message);
    REQUIRE_FALSE(r.ok);
    REQUIRE_THAT(r.message, Catch::Contains("episode 0: non-finite weights after write"));
    // heavy-ball momentum at the largest rate diverges (lr / (1 - mu) = 10); without it the same memory reads
    const CellResult fine = run_cell(make_cell(parse_memory_spec("titans:lr=1,momentum=0"), parse_task_spec("assoc_recall"),
                                               parse_readout_spec("auto"), 4096, 64, 256, 0));
    REQUIRE(fine.ok);
}
