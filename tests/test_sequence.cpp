// Essay 004 Part 1 (lag recall, copying) and selective copying (Mamba §3.1).
//
// The essay fits its readout on 2000 sequences and scores it on 1000, for one
// rotation and one set of codes: its numbers carry the spread of one seed, so
// they are compared with published_seeds = 1 (tests/support.hpp). The essay's
// reading: D = 64, 16 words, T = 80, s = 0 at the start, Haar-random R.
// "About half" is read as within 10 points of 50%.
#include "support.hpp"

#include "core/rng.hpp"

using namespace memcap;
using namespace memcap::test;

namespace {

constexpr int kSeeds = 5;

void require_about_half(const Measured& m) {
    INFO("measured " << 100 * m.mean << "%");
    REQUIRE(std::abs(m.mean - 0.5) <= 0.10);
}

}  // namespace

TEST_CASE("lag recall, rho = 0.8: lags 1-3 perfect, about half by lag 8, 7.1% at lag 20", "[essay004][lag_recall]") {
    const auto m = measure_slots(Run{"rotation:rho=0.8,angles=haar", "lag_recall", 80, kSeeds});
    for (int lag : {1, 2, 3}) {
        CAPTURE(lag);
        REQUIRE(m.at(lag).mean >= 0.99);
    }
    require_about_half(m.at(8));
    require_reproduces(m.at(20), 0.071, 1);
}

TEST_CASE("lag recall, rho = 0.9: 99.3% at lag 1, about half by lag 9, 10.5% at lag 20", "[essay004][lag_recall]") {
    const auto m = measure_slots(Run{"rotation:rho=0.9,angles=haar", "lag_recall", 80, kSeeds});
    require_reproduces(m.at(1), 0.993, 1);
    require_about_half(m.at(9));
    require_reproduces(m.at(20), 0.105, 1);
}

TEST_CASE("lag recall, rho = 0.97: 60.1% at lag 1, 24.8% at lag 20", "[essay004][lag_recall]") {
    const auto m = measure_slots(Run{"rotation:rho=0.97,angles=haar", "lag_recall", 80, kSeeds});
    require_reproduces(m.at(1), 0.601, 1);
    require_reproduces(m.at(20), 0.248, 1);
}

TEST_CASE("uniform and Haar rotation angles read the same within sampling error", "[lag_recall][rotation]") {
    // The default (angles=uniform, O(D) set-up) against the essays' Haar reading.
    const auto haar = measure_slots(Run{"rotation:rho=0.9,angles=haar", "lag_recall:episodes=500", 80, kSeeds});
    const auto uniform = measure_slots(Run{"rotation:rho=0.9", "lag_recall:episodes=500", 80, kSeeds});
    for (int lag : {1, 5, 9, 20}) {
        CAPTURE(lag);
        const double tol = 3.0 * std::sqrt(haar.at(lag).se() * haar.at(lag).se() + uniform.at(lag).se() * uniform.at(lag).se());
        REQUIRE(std::abs(haar.at(lag).mean - uniform.at(lag).mean) <= tol);
    }
}

TEST_CASE("copying, rho = 0.9 and 0.97: 100 at L = 5, 84.5 / 89.6 at 10, about half at 20, 21.0 / 23.3 at 60",
          "[essay004][copying][release_only]") {
    const auto [rho, at10, at60] = GENERATE(table<std::string, double, double>({{"0.9", 0.845, 0.210}, {"0.97", 0.896, 0.233}}));
    CAPTURE(rho);
    const std::string memory = "rotation:angles=haar,rho=" + rho;
    REQUIRE(measure_slot_mean(Run{memory, "copying", 5, kSeeds}).mean >= 0.99);
    // Known discrepancy (docs/PROTOCOL.md): at L = 10 the essay reads 1-1.5 points below every
    // reading known. Measured here (memcap reproduce): 85.9 (rho 0.9) and 91.3 (rho 0.97)
    // against 84.5 and 89.6, beyond sampling error at rho 0.97. We assert the offset we see rather than
    // tune the protocol to the essay: measured above the essay by 0 to 3 points.
    const Measured at_10 = measure_slot_mean(Run{memory, "copying", 10, kSeeds});
    INFO("L = 10: measured " << 100 * at_10.mean << "%, essay " << 100 * at10 << "%");
    REQUIRE(at_10.mean - at10 >= 0.0);
    REQUIRE(at_10.mean - at10 <= 0.03);
    require_about_half(measure_slot_mean(Run{memory, "copying", 20, kSeeds}));
    require_reproduces(measure_slot_mean(Run{memory, "copying", 60, kSeeds}), at60, 1);
}

TEST_CASE("the position-keyed cache copies exactly at every L", "[essay004][copying]") {
    const std::int64_t length = GENERATE(5, 10, 20, 40, 60);
    CAPTURE(length);
    REQUIRE(measure_slot_mean(Run{"softmax", "copying:episodes=100", length, 3}).mean >= 1.0 - 1e-12);
}

