// Associative recall over a vocabulary (assoc_recall:vocab=V, keys=random|frame|learned):
// the tight frame's geometry, the episodes' symbols, and the key training's isolation
// from the scored episodes.
#include "harness/eval/key_training.hpp"
#include "support.hpp"
#include "memories/theory.hpp"
#include "tasks/assoc_recall.hpp"

#include <set>

using namespace memcap;
using memcap::test::measure;
using memcap::test::Run;

TEST_CASE("tight_frame: unit rows, frame operator (V/d) I, frame potential at the Welch bound", "[learned_keys]") {
    const auto [count, d] = GENERATE(table<std::int64_t, int>({{8, 16}, {16, 16}, {17, 16}, {100, 16}, {256, 64}, {33, 7}}));
    CAPTURE(count, d);
    const Eigen::MatrixXd f = tight_frame(count, d).cast<double>();
    // float32 entries: each off by at most 2^-24 of 1, so sums of `count` products by count × 2^-23
    const double tol = static_cast<double>(count) * std::ldexp(1.0, -22);
    for (Eigen::Index i = 0; i < f.rows(); ++i) REQUIRE(std::abs(f.row(i).norm() - 1.0) <= 1e-6);
    const Eigen::MatrixXd s = f.transpose() * f;
    const double expect = count <= d ? 1.0 : static_cast<double>(count) / d;
    if (count <= d) {  // orthonormal rows: F Fᵀ = I
        REQUIRE(((f * f.transpose()) - Eigen::MatrixXd::Identity(count, count)).cwiseAbs().maxCoeff() <= tol);
    } else {
        REQUIRE((s - expect * Eigen::MatrixXd::Identity(d, d)).cwiseAbs().maxCoeff() <= tol);
        const Eigen::MatrixXd g = f * f.transpose();
        const double potential = g.cwiseAbs2().sum() - static_cast<double>(count);  // Σ_{i≠j} (f_i·f_j)²
        const double welch = static_cast<double>(count) * count / d - static_cast<double>(count);
        REQUIRE(std::abs(potential - welch) <= tol * count);
    }
}

TEST_CASE("vocab=V: an episode's keys are n distinct symbols, each its table row", "[learned_keys]") {
    const auto task = make_task(parse_task_spec("assoc_recall:vocab=40"));
    const TaskCell cell{24, 16, 3};
    const Episode a = task->episode(cell, Split::Test, 0), b = task->episode(cell, Split::Train, 0);
    REQUIRE(a.key_symbol.size() == 24);
    REQUIRE(std::set<int>(a.key_symbol.begin(), a.key_symbol.end()).size() == 24);
    for (int s : a.key_symbol) REQUIRE((s >= 0 && s < 40));
    REQUIRE(a.key_symbol != b.key_symbol);  // splits draw their own symbols
    RowMat table = task->initial_key_table(cell);
    normalise_rows(table);
    for (std::size_t i = 0; i < a.key_symbol.size(); ++i) {  // the same table in both splits
        REQUIRE(a.keys.row(static_cast<Eigen::Index>(i)) == table.row(a.key_symbol[i]));
        REQUIRE(b.keys.row(static_cast<Eigen::Index>(i)) == table.row(b.key_symbol[i]));
    }
    // the values are the fresh-key task's (vocab only changes where the keys come from)
    const Episode fresh = make_task(parse_task_spec("assoc_recall"))->episode(cell, Split::Test, 0);
    REQUIRE_FALSE(fresh.values == a.values);  // the stream also drew the keys first there
    REQUIRE(fresh.target == a.target);
}

namespace {

/// Passes everything to a learned assoc_recall and records which splits were filled.
class SpyTask final : public Task {
public:
    explicit SpyTask(const std::string& spec) : Task(parse_task_spec(spec)), inner_(make_task(spec_of(spec))) {}
    double chance(const TaskCell& c) const override { return inner_->chance(c); }
    std::int64_t peak_bytes(const TaskCell& c) const override { return inner_->peak_bytes(c); }
    std::int64_t queries_per_episode(const TaskCell& c) const override { return inner_->queries_per_episode(c); }
    std::optional<KeyTraining> key_training() const override { return inner_->key_training(); }
    RowMat initial_key_table(const TaskCell& c) const override { return inner_->initial_key_table(c); }
    void set_key_table(const TaskCell& c, const RowMat& t) override { inner_->set_key_table(c, t); }
    mutable std::set<std::pair<int, std::int64_t>> filled;  // (split, index)

protected:
    void fill(const TaskCell& c, Split split, std::int64_t index, std::uint64_t, Episode& out) const override {
        filled.insert({static_cast<int>(split), index});
        inner_->fill_episode(c, split, index, out);
    }

private:
    static Spec spec_of(const std::string& s) { return parse_task_spec(s); }
    std::unique_ptr<Task> inner_;
};

}  // namespace

