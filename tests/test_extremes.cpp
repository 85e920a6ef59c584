// Numerical extremes: a very sharp softmax, wide and long cells, a huge HRR
// trace, a rank-deficient probe design, and reads that are not finite or are
// huge. Whatever happens, a cell's CSV row holds finite numbers or is an error
// row (status=error, with a message) — never a silent nan or inf.
#include "core/rng.hpp"
#include "harness/eval/cell.hpp"
#include "harness/eval/probe.hpp"
#include "harness/results/csv.hpp"
#include "memories/registry.hpp"
#include "memories/softmax/softmax_cache.hpp"
#include "tasks/registry.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

using namespace memcap;

namespace {

CellSpec cell(const std::string& memory, const std::string& task, std::optional<std::int64_t> budget, int d,
              std::int64_t n, const std::string& readout = "auto", std::uint64_t seed = 0) {
    return make_cell(parse_memory_spec(memory), parse_task_spec(task), parse_readout_spec(readout), budget, d, n, seed);
}

/// No field of the cell's CSV rows reads nan or inf (in any spelling).
void require_no_silent_nonfinite(const CellSpec& c, const CellOutcome& o) {
    const std::string rows = cell_rows(cell_result(c, o, 0.0));
    INFO(rows);
    for (std::size_t start = 0, end; start < rows.size(); start = end + 1) {
        end = rows.find('\n', start);
        REQUIRE(end != std::string::npos);
        for (const auto& field : split_csv_line(rows.substr(start, end - start))) {
            if (field.find('=') != std::string::npos) continue;  // a spec: softmax:beta=inf names the hard limit
            std::string lower;
            for (char ch : field) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
            REQUIRE(lower.find("nan") == std::string::npos);
            REQUIRE(lower.find("inf") == std::string::npos);
        }
    }
}

/// A memory whose reads are `value` everywhere and whose state is `state_value`
/// (p floats): to feed the readouts what a broken backend would produce.
class Constant final : public Memory {
public:
    Constant(float value, std::int64_t p, float state_value)
        : value_(value), state_(Vec::Constant(p, state_value)) {}
    void reset() override {}
    void write(ConstVecRef, ConstVecRef) override {}
    void read(ConstVecRef, VecRef out) const override { out.setConstant(value_); }
    std::int64_t state_floats() const override { return state_.size(); }
    ConstStateView state() const override { return ConstStateView(state_.data(), state_.size()); }

private:
    float value_;
    Vec state_;
};

}  // namespace

TEST_CASE("softmax at beta = 1e4 reads finite values: the largest score is subtracted", "[extremes][softmax]") {
    MemoryShape shape;  // d = 64, natural budget
    SoftmaxCache m(shape, 1e4);
    RowMat keys = RowMat::Zero(8, 64), values = RowMat::Zero(8, 64);
    for (int i = 0; i < 8; ++i) {
        keys(i, i) = 1.0f;              // orthonormal keys
        values(i, 63 - i) = 1.0f + i;   // distinct values
    }
    m.write_batch(keys, values);
    SECTION("a stored key reads back its own value: the weights are a one-hot, not 0/0") {
        RowMat reads(8, 64);
        m.read_batch(keys, reads);
        REQUIRE(reads.allFinite());
        REQUIRE((reads - values).cwiseAbs().maxCoeff() <= 1e-6f);
    }
    SECTION("a query scaled by 1e3 (scores of 1e7) still gives finite weights summing to 1") {
        const Vec q = 1e3f * keys.row(3).transpose();
        const Vec w = m.weights(q);
        REQUIRE(w.allFinite());
        REQUIRE(w.sum() == Approx(1.0f).margin(1e-6));
        Vec out(64);
        m.read(q, out);
        REQUIRE(out.allFinite());
        REQUIRE((out - values.row(3).transpose()).cwiseAbs().maxCoeff() <= 1e-6f);
    }
    SECTION("a whole cell at beta = 1e4 is an ok row with finite numbers") {
        const auto c = cell("softmax:beta=10000", "assoc_recall", std::nullopt, 64, 256);
        const auto o = run_cell(c);
        REQUIRE(o.ok);
        REQUIRE(o.slots.at(0).correct == o.slots.at(0).queries);  // exact keys, one-hot weights: every read right
        require_no_silent_nonfinite(c, o);
    }
}