TEST_CASE("selection: at B = 1024, L = 256, M = 16 the selective model keeps the content, the rotation RNN does not",
          "[selective_copying][release_only]") {
    // Both read through the probe, the best linear read of each state.
    const Run selective{"selective", "selective_copying:episodes=300", 256, 3, 1024, 64, "probe:train=1000"};
    const Run rotation{"rotation", "selective_copying:episodes=300", 256, 3, 1024, 64, "probe:train=1000"};
    const Measured s = measure_slot_mean(selective), r = measure_slot_mean(rotation);
    INFO("selective " << 100 * s.mean << "%, rotation " << 100 * r.mean << "%");
    REQUIRE(s.mean - 3 * s.se() >= 0.9);
    REQUIRE(r.mean + 3 * r.se() < 0.9);
    // Without its gate, the same model writes the blanks too.
    const Run ungated{"selective:gate=none", "selective_copying:episodes=300", 256, 3, 1024};
    const Run gated{"selective", "selective_copying:episodes=300", 256, 3, 1024};
    REQUIRE(measure_slot_mean(ungated).mean + 0.2 < measure_slot_mean(gated).mean);
}

TEST_CASE("the selective gate reads the declared salience feature, without one, every write has step 1",
          "[selective_copying][inputs]") {
    const int d = 16;
    Rng rng = Rng::stream("test/salience");
    RowMat keys = rng.unit_rows<RowMat>(6, d), values = rng.unit_rows<RowMat>(6, d);
    values.col(3).setZero();  // content: nothing on the salience coordinate (as a task's content codes)
    values.rowwise().normalize();
    values.row(2).setZero();
    values(2, 3) = 1.0f;  // a filler token on coordinate 3
    const auto state_after = [&](const std::string& memory, const MemoryShape& shape, Eigen::Index rows) {
        auto m = make_memory(parse_memory_spec(memory), shape, 1);
        m->write_batch(keys.topRows(rows), values.topRows(rows));
        return Vec(m->state());
    };
    // No salience feature declared (random values): the same state as without a gate.
    const MemoryShape plain(d, d);
    REQUIRE(state_after("selective:rho=0.5", plain, 6) == state_after("selective:rho=0.5,gate=none", plain, 6));
    // Feature 3 declared: the filler token (e_3) is skipped exactly, content is written.
    InputDescription inputs{d, d, true, 3};
    const MemoryShape salient(inputs, std::nullopt);
    REQUIRE(state_after("selective:rho=0.5", salient, 3) == state_after("selective:rho=0.5", salient, 2));
    REQUIRE(state_after("selective:rho=0.5", salient, 2) != state_after("selective:rho=0.5", salient, 1));
    // A feature outside the value is a bug in the task's declaration.
    inputs.salience_feature = d;
    REQUIRE_THROWS_AS(make_memory(parse_memory_spec("selective"), MemoryShape(inputs, std::nullopt), 1),
                      std::invalid_argument);
    // The tasks declare it: only selective copying has one (coordinate 0, its blank e_0).
    REQUIRE(make_task(parse_task_spec("selective_copying"))->inputs(TaskCell{32, d, 0}).salience_feature == 0);
    for (const char* task : {"assoc_recall", "lag_recall", "copying", "salient_recall", "salient_recall:gate=all"})
        REQUIRE_FALSE(make_task(parse_task_spec(task))->inputs(TaskCell{32, d, 0}).salience_feature);
}

TEST_CASE("a reused Episode holds exactly what a fresh one does, across tasks, cells and splits", "[tasks][episode]") {
    // Readouts hand the same Episode back to fill_episode; tasks may keep the parts
    // that are fixed per cell (Episode::fixed_parts). Switching cells, splits or
    // tasks between calls must never leave stale parts behind.
    for (const char* name : {"lag_recall:lags=5", "copying", "selective_copying:content=4", "assoc_recall",
                             "assoc_recall:control=key_shuffle"}) {
        CAPTURE(name);
        const auto task = make_task(parse_task_spec(name));
        Episode reused;
        const TaskCell cells[] = {{12, 8, 0}, {12, 8, 1}, {9, 8, 1}, {12, 6, 1}, {12, 8, 0}};
        for (const auto& c : cells)
            for (Split split : {Split::Train, Split::Test})
                for (std::int64_t index : {0, 1, 0}) {
                    CAPTURE(c.n, c.d, c.seed, static_cast<int>(split), index);
                    task->fill_episode(c, split, index, reused);
                    const Episode fresh = task->episode(c, split, index);
                    REQUIRE(reused.keys == fresh.keys);
                    REQUIRE(reused.values == fresh.values);
                    REQUIRE(reused.queries == fresh.queries);
                    REQUIRE(reused.candidates == fresh.candidates);
                    REQUIRE(reused.target == fresh.target);
                    REQUIRE(reused.slot == fresh.slot);
                }
    }
    // Two tasks of one kind filling one Episode in turn: each must notice the other's parts.
    const auto a = make_task(parse_task_spec("copying")), b = make_task(parse_task_spec("copying"));
    Episode shared;
    const TaskCell ca{10, 8, 3}, cb{10, 8, 4};
    a->fill_episode(ca, Split::Test, 0, shared);
    b->fill_episode(cb, Split::Test, 0, shared);
    REQUIRE(shared.keys == b->episode(cb, Split::Test, 0).keys);
    a->fill_episode(ca, Split::Test, 1, shared);
    REQUIRE(shared.keys == a->episode(ca, Split::Test, 1).keys);
    REQUIRE(shared.queries == a->episode(ca, Split::Test, 1).queries);
}