TEST_CASE("key training reads training episodes only, the scored episodes play no part", "[learned_keys]") {
    const std::string spec = "assoc_recall:vocab=32,keys=learned,steps=40";
    const TaskCell cell{16, 16, 5};
    auto train = [&](const std::string& memory) {
        SpyTask task(spec);
        auto mem = make_memory(parse_memory_spec(memory), MemoryShape(16, 16), cell.seed);
        TrainedKeys t = train_keys(*mem, task, cell);
        REQUIRE(t.ok);
        std::set<std::pair<int, std::int64_t>> expect;
        for (std::int64_t i = 0; i < 40; ++i) expect.insert({static_cast<int>(Split::Train), i});
        REQUIRE(task.filled == expect);  // steps 0..39 read training episodes 0..39, and nothing else
        return t;
    };
    for (const std::string memory : {"linear", "softmax", "delta", "selective", "hrr"}) {
        CAPTURE(memory);
        const TrainedKeys a = train(memory), b = train(memory);
        REQUIRE(a.table == b.table);  // deterministic
        REQUIRE_FALSE(a.table == make_task(parse_task_spec(spec))->initial_key_table(cell));  // it moved
    }
    // Scoring after training (a test episode drawn from the trained table) leaves the
    // table as trained: a second training of the same cell gives the same bits.
    auto mem = make_memory(parse_memory_spec("linear"), MemoryShape(16, 16), cell.seed);
    auto t1 = make_task(parse_task_spec(spec));
    const RowMat before = train_keys(*mem, *t1, cell).table;
    t1->episode(cell, Split::Test, 0);
    auto t2 = make_task(parse_task_spec(spec));
    REQUIRE(train_keys(*mem, *t2, cell).table == before);
    // and another seed (a tuning seed, or another scored one) trains its own table
    REQUIRE_FALSE(train_keys(*mem, *t2, TaskCell{cell.n, cell.d, cell.seed + 1}).table == before);
}

TEST_CASE("learned keys raise the grid above random keys, the frame at V = n <= d is exact", "[learned_keys]") {
    // d = 16, n = V = 48: three times d pairs in a 16 × 16 grid, where random keys are far
    // from exact. Verdict from sampling error: the difference of the means exceeds three
    // standard errors of the difference (seeds' spread with the binomial floor).
    const auto random = measure(Run{"linear", "assoc_recall:vocab=48,keys=random", 48, 10, std::nullopt, 16});
    const auto learned = measure(Run{"linear", "assoc_recall:vocab=48,keys=learned,steps=300", 48, 10, std::nullopt, 16});
    CAPTURE(random.mean, learned.mean);
    REQUIRE(learned.mean - random.mean > 3.0 * std::sqrt(random.se() * random.se() + learned.se() * learned.se()));
    const auto frame = measure(Run{"linear", "assoc_recall:vocab=16,keys=frame", 16, 5, std::nullopt, 16});
    REQUIRE(frame.mean == 1.0);
}

TEST_CASE("keyset theory: crosstalk of random keys and of a tight frame, exact recall for V <= d", "[learned_keys][theory]") {
    REQUIRE(theory::keyset_crosstalk(256, 64, 0, false) == Approx(255.0 / 64));
    REQUIRE(theory::keyset_crosstalk(256, 64, 256, true) == Approx(255.0 * 3.0 / 255.0));  // (n − d)/d at V = n
    REQUIRE(theory::keyset_crosstalk(32, 64, 64, true) == 0.0);
    REQUIRE(theory::keyset_grid_recall(64, 64, 0.0) == 1.0);
    // less crosstalk reads better; the frame's model at V = n sits above random keys'
    REQUIRE(theory::keyset_grid_recall(256, 64, theory::keyset_crosstalk(256, 64, 256, true)) >
            theory::keyset_grid_recall(256, 64, theory::keyset_crosstalk(256, 64, 0, false)) + 0.05);
    // noise costs: the same key set with σ = 0.12 reads lower
    REQUIRE(theory::keyset_grid_recall(128, 64, 127.0 / 64, 0.12) < theory::keyset_grid_recall(128, 64, 127.0 / 64));
}

TEST_CASE("a non-finite loss while training the keys is a measured failure of the cell", "[learned_keys]") {
    // temp = 1e-300: the logits overflow to infinity and the loss is NaN at the first step
    const CellResult r = run_cell(make_cell(parse_memory_spec("linear"),
                                            parse_task_spec("assoc_recall:vocab=16,keys=learned,temp=1e-300"),
                                            parse_readout_spec("native"), std::nullopt, 8, 8, 0));
    REQUIRE_FALSE(r.ok);
    REQUIRE(r.message.find("non-finite") != std::string::npos);
    REQUIRE(r.message.find("at step 0") != std::string::npos);
}