TEST_CASE("a cell at d = 4096 and n = 65536 runs", "[extremes][large][release_only]") {
    // One episode of 65536 unit keys and values of 4096 floats (about 3 GB with the
    // candidates); a two-pair FIFO cache keeps the memory side small.
    const auto c = cell("softmax", "assoc_recall:queries=2", 2 * (4096 + 4096), 4096, 65536, "native");
    const auto o = run_cell(c);
    INFO(o.message);
    REQUIRE(o.ok);
    REQUIRE(o.state_floats == 2 * (4096 + 4096));
    REQUIRE(o.slots.at(0).queries == 2);
    REQUIRE(std::isfinite(o.slots.at(0).target_dist_sum));
    require_no_silent_nonfinite(c, o);
}

TEST_CASE("HRR with a trace of D = 65536 floats", "[extremes][hrr]") {
    const auto c = cell("hrr", "assoc_recall:queries=64", 65536, 64, 64, "native");
    const auto o = run_cell(c);
    INFO(o.message);
    REQUIRE(o.ok);
    REQUIRE(o.state_floats == 65536);
    // 64 pairs in a 65536-float trace: crosstalk ~ sqrt(64/65536) per entry, far below
    // the distance between unit candidates, so every read must be right.
    REQUIRE(o.slots.at(0).correct == o.slots.at(0).queries);
    require_no_silent_nonfinite(c, o);
}

TEST_CASE("the probe solves a rank-deficient design to finite weights", "[extremes][probe]") {
    const auto task = make_task(parse_task_spec("assoc_recall:queries=4"));
    const TaskCell tc{8, 16, 0};
    const double ridge = GENERATE(0.0, 1e-6);
    CAPTURE(ridge);
    SECTION("a constant state: every state column equals the bias column") {
        Constant m(0.0f, 32, 1.0f);
        const auto o = probe_readout(m, *task, tc, ProbeOptions{50, ridge});
        INFO(o.message);
        REQUIRE(o.ok);
        REQUIRE(std::isfinite(o.slots.at(0).target_dist_sum));
    }
    SECTION("a zero state, wider than the training set (the dual solve)") {
        Constant m(0.0f, 600, 0.0f);
        const auto o = probe_readout(m, *task, tc, ProbeOptions{10, ridge});
        INFO(o.message);
        REQUIRE(o.ok);
        REQUIRE(std::isfinite(o.slots.at(0).target_dist_sum));
    }
    SECTION("a real memory whose state is shared by every episode: rotation with n = 1 and rho = 0") {
        const auto c = cell("rotation:rho=0", "assoc_recall:queries=4", 256, 16, 1, "probe:train=20,ridge=0");
        const auto o = run_cell(c);
        INFO(o.message);
        REQUIRE(o.ok);
        require_no_silent_nonfinite(c, o);
    }
}

TEST_CASE("a non-finite or huge read is an error row or finite numbers, never nan/inf in the CSV",
          "[extremes][csv]") {
    const auto task = make_task(parse_task_spec("assoc_recall"));
    const TaskCell tc{16, 8, 0};
    const auto c = cell("softmax", "assoc_recall", std::nullopt, 8, 16, "native");
    SECTION("nan and inf reads are error rows naming the problem") {
        const float bad = GENERATE(std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                                   -std::numeric_limits<float>::infinity());
        CAPTURE(bad);
        Constant m(bad, 4, 0.0f);
        const auto o = native_readout(m, *task, tc);
        REQUIRE_FALSE(o.ok);
        REQUIRE(o.message.find("non-finite read") != std::string::npos);
        const std::string rows = cell_rows(cell_result(c, o, 0.0));
        REQUIRE(rows.find(",error,non-finite read in episode 0\n") != std::string::npos);
        require_no_silent_nonfinite(c, o);
    }
    SECTION("huge but finite reads (1e30, FLT_MAX) give finite distances or an error row") {
        const float huge = GENERATE(1e30f, std::numeric_limits<float>::max());
        CAPTURE(huge);
        Constant m(huge, 4, 0.0f);
        const auto o = native_readout(m, *task, tc);
        INFO(o.message);
        if (o.ok) REQUIRE(std::isfinite(o.slots.at(0).target_dist_sum));
        else REQUIRE_FALSE(o.message.empty());
        require_no_silent_nonfinite(c, o);
    }
    SECTION("a non-finite state is a probe error row") {
        Constant m(0.0f, 4, std::numeric_limits<float>::infinity());
        const auto o = probe_readout(m, *task, tc, ProbeOptions{20, 1e-6});
        REQUIRE_FALSE(o.ok);
        REQUIRE(o.message.find("non-finite") != std::string::npos);
        require_no_silent_nonfinite(c, o);
    }
}

