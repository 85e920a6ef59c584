// The tasks where decays, overwrites and gates pay (tasks/stream_recall.hpp, and
// assoc_recall:passes): their episodes are what the header says; the sliding-window cache's
// horizon is exactly B / (d_k + d_v); the delta rule at β = 1 reads a rewritten key's latest
// value, and the tie rule scores the cache's midpoint as a miss; the task's gate (salient_recall:
// gate=all) skips the distractors for every memory, which then stores as many marked pairs as it
// stores without distractors; repeated delta passes are the Kaczmarz iteration that tends to least squares.
#include "core/error.hpp"
#include "support.hpp"

#include <Eigen/Cholesky>

#include <set>

using namespace memcap;
using memcap::test::measure;
using memcap::test::measure_slots;
using memcap::test::Run;

namespace {

std::unique_ptr<Task> task(const std::string& spec) { return make_task(parse_task_spec(spec)); }

// Two rows hold the same bits.
bool same(const RowMat& a, Eigen::Index i, const RowMat& b, Eigen::Index j) { return (a.row(i).array() == b.row(j).array()).all(); }

}  // namespace

TEST_CASE("recent_recall: ratio x n pairs, queries stratified over lag buckets of the last n", "[task][streams]") {
    const auto t = task("recent_recall:ratio=4,buckets=4,queries=40");
    const TaskCell c{10, 16, 3};
    const Episode e = t->episode(c, Split::Test, 0);
    REQUIRE(t->writes_per_episode(c) == 40);
    REQUIRE(e.keys.rows() == 40);
    REQUIRE(e.candidates.rows() == 40);
    REQUIRE(t->chance(c) == Approx(1.0 / 40));
    REQUIRE(e.target.size() == 40);
    std::map<int, int> per_slot;
    for (std::size_t i = 0; i < e.target.size(); ++i) {
        const int lag = 40 - e.target[i];
        const int k = static_cast<int>(i % 4), lo = k * 10 / 4, hi = (k + 1) * 10 / 4;  // buckets (0,2] (2,5] (5,7] (7,10]
        CAPTURE(i, lag);
        REQUIRE(lag > lo);
        REQUIRE(lag <= hi);
        REQUIRE(e.slot[i] == hi);
        ++per_slot[e.slot[i]];
        // noise-free: the query is its key
        REQUIRE((e.queries.row(static_cast<Eigen::Index>(i)) - e.keys.row(e.target[i])).norm() < 1e-6);
    }
    REQUIRE(per_slot == std::map<int, int>{{2, 10}, {5, 10}, {7, 10}, {10, 10}});
    // fewer lags than buckets: one bucket per lag
    const Episode f = task("recent_recall:buckets=8,queries=3")->episode(TaskCell{3, 16, 0}, Split::Test, 0);
    REQUIRE(f.slot == std::vector<int>{1, 2, 3});
    REQUIRE(f.target == std::vector<int>{23, 22, 21});
}

TEST_CASE("overwrite_recall:order=last: rewritten keys are copies of stored keys, written last, read at their latest value",
          "[task][streams]") {
    const auto t = task("overwrite_recall:rewrite=0.25,queries=64,order=last");
    REQUIRE(t->test_episodes(TaskCell{4, 8, 1}) == 1);  // the earlier task: one episode a seed
    const TaskCell c{16, 8, 1};
    const Episode e = t->episode(c, Split::Test, 2);
    REQUIRE(e.keys.rows() == 20);  // n + round(0.25 n)
    REQUIRE(e.candidates.rows() == 20);
    REQUIRE(e.tie_tolerance == 0.01f);
    std::set<int> rewritten;
    for (Eigen::Index r = 16; r < 20; ++r) {
        int original = -1;
        for (Eigen::Index i = 0; i < 16; ++i)
            if (same(e.keys, r, e.keys, i)) original = static_cast<int>(i);
        REQUIRE(original >= 0);
        REQUIRE(rewritten.insert(original).second);  // four distinct keys
        REQUIRE_FALSE(same(e.values, r, e.values, original));  // a fresh value
    }
    for (std::size_t q = 0; q < e.target.size(); ++q) {
        CAPTURE(q);
        REQUIRE(e.slot[q] == static_cast<int>(q % 2));
        const int target = e.target[q];
        if (e.slot[q] == 0) {
            REQUIRE(target < 16);
            REQUIRE(rewritten.count(target) == 0);
        } else {
            REQUIRE(target >= 16);
        }
        REQUIRE((e.queries.row(static_cast<Eigen::Index>(q)) - e.keys.row(target)).norm() < 1e-6);
    }
    // every key rewritten: every query asks a rewritten key
    const Episode all = task("overwrite_recall:rewrite=1,queries=6,order=last")->episode(TaskCell{3, 8, 0}, Split::Test, 0);
    REQUIRE(all.slot == std::vector<int>(6, 1));
}

TEST_CASE("overwrite_recall (interleaved): each rewrite after its key's first write, at a uniform place, every rewritten key read",
          "[task][streams]") {
    const auto t = task("overwrite_recall");  // rewrite = 0.25, order = interleaved, rewritten = 16
    // The copies of one key, in write order: its first write, then its rewrite.
    const auto copies = [](const Episode& e, Eigen::Index row) {
        std::vector<int> rows;
        for (Eigen::Index i = 0; i < e.keys.rows(); ++i)
            if (same(e.keys, i, e.keys, row)) rows.push_back(static_cast<int>(i));
        return rows;
    };
    SECTION("n = 16: four keys written twice, targets the later copy, untouched keys written after rewrites") {
        const TaskCell c{16, 8, 1};
        REQUIRE(t->test_episodes(c) == 4);  // r = 4 rewritten keys read per episode
        bool untouched_after_rewrite = false;
        for (std::int64_t index = 0; index < t->test_episodes(c); ++index) {
            const Episode e = t->episode(c, Split::Test, index);
            REQUIRE(e.keys.rows() == 20);
            REQUIRE(e.candidates.rows() == 20);
            REQUIRE(e.tie_tolerance == 0.01f);
            std::set<int> twice, firsts_after, read;
            int first_rewrite = 20;
            for (Eigen::Index i = 0; i < 20; ++i) {
                const auto rows = copies(e, i);
                REQUIRE(rows.size() <= 2);
                if (rows.size() == 2) {
                    twice.insert(rows[0]);
                    REQUIRE_FALSE(same(e.values, rows[0], e.values, rows[1]));  // a fresh value
                    first_rewrite = std::min(first_rewrite, rows[1]);
                }
            }
            REQUIRE(twice.size() == 4);
            for (Eigen::Index i = first_rewrite + 1; i < 20; ++i)
                if (copies(e, i).size() == 1) untouched_after_rewrite = true;
            for (std::size_t q = 0; q < e.target.size(); ++q) {
                CAPTURE(index, q);
                REQUIRE(e.slot[q] == static_cast<int>(q % 2));
                const auto rows = copies(e, e.target[q]);
                REQUIRE(rows.size() == (e.slot[q] == 0 ? 1u : 2u));
                REQUIRE(e.target[q] == rows.back());  // the latest value
                if (e.slot[q] == 1) read.insert(e.target[q]);
                REQUIRE((e.queries.row(static_cast<Eigen::Index>(q)) - e.keys.row(e.target[q])).norm() < 1e-6);
            }
            REQUIRE(read.size() == 4);  // every rewritten key read
        }
        REQUIRE(untouched_after_rewrite);  // recency is not the answer
    }
    SECTION("n = 4: one rewritten key an episode, 16 episodes a seed: >= 100 scored rewritten keys a cell of 10 seeds") {
        std::int64_t scored = 0;
        for (std::uint64_t seed = 0; seed < 10; ++seed) {
            const TaskCell c{4, 8, seed};
            REQUIRE(t->test_episodes(c) == 16);
            for (std::int64_t index = 0; index < t->test_episodes(c); ++index) {
                const Episode e = t->episode(c, Split::Test, index);
                std::set<int> read;
                for (std::size_t q = 0; q < e.target.size(); ++q)
                    if (e.slot[q] == 1) read.insert(e.target[q]);
                scored += static_cast<std::int64_t>(read.size());
            }
        }
        REQUIRE(scored >= 100);
    }
    SECTION("the place of a rewrite is uniform after its key's first write") {
        // n = 4, r = 1: key k's rewrite goes into one of the 4 − k gaps after it, each with
        // probability 1/(4 − k); so it is the last write with probability (1/4)(1/4 + 1/3 + 1/2 + 1)
        // = 25/48, and directly after its first write with the same probability.
        const TaskCell c{4, 8, 7};
        const int episodes = 4000;
        int last = 0, adjacent = 0;
        for (int index = 0; index < episodes; ++index) {
            const Episode e = t->episode(c, Split::Train, index);
            for (Eigen::Index i = 0; i < 5; ++i)
                if (const auto rows = copies(e, i); rows.size() == 2 && rows[0] == i) {
                    last += rows[1] == 4;
                    adjacent += rows[1] == rows[0] + 1;
                }
        }
        const double p = 25.0 / 48.0, se = std::sqrt(p * (1 - p) / episodes);
        REQUIRE(std::abs(last / double(episodes) - p) < 4 * se);
        REQUIRE(std::abs(adjacent / double(episodes) - p) < 4 * se);
    }
}