TEST_CASE("the probe's dual predicts the same through W = X^T A and through the kernel x X^T A", "[probe]") {
    // A state wider than the training set (P = 2049 features, R = 200 rows) with many
    // one-hot outputs (20 slots x 16 tokens), where the probe predicts through the
    // kernel. Forming W instead is the same linear map with other rounding: every
    // slot's count must agree up to a near-tie or two out of the 1000 test episodes.
    const auto task = make_task(parse_task_spec("copying"));
    const TaskCell tc{20, 64, 3};
    const MemoryShape shape(task->inputs(tc), 2048);  // copying: positional keys
    const auto spec = parse_memory_spec("rotation:rho=0.9");
    auto m1 = make_memory(spec, shape, 3), m2 = make_memory(spec, shape, 3);
    ProbeOptions kernel{200, 1e-6}, weights{200, 1e-6};
    kernel.dual_form = ProbeOptions::DualForm::kernel;
    weights.dual_form = ProbeOptions::DualForm::weights;
    const auto a = probe_readout(*m1, *task, tc, kernel), b = probe_readout(*m2, *task, tc, weights);
    REQUIRE(a.ok);
    REQUIRE(b.ok);
    REQUIRE(a.slots.size() == b.slots.size());
    std::int64_t total = 0;
    for (std::size_t i = 0; i < a.slots.size(); ++i) {
        CAPTURE(a.slots[i].slot);
        REQUIRE(a.slots[i].queries == b.slots[i].queries);
        REQUIRE(std::abs(a.slots[i].correct - b.slots[i].correct) <= 2);
        total += a.slots[i].correct;
    }
    REQUIRE(total > 20 * 1000 / 16);  // above chance overall: the fit is a real one
}

TEST_CASE("softmax: a read reuses the last weights only for the same keys and queries, bit for bit",
          "[softmax]") {
    // Each read of one cache object, which keeps a read's weights once the same read
    // comes twice running, against a fresh object (which computes them) given the same
    // pairs: the same bits whether keys, values, queries or the number of pairs change,
    // also where only an interior entry changes, and after the ring wraps.
    MemoryShape shape{16, 16, 32 * 5};  // 5 pairs
    Rng rng = Rng::stream("test_softmax_memo");
    const auto gaussian = [&](Eigen::Index rows) {
        RowMat m(rows, 16);
        rng.fill_normal(m);
        return m;
    };
    const RowMat ka = gaussian(5), kb = gaussian(5), va = gaussian(5), vb = gaussian(5), q = gaussian(7), q2 = gaussian(7);
    SoftmaxCache kept(shape, 2.0);
    const auto check = [&](const RowMat& keys, const RowMat& values, const RowMat& queries) {
        kept.reset();
        kept.write_batch(keys, values);
        SoftmaxCache fresh(shape, 2.0);
        fresh.write_batch(keys, values);
        RowMat a(queries.rows(), 16), b(queries.rows(), 16);
        kept.read_batch(queries, a);
        fresh.read_batch(queries, b);
        REQUIRE(std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0);
        return a;
    };
    const RowMat first = check(ka, va, q);
    REQUIRE((check(ka, va, q) - first).cwiseAbs().maxCoeff() == 0.0f);  // the same read again
    REQUIRE((check(ka, vb, q) - first).cwiseAbs().maxCoeff() > 0.0f);   // new values, the same weights
    check(kb, vb, q);                                                    // new keys
    check(kb, vb, q2);                                                   // new queries
    check(kb.topRows(3), vb.topRows(3), q2);                             // fewer pairs
    check(kb.topRows(3), vb.topRows(3), q2.topRows(2));                  // fewer queries
    RowMat inner = kb;  // keys differing only inside (the same corners: kept weights would be stale)
    inner(2, 7) += 0.5f;
    check(kb, vb, q2);
    check(kb, vb, q2);
    check(inner, vb, q2);
    RowMat inner_q = q2;
    inner_q(3, 5) -= 0.25f;
    check(inner, vb, q2);
    check(inner, vb, inner_q);
    RowMat wrap_keys(8, 16), wrap_values(8, 16);                         // 8 writes into 5 slots: the ring wraps
    wrap_keys << ka, kb.topRows(3);
    wrap_values << va, vb.topRows(3);
    check(wrap_keys, wrap_values, q);
    check(wrap_keys, wrap_values, q);
}