TEST_CASE("salient_recall: marked values are 0 on coordinate 0, distractors e0 + u, and only marked keys are asked", "[task][streams]") {
    const auto t = task("salient_recall:distractors=3,queries=50");
    const TaskCell c{12, 9, 4};
    // the gate is the task's (gate=none or all), never one memory's: no salience feature declared
    REQUIRE_FALSE(t->inputs(c).salience_feature);
    REQUIRE(t->writes_per_episode(c) == 48);
    const Episode e = t->episode(c, Split::Test, 0);
    REQUIRE(e.keys.rows() == 48);
    REQUIRE(e.candidates.rows() == 12);
    std::vector<int> marked;
    for (Eigen::Index i = 0; i < 48; ++i) {
        const float mark = e.values(i, 0);
        REQUIRE((mark == 0.0f || mark == 1.0f));
        REQUIRE(e.values.row(i).tail(8).norm() == Approx(1.0).margin(1e-5));
        if (mark == 0.0f) marked.push_back(static_cast<int>(i));
    }
    REQUIRE(marked.size() == 12);
    for (std::size_t j = 0; j < marked.size(); ++j) REQUIRE(same(e.candidates, static_cast<Eigen::Index>(j), e.values, marked[j]));
    for (std::size_t q = 0; q < e.target.size(); ++q)
        REQUIRE((e.queries.row(static_cast<Eigen::Index>(q)) - e.keys.row(marked[static_cast<std::size_t>(e.target[q])])).norm() < 1e-6);
    // gate=none is the default, left out of the canonical string; gate=all is the same episode
    // (paired: same pairs, positions, targets, noise) with only the marked pairs written, in order
    REQUIRE(parse_task_spec("salient_recall:gate=none").canonical() == parse_task_spec("salient_recall").canonical());
    REQUIRE(parse_task_spec("salient_recall:gate=all").canonical() ==
            "salient_recall:distractors=3,queries=32,noise=0,cosine=1,gate=all");
    const auto g = task("salient_recall:distractors=3,queries=50,gate=all");
    REQUIRE_FALSE(g->inputs(c).salience_feature);
    REQUIRE(g->writes_per_episode(c) == 12);
    REQUIRE(g->chance(c) == t->chance(c));
    const Episode f = g->episode(c, Split::Test, 0);
    REQUIRE(f.keys.rows() == 12);
    REQUIRE(f.values.rows() == 12);
    for (std::size_t j = 0; j < marked.size(); ++j) {
        REQUIRE(same(f.keys, static_cast<Eigen::Index>(j), e.keys, marked[j]));
        REQUIRE(same(f.values, static_cast<Eigen::Index>(j), e.values, marked[j]));
    }
    REQUIRE(f.candidates == e.candidates);
    REQUIRE(f.target == e.target);
    REQUIRE(f.queries == e.queries);
}

TEST_CASE("salient_recall:gate=all: every memory's state is its state after writing only the marked pairs, and with "
          "gate=none: a gated memory's step is 1 on every write",
          "[task][streams][conformance]") {
    const TaskCell c{24, 16, 3};
    const auto none = task("salient_recall:distractors=3"), all = task("salient_recall:distractors=3,gate=all");
    const Episode e = none->episode(c, Split::Test, 1), f = all->episode(c, Split::Test, 1);
    REQUIRE(e.keys.rows() == 96);
    // the marked pairs of the full stream, in order (value coordinate 0 is 0 exactly on them)
    std::vector<Eigen::Index> rows;
    for (Eigen::Index i = 0; i < e.values.rows(); ++i)
        if (e.values(i, 0) == 0.0f) rows.push_back(i);
    REQUIRE(rows.size() == 24);
    RowMat keys(24, c.d), values(24, c.d);
    for (Eigen::Index j = 0; j < 24; ++j) keys.row(j) = e.keys.row(rows[static_cast<std::size_t>(j)]), values.row(j) = e.values.row(rows[static_cast<std::size_t>(j)]);
    const auto state_after = [&](const std::string& memory, const Task& t, std::optional<std::int64_t> budget, const RowMat& k,
                                 const RowMat& v) {
        auto m = make_memory(parse_memory_spec(memory), MemoryShape(t.inputs(c), budget), 1);
        m->write_batch(k, v);
        return Vec(m->state());
    };
    // the cache (with a budget of 16 pairs: its FIFO then evicts only marked pairs), the grids,
    // HRR and the gated grids alike; all through write_batch, as the readouts write an episode
    for (const auto& [memory, budget] : std::vector<std::pair<std::string, std::optional<std::int64_t>>>{
             {"softmax", std::nullopt}, {"softmax", 512}, {"sliding_window", 512}, {"linear", std::nullopt},
             {"delta:beta=0.5", std::nullopt}, {"hrr", std::nullopt}, {"selective:rho=0.9", std::nullopt},
             {"gla:alpha=0.9", std::nullopt}, {"gated_deltanet:alpha=0.9,beta=0.5", std::nullopt},
             {"mesanet:gamma=0.99", std::nullopt}}) {
        CAPTURE(memory, budget.value_or(0));
        const Vec gated = state_after(memory, *all, budget, f.keys, f.values);
        REQUIRE(gated == state_after(memory, *all, budget, keys, values));
        // the distractors change the state when written (the gate is not a no-op)
        REQUIRE(gated != state_after(memory, *none, budget, e.keys, e.values));
    }
    // gate=none: no feature is declared, so a gated memory's own gate=salience takes step 1 on
    // every write (the distractors included): its state is the one with the memory's gate=none
    for (const std::string memory : {"selective:rho=0.9", "gla:alpha=0.9", "gated_deltanet:alpha=0.9,beta=0.5", "kda:alpha=0.9",
                                     "rwkv7:w=0.9", "mamba2:rho=0.9", "mesanet:gamma=0.99"}) {
        CAPTURE(memory);
        REQUIRE(state_after(memory, *none, std::nullopt, e.keys, e.values) ==
                state_after(memory + ",gate=none", *none, std::nullopt, e.keys, e.values));
    }
}

TEST_CASE("assoc_recall:passes=p writes the same n pairs p times in order, targets and candidates unchanged", "[task][streams]") {
    const TaskCell c{7, 16, 2};
    const Episode once = task("assoc_recall")->episode(c, Split::Test, 1);
    const Episode thrice = task("assoc_recall:passes=3")->episode(c, Split::Test, 1);
    REQUIRE(thrice.keys.rows() == 21);
    for (Eigen::Index p = 0; p < 3; ++p)
        for (Eigen::Index i = 0; i < 7; ++i) {
            REQUIRE(same(thrice.keys, p * 7 + i, once.keys, i));
            REQUIRE(same(thrice.values, p * 7 + i, once.values, i));
        }
    REQUIRE(thrice.target == once.target);
    REQUIRE(thrice.candidates == once.candidates);
    REQUIRE(thrice.queries == once.queries);
}