TEST_CASE("softmax: beta = inf is the limit of a large beta, exact and never NaN", "[extremes][softmax]") {
    // Well-separated keys (orthonormal, distinct values): β = 1e4 is already one-hot to float
    // precision, and β = ∞ gives the same reads.
    MemoryShape shape{16, 16, {}};
    RowMat keys = RowMat::Zero(8, 16), values(8, 16);
    Rng rng = Rng::stream("test_softmax_inf");
    rng.fill_normal(values);
    for (int i = 0; i < 8; ++i) keys(i, i) = 1.0f;
    RowMat queries = keys;
    RowMat noise(8, 16);
    rng.fill_normal(noise, 0.05);
    queries += noise;
    SoftmaxCache hard(shape, std::numeric_limits<double>::infinity()), sharp(shape, 1e4);
    hard.write_batch(keys, values);
    sharp.write_batch(keys, values);
    RowMat a(8, 16), b(8, 16);
    hard.read_batch(queries, a);
    sharp.read_batch(queries, b);
    REQUIRE(a.allFinite());
    REQUIRE((a - b).cwiseAbs().maxCoeff() <= 1e-6f);
    REQUIRE((a - values).cwiseAbs().maxCoeff() == 0.0f);  // exactly the nearest key's value
    SECTION("a query of norm 1e30 (scores beyond float) still reads the nearest key's value") {
        const Vec q = 1e30f * queries.row(5).transpose();
        Vec out(16);
        hard.read(q, out);
        REQUIRE(out.allFinite());
        REQUIRE((out - values.row(5).transpose()).cwiseAbs().maxCoeff() == 0.0f);
    }
    SECTION("keys tied at the top share the weight, equally at slope 0, the newest first at slope > 0") {
        RowMat twice(3, 16), vals(3, 16);
        twice.row(0) = keys.row(0), twice.row(1) = keys.row(1), twice.row(2) = keys.row(0);  // key 0 written again
        vals = values.topRows(3);
        SoftmaxCache flat(shape, std::numeric_limits<double>::infinity());
        flat.write_batch(twice, vals);
        const Vec q = keys.row(0).transpose();
        const Vec w = flat.weights(q);
        REQUIRE(w(0) == 0.5f);
        REQUIRE(w(1) == 0.0f);
        REQUIRE(w(2) == 0.5f);
        SoftmaxCache recent(shape, std::numeric_limits<double>::infinity(), std::nullopt, 1.0);
        recent.write_batch(twice, vals);
        const Vec r = recent.weights(q);  // softmax(−age) over the tied: ages 2 and 0
        REQUIRE(r(2) == Approx(1.0 / (1.0 + std::exp(-2.0))));
        REQUIRE(r(0) == Approx(std::exp(-2.0) / (1.0 + std::exp(-2.0))));
        REQUIRE(r(1) == 0.0f);
    }
    SECTION("a null slot: all weight on it below score 0, none above, a share at exactly 0") {
        SoftmaxCache null(shape, std::numeric_limits<double>::infinity(), 1.0);
        null.write_batch(keys, values);
        Vec out(16);
        null.read(keys.row(2).transpose(), out);
        REQUIRE((out - values.row(2).transpose()).cwiseAbs().maxCoeff() == 0.0f);
        null.read(-Vec::Ones(16), out);  // every score −1 < 0: the null slot takes everything
        REQUIRE(out.cwiseAbs().maxCoeff() == 0.0f);
        Vec q = Vec::Zero(16);
        q(15) = 1.0f;  // orthogonal to every key: all eight tie at 0 with the null slot's logit 1
        null.read(q, out);
        const Vec mean = values.colwise().sum().transpose() / (8.0f + std::exp(1.0f));
        REQUIRE((out - mean).cwiseAbs().maxCoeff() <= 1e-6f);
    }
    SECTION("a hidden pair gets weight 0; with no other pair the read is zero, not NaN") {
        RowMat out(1, 16);
        const std::vector<int> first{0};
        ReadOptions hide;
        hide.hidden = first;
        hard.read_batch(keys.topRows(1), out, hide);
        REQUIRE(out.allFinite());
        REQUIRE((out.row(0) - values.row(0)).cwiseAbs().maxCoeff() > 0.0f);  // the nearest allowed key's value instead
        SoftmaxCache single(shape, std::numeric_limits<double>::infinity());
        single.write_batch(keys.topRows(1), values.topRows(1));
        single.read_batch(keys.topRows(1), out, hide);
        REQUIRE(out.cwiseAbs().maxCoeff() == 0.0f);
    }
    SECTION("a whole cell at beta = inf is an ok row with finite numbers") {
        const auto c = cell("softmax:beta=inf", "assoc_recall", std::nullopt, 64, 256);
        const auto o = run_cell(c);
        REQUIRE(o.ok);
        REQUIRE(o.slots.at(0).correct == o.slots.at(0).queries);
        require_no_silent_nonfinite(c, o);
    }
}