TEST_CASE("the stream tasks refuse bad settings with one line naming them", "[task][streams]") {
    REQUIRE_THROWS_WITH(parse_task_spec("recent_recall:ratio=0"), Catch::Contains("ratio"));
    REQUIRE_THROWS_WITH(parse_task_spec("recent_recall:buckets=-1"), Catch::Contains("buckets"));
    REQUIRE_THROWS_WITH(parse_task_spec("overwrite_recall:rewrite=0"), Catch::Contains("rewrite"));
    REQUIRE_THROWS_WITH(parse_task_spec("overwrite_recall:rewrite=nan"), Catch::Contains("rewrite"));
    REQUIRE_THROWS_WITH(parse_task_spec("overwrite_recall:order=first"), Catch::Contains("order=first is not one of interleaved, last"));
    REQUIRE_THROWS_WITH(parse_task_spec("overwrite_recall:rewritten=0"), Catch::Contains("rewritten"));
    REQUIRE_THROWS_WITH(parse_task_spec("salient_recall:distractors=-2"), Catch::Contains("distractors"));
    REQUIRE_THROWS_WITH(parse_task_spec("salient_recall:gate=salience"), Catch::Contains("gate=salience is not one of none, all"));
    REQUIRE_THROWS_WITH(parse_task_spec("assoc_recall:passes=0"), Catch::Contains("passes"));
    REQUIRE_THROWS_AS(task("salient_recall")->check(TaskCell{4, 1, 0}), UsageError);
    REQUIRE_THROWS_WITH(task("recent_recall:noise=0.1,cosine=0.7")->check(TaskCell{4, 8, 0}), Catch::Contains("both set"));
    REQUIRE_THROWS_WITH(task("assoc_recall:passes=2,vocab=8,keys=learned")->check(TaskCell{4, 8, 0}), Catch::Contains("passes"));
    REQUIRE_THROWS_WITH(task("assoc_recall:passes=2,control=structural_mask")->check(TaskCell{4, 8, 0}), Catch::Contains("passes"));
}

TEST_CASE("the sliding-window cache's horizon is exactly B / (d_k + d_v): every lag within it recalled, none beyond",
          "[task][streams][softmax]") {
    // a sharp softmax (one key dominates) and no query noise: the cache holds the last R pairs
    for (const auto& [budget, d] : {std::pair<std::int64_t, int>{1024, 32}, {4096, 16}}) {
        const std::int64_t rows = budget / (2 * d);  // 16 and 128
        const std::int64_t window = 2 * rows;
        CAPTURE(budget, d, rows);
        const auto slots = measure_slots(Run("softmax:beta=1000",
                                             "recent_recall:ratio=2,buckets=" + std::to_string(window) + ",queries=" +
                                                 std::to_string(4 * window),
                                             window, 3, budget, d));
        REQUIRE(static_cast<std::int64_t>(slots.size()) == window);
        std::int64_t horizon = 0;
        for (const auto& [lag, m] : slots) {
            CAPTURE(lag, m.mean);
            if (lag <= rows) REQUIRE(m.mean == 1.0);
            else REQUIRE(m.mean == 0.0);
            if (m.mean >= 0.9 && lag == horizon + 1) horizon = lag;
        }
        REQUIRE(horizon == rows);
    }
}

TEST_CASE("overwrites: the delta rule at beta = 1 reads a rewritten key's latest value, a sum and a midpoint are misses",
          "[task][streams][delta]") {
    for (const std::int64_t n : {8, 32}) {
        CAPTURE(n);
        // At β = 1 and unit keys a write sets S φ(k) = v exactly; the later writes' crosstalk at
        // d = 64 is small beside it.
        const auto delta = measure_slots(Run("delta:beta=1", "overwrite_recall", n, 20));
        REQUIRE(delta.at(1).mean >= 0.99);
        REQUIRE(delta.at(0).mean >= 0.99);
        // The grid adds the two values: equidistant from both, so right only as often as crosstalk
        // breaks the tie towards the latest one (about half): far below the delta rule.
        const auto linear = measure_slots(Run("linear", "overwrite_recall", n, 20));
        REQUIRE(linear.at(0).mean >= 0.99);
        REQUIRE(linear.at(1).mean + 3.0 * linear.at(1).se() < delta.at(1).mean);
        REQUIRE(linear.at(1).mean < 0.5 + 3.0 * linear.at(1).se());
        // The cache without a budget holds both copies under one key and returns their midpoint:
        // the tie rule scores it a miss every time (rounding alone would call about half right).
        const auto cache = measure_slots(Run("softmax:beta=10000", "overwrite_recall", n, 20));
        REQUIRE(cache.at(0).mean == 1.0);
        REQUIRE(cache.at(1).mean == 0.0);
        // A recency slope breaks that tie towards the later copy, as positional attention does;
        // at β = ∞ only the two copies tie, so every read is right.
        const auto recent = measure_slots(Run("softmax:beta=inf,slope=1", "overwrite_recall", n, 20));
        REQUIRE(recent.at(0).mean == 1.0);
        REQUIRE(recent.at(1).mean == 1.0);
        REQUIRE(measure_slots(Run("softmax:beta=inf", "overwrite_recall", n, 20)).at(1).mean == 0.0);
    }
}

TEST_CASE("salient pairs: the task's gate skips the distractors for every memory, and each then reads as on associative "
          "recall of the marked pairs alone", "[task][streams][selective]") {
    // 4096 floats, d = 32: the grid is 32 x 128, the cache 64 pairs. Three distractors per marked pair.
    for (const std::int64_t n : {32, 64}) {
        CAPTURE(n);
        for (const std::string memory : {"linear", "softmax:beta=1000", "selective:rho=1"}) {
            CAPTURE(memory);
            const auto gated = measure(Run(memory, "salient_recall:gate=all", n, 20, 4096, 32));
            const auto plain = measure(Run(memory, "salient_recall", n, 20, 4096, 32));
            CAPTURE(gated.mean, gated.se(), plain.mean, plain.se());
            // the grid pays the distractors' crosstalk, the cache evicts marked pairs for them
            REQUIRE(gated.mean - 3.0 * gated.se() > plain.mean + 3.0 * plain.se());  // intervals apart
            // what the gate buys is the distractors' share: gated, a memory reads as it does with
            // only the n marked pairs written (associative recall at n), within sampling error
            const auto alone = measure(Run(memory, "assoc_recall", n, 20, 4096, 32));
            CAPTURE(alone.mean, alone.se());
            REQUIRE(std::abs(gated.mean - alone.mean) <= 3.0 * std::sqrt(gated.se() * gated.se() + alone.se() * alone.se()) + 1e-12);
        }
        // no memory reads the mark itself: the gated grid's own gate takes step 1 in both frames
        for (const std::string task : {"salient_recall", "salient_recall:gate=all"}) {
            CAPTURE(task);
            const auto own = measure(Run("selective:rho=1", task, n, 20, 4096, 32));
            const auto ablated = measure(Run("selective:rho=1,gate=none", task, n, 20, 4096, 32));
            REQUIRE(own.mean == Approx(ablated.mean).margin(1e-12));
        }
    }
}

TEST_CASE("passes: p delta sweeps at beta = 1 are cyclic Kaczmarz, tending to the least-squares (minimum-norm) memory",
          "[task][streams][delta]") {
    // n = 48 unit keys in d = 64 (natural size: φ is the identity): S K = V has exact solutions, and
    // Kaczmarz from S = 0 converges to the minimum-norm one, S* = Vᵀ (K Kᵀ)⁻¹ K, geometrically.
    const int n = 48, d = 64;
    const auto t = task("assoc_recall:queries=48");
    const Episode e = t->episode(TaskCell{n, d, 5}, Split::Test, 0);
    const Eigen::MatrixXd k = e.keys.cast<double>(), v = e.values.cast<double>();
    const Eigen::MatrixXd gram = k * k.transpose();
    const Eigen::MatrixXd star = v.transpose() * gram.llt().solve(k);  // d_v x d_k
    const Eigen::MatrixXd want = e.queries.cast<double>() * star.transpose();
    double last = 1e300;
    for (const int passes : {1, 2, 4, 8, 16, 64, 256}) {
        auto m = make_memory(parse_memory_spec("delta:beta=1"), MemoryShape(t->inputs(TaskCell{n, d, 5}), std::nullopt), 5);
        for (int p = 0; p < passes; ++p) m->write_batch(e.keys, e.values);
        RowMat reads(e.queries.rows(), d);
        m->read_batch(e.queries, reads, ReadOptions{});
        const double err = (reads.cast<double>() - want).norm() / want.norm();
        CAPTURE(passes, err);
        REQUIRE(err < last);  // every sweep moves toward least squares
        last = err;
    }
    REQUIRE(last < 1e-3);
    // the task writes the same sweeps: passes = 16 reads what 16 write_batch calls read
    const auto by_task = measure(Run("delta:beta=1", "assoc_recall:passes=16", 64, 10));
    REQUIRE(by_task.mean >= 0.99);
}