TEST_CASE("softmax: a recency slope prefers the later copy of a key, and slope 0 is the plain cache", "[softmax]") {
    MemoryShape shape{16, 16, 32 * 6};  // 6 pairs: the ring wraps below
    Rng rng = Rng::stream("test_softmax_slope");
    RowMat keys(5, 16), values(5, 16);
    rng.fill_normal(keys);
    rng.fill_normal(values);
    normalise_rows(keys);
    keys.row(4) = keys.row(1);  // key 1 written again, with a fresh value
    const Vec q = keys.row(1).transpose();
    SoftmaxCache plain(shape, 16.0), zero(shape, 16.0, std::nullopt, 0.0), biased(shape, 16.0, std::nullopt, 0.1);
    for (auto* m : {&plain, &zero, &biased}) m->write_batch(keys, values);
    const Vec p = plain.weights(q), z = zero.weights(q), b = biased.weights(q);
    REQUIRE(std::memcmp(p.data(), z.data(), sizeof(float) * 5) == 0);  // slope 0: the same bits
    REQUIRE(p(4) == p(1));  // no positional term: the two copies weigh the same (their midpoint)
    REQUIRE(b(4) > b(1));
    REQUIRE(b(4) / b(1) == Approx(std::exp(0.1 * 3.0)));  // ages 0 and 3: e^{slope·3}
    Vec out(16);
    biased.read(q, out);  // nearer the later value by more than the tie rule's margin
    const float later = (out - values.row(4).transpose()).squaredNorm(), earlier = (out - values.row(1).transpose()).squaredNorm();
    REQUIRE(earlier - later > 0.01f * (values.row(4) - values.row(1)).squaredNorm());
    SECTION("ages follow the ring once it wraps; a read keeps no weights from another head") {
        SoftmaxCache kept(shape, 4.0, std::nullopt, 0.5);
        RowMat six(6, 16), vals(6, 16);
        rng.fill_normal(six);
        rng.fill_normal(vals);
        RowMat qs(3, 16);
        rng.fill_normal(qs);
        RowMat a(3, 16), b(3, 16);
        kept.write_batch(six, vals);
        kept.read_batch(qs, a);
        kept.read_batch(qs, a);  // kept now: weights at head 0
        kept.write(six.row(0).transpose(), vals.row(0).transpose());  // the same rows in the same slots, head 1
        REQUIRE(kept.age(0) == 0.0f);
        REQUIRE(kept.age(1) == 5.0f);
        kept.read_batch(qs, a);
        SoftmaxCache fresh(shape, 4.0, std::nullopt, 0.5);
        fresh.write_batch(six, vals);
        fresh.write(six.row(0).transpose(), vals.row(0).transpose());
        fresh.read_batch(qs, b);
        REQUIRE(std::memcmp(a.data(), b.data(), sizeof(float) * static_cast<std::size_t>(a.size())) == 0);
        SoftmaxCache unrotated(shape, 4.0, std::nullopt, 0.5);
        unrotated.write_batch(six, vals);
        unrotated.read_batch(qs, b);
        REQUIRE((a - b).cwiseAbs().maxCoeff() > 0.0f);  // the ages moved, so the weights did
    }
}

TEST_CASE("softmax at beta = inf: equal keys tie wherever they sit, eight scored at a time or alone", "[softmax]") {
    // The exact scores (a product of floats exact in double, summed in index order) are taken
    // eight keys at a time and the rest one by one: the same bits either way, so copies of a key in
    // a block of eight and among the rest tie at the top and share the weight equally.
    const int d = 24, n = 37;  // four blocks of eight, then five alone
    const MemoryShape shape{d, d, static_cast<std::int64_t>(n) * 2 * d};
    Rng rng = Rng::stream("test_softmax_exact_scores");
    RowMat keys(n, d), values(n, d);
    rng.fill_normal(keys), rng.fill_normal(values);
    keys.row(11) = keys.row(3), keys.row(34) = keys.row(3);  // copies in two blocks and among the rest
    keys.row(36) = keys.row(30);                             // the last block and the rest
    SoftmaxCache cache(shape, std::numeric_limits<double>::infinity());
    cache.write_batch(keys, values);
    for (const int k : {3, 30}) {
        CAPTURE(k);
        const Vec w = cache.weights(keys.row(k).transpose());
        const std::vector<int> copies = k == 3 ? std::vector<int>{3, 11, 34} : std::vector<int>{30, 36};
        for (int i = 0; i < n; ++i) {
            CAPTURE(i);
            const bool copy = std::find(copies.begin(), copies.end(), i) != copies.end();
            if (copy) CHECK(w(i) == w(copies.front()));
            else CHECK(w(i) == 0.0f);
        }
        CHECK(w(copies.front()) == Approx(1.0 / static_cast<double>(copies.size())));
    }
}
