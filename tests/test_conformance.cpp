// The contract every backend in the registry honours, checked for each entry
// automatically: a backend added to the table is tested here with no change.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>
#include <optional>

using namespace memcap;
using memcap::test::conformance_specs;
using memcap::test::takes;
using memcap::test::unit_rows;

namespace {

Eigen::Index nearest(const RowMat& candidates, const Vec& read) {
    Eigen::Index best;
    (candidates.rowwise() - read.transpose()).rowwise().squaredNorm().minCoeff(&best);
    return best;
}

}  // namespace

TEST_CASE("the contract is checked at every candidate of every setting", "[memory][conformance]") {
    // Each declared candidate of each backend's settings appears in conformance_specs (so the
    // contract below runs at it), and the defaults of every backend.
    const std::vector<std::string> specs = conformance_specs();
    int candidates = 0;
    for (const MemoryEntry& entry : memory_registry()) {
        CAPTURE(entry.name);
        REQUIRE(std::count(specs.begin(), specs.end(), entry.name) == 1);
        for (const ParamInfo& p : entry.params)
            for (const std::string& value : p.best) {
                if (!takes(entry, p, value)) continue;
                CAPTURE(p.key, value);
                const Spec spec = parse_memory_spec(entry.name + ":" + p.key + "=" + value);
                const bool covered = std::any_of(specs.begin(), specs.end(), [&](const std::string& s) {
                    return parse_memory_spec(s) == spec;
                });
                REQUIRE(covered);
                ++candidates;
            }
    }
    CHECK(candidates > 0);
}

TEST_CASE("every memory honours the contract", "[memory][conformance]") {
    const std::string text = GENERATE(from_range(conformance_specs()));
    CAPTURE(text);
    const Spec spec = parse_memory_spec(text);
    const std::string name = spec.name();
    const int d = 32;
    Rng data = Rng::stream("conformance", name);  // the same pairs at every setting
    const RowMat keys = unit_rows(data, 6, d), values = unit_rows(data, 6, d);
    // A setting may need more than the defaults (a mini-batch held pending): its budgets below
    // its minimum are left out (the defaults run at every budget), the fixed ones raised to it.
    const bool at_defaults = text == name;
    const std::int64_t minimum = find_memory(name).min_budget(spec, MemoryShape{d, d, {}});
    const auto at_least_minimum = [&](std::int64_t budget) { return std::max(budget, minimum); };
    const auto skipped = [&](std::optional<std::int64_t> budget) {
        if (!budget || *budget >= minimum) return false;
        REQUIRE_FALSE(at_defaults);
        return true;
    };
    // Fits the budget: its bits (32 a float at fp32; a precision's numbers and scales below).
    const Precision precision = spec_precision(spec);
    const auto bits = [&](const MemorySize& size, const MemoryShape& shape, std::int64_t floats) {
        return state_bits(precision, size, shape, floats);
    };
    // Runs `read`: false when it was a measured failure (MemoryFailure), which only a memory held
    // below fp32 may give (a rounded state that no longer supports the read: MesaNet's H + λI).
    const auto reads = [&](const auto& read) {
        try {
            read();
            return true;
        } catch (const MemoryFailure& e) {
            INFO(e.what());
            REQUIRE(precision != Precision::fp32);
            return false;
        }
    };

    SECTION("state fits the budget and the flat view has state_floats floats") {
        for (std::int64_t budget : {128, 256, 300, 1024, 4096}) {
            CAPTURE(budget);
            if (skipped(budget)) continue;
            const MemoryShape shape{d, d, budget};
            auto m = make_memory(spec, shape, 1);
            m->write_batch(keys, values);
            REQUIRE(bits(memory_size(spec, shape), shape, m->state_floats()) <= 32 * budget);
            REQUIRE(m->state_floats() > 0);
            REQUIRE(m->state().size() == m->state_floats());
        }
    }
    SECTION("the sizing function describes the built memory: parameters, state after writes, minimum") {
        for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>(), std::optional<std::int64_t>(128),
                                                         std::optional<std::int64_t>(300), std::optional<std::int64_t>(4096)}) {
            CAPTURE(budget.value_or(-1));
            if (skipped(budget)) continue;
            const MemoryShape shape(d, d, budget);
            const MemorySize size = memory_size(spec, shape);
            auto m = make_memory(spec, shape, 1);
            REQUIRE(m->param_floats() == size.param_floats);
            REQUIRE(m->state_floats() == size.state_floats_after(0));
            m->write_batch(keys, values);
            REQUIRE(m->state_floats() == size.state_floats_after(keys.rows()));
            if (budget) REQUIRE(bits(size, shape, size.state_floats_after(1000000)) <= 32 * *budget);
            REQUIRE(size.min_budget == find_memory(name).min_budget(spec, shape));
            REQUIRE_FALSE(describe_size(size).empty());
            // the peak estimate covers at least the state and parameters, and grows with n when the state does
            const std::int64_t peak = memory_peak_bytes(spec, shape, 1000, 32);
            REQUIRE(peak >= 4 * (size.state_floats_after(1000) + size.param_floats));
            REQUIRE(memory_peak_bytes(spec, shape, 100000, 32) >= peak);
        }
    }
    SECTION("a budget below the minimum is a UsageError naming the minimum") {
        REQUIRE(minimum >= 1);
        REQUIRE_THROWS_WITH(make_memory(spec, MemoryShape{d, d, minimum - 1}, 0), Catch::Contains("minimum"));
        REQUIRE_NOTHROW(make_memory(spec, MemoryShape{d, d, minimum}, 0));
    }
    SECTION("one stored pair comes back") {
        auto m = make_memory(spec, MemoryShape{d, d, {}}, 3);
        m->write(keys.row(0).transpose(), values.row(0).transpose());
        Vec out(d);
        // below fp32 the read may be a measured failure (MesaNet's rounded H + λI at int4)
        if (reads([&] { m->read(keys.row(0).transpose(), out); })) {
            REQUIRE(nearest(values, out) == 0);
            REQUIRE(out.allFinite());
        }
    }
    SECTION("reset equals a fresh memory") {
        auto fresh = make_memory(spec, MemoryShape{d, d, at_least_minimum(512)}, 5);
        auto used = make_memory(spec, MemoryShape{d, d, at_least_minimum(512)}, 5);
        used->write_batch(keys, values);
        used->reset();
        used->write_batch(keys.topRows(2), values.topRows(2));
        fresh->write_batch(keys.topRows(2), values.topRows(2));
        REQUIRE(used->state_floats() == fresh->state_floats());
        REQUIRE(Vec(used->state()) == Vec(fresh->state()));
        RowMat a(6, d), b(6, d);
        const bool used_read = reads([&] { used->read_batch(keys, a); });
        REQUIRE(reads([&] { fresh->read_batch(keys, b); }) == used_read);
        if (used_read) REQUIRE(a == b);
    }
    SECTION("a hidden pair is honoured exactly when the table declares can_hide_pairs, never ignored") {
        auto m = make_memory(spec, MemoryShape{d, d, {}}, 3);
        m->write_batch(keys.topRows(2), values.topRows(2));
        const std::vector<int> hide_first(2, 0);
        RowMat plain(2, d), hidden(2, d);
        const bool read = reads([&] {
            m->read_batch(keys.topRows(2), plain);
            m->read_batch(keys.topRows(2), plain, ReadOptions{});  // empty options: the same plain read
        });
        if (find_memory(name).can_hide_pairs && read) {
            m->read_batch(keys.topRows(2), hidden, ReadOptions{hide_first});
            // query k0 with pair 0 hidden can only reach v1; query k1 is unaffected
            REQUIRE(nearest(values, hidden.row(0).transpose()) == 1);
            REQUIRE(nearest(values, hidden.row(1).transpose()) == nearest(values, plain.row(1).transpose()));
        } else if (!find_memory(name).can_hide_pairs) {
            REQUIRE_THROWS_AS(m->read_batch(keys.topRows(2), hidden, ReadOptions{hide_first}), std::invalid_argument);
        }
    }
    SECTION("the same seed gives the same reads; batched equals one at a time") {
        auto one = make_memory(spec, MemoryShape{d, d, at_least_minimum(400)}, 7);
        auto two = make_memory(spec, MemoryShape{d, d, at_least_minimum(400)}, 7);
        one->write_batch(keys, values);
        for (int i = 0; i < keys.rows(); ++i) two->write(keys.row(i).transpose(), values.row(i).transpose());
        RowMat batched(6, d);
        const bool read = reads([&] { one->read_batch(keys, batched); });
        // up to float32 rounding: 1e-5 of the largest magnitude, or of 1 (a scale or a mini-batch
        // may make reads of several hundred, whose rounding is then larger than 1e-5)
        const float read_scale = std::max(1.0f, read ? batched.cwiseAbs().maxCoeff() : 0.0f);
        for (int i = 0; i < keys.rows(); ++i) {
            Vec single(d);
            REQUIRE(reads([&] { two->read(keys.row(i).transpose(), single); }) == read);
            if (read) REQUIRE((single.transpose() - batched.row(i)).cwiseAbs().maxCoeff() < 1e-5f * read_scale);
        }
        const float state_scale = std::max(1.0f, Vec(one->state()).cwiseAbs().maxCoeff());
        REQUIRE((Vec(one->state()) - Vec(two->state())).cwiseAbs().maxCoeff() < 1e-5f * state_scale);
    }
}

TEST_CASE("a recall model uses its backend's sizing function", "[memory][conformance][theory]") {
    // For every entry with a recall model: the dimensions it reports using are the sizing
    // function's (the null slot and every other optional parameter included), and they follow
    // the size it is handed (a model that recomputed a size from the budget would not).
    int covered = 0;
    for (const MemoryEntry& entry : memory_registry()) {
        if (!entry.recall_model) continue;
        CAPTURE(entry.name);
        std::vector<Spec> specs = {parse_memory_spec(entry.name)};
        for (const ParamInfo& p : entry.params)
            for (const std::string& value : p.best)  // the values the race may choose, optional ones set
                if (p.optional) specs.push_back(parse_memory_spec(entry.name + ":" + p.key + "=" + value));
        for (const Spec& spec : specs)
            for (const int d : {8, 16, 32})
                for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>(), std::optional<std::int64_t>(256),
                                                                 std::optional<std::int64_t>(1024), std::optional<std::int64_t>(1000)})
                    for (const std::int64_t n : {2, 15, 16, 31, 32, 64})
                        for (const char* keys : {"random", "frame"}) {
                            CAPTURE(spec.canonical(), d, budget.value_or(-1), n, keys);
                            const MemoryShape shape(d, d, budget);
                            theory::RecallTask task;
                            task.d = d, task.n = n, task.keys = keys, task.vocab = keys == std::string("frame") ? 4 * n : 0;
                            const MemorySize size = memory_size(spec, shape);
                            const std::optional<theory::RecallModel> model = recall_model(spec, shape, task);
                            if (!model) continue;
                            if (model->call) REQUIRE(!model->sizes.empty());  // a model evaluated at some size
                            covered += model->sizes.empty() ? 0 : 1;
                            for (const auto& [name, value] : model->sizes) CHECK(value == size.dim(name));
                            MemorySize shifted = size;  // every dimension one more
                            for (auto& dim : shifted.dims) dim.second += 1;
                            const auto moved = entry.recall_model(spec, shifted, shape, task);
                            REQUIRE(moved);
                            for (const auto& [name, value] : moved->sizes) CHECK(value == shifted.dim(name));
                        }
    }
    CHECK(covered > 0);
}

TEST_CASE("peak bytes: a cell that cannot fit is visible before it runs", "[memory][sizing]") {
    // softmax at n = 10^8, d = 64: 10^8 pairs of 128 floats (51.2 GB) plus the 32 × 10^8
    // score matrix of one batched read (12.8 GB).
    const std::int64_t peak = memory_peak_bytes(parse_memory_spec("softmax"), MemoryShape(64, 64), 100000000, 32);
    REQUIRE(peak >= std::int64_t{64} * 1000 * 1000 * 1000);
    // with a budget the cache holds at most floor(B / 128) pairs, whatever n
    REQUIRE(memory_peak_bytes(parse_memory_spec("softmax"), MemoryShape(64, 64, 4096), 100000000, 32) < 20 * 1000 * 1000);
    // a grid's state does not grow with n; its write's feature rows do
    const Spec linear = parse_memory_spec("linear");
    REQUIRE(memory_size(linear, MemoryShape(64, 64)).state_floats_after(100000000) == 64 * 64);
    REQUIRE(memory_peak_bytes(linear, MemoryShape(64, 64), 100000000, 32) >= std::int64_t{4} * 100000000 * 64);
    // saturates instead of overflowing
    REQUIRE(memory_peak_bytes(parse_memory_spec("softmax"), MemoryShape(1 << 20, 1 << 20), std::int64_t{1} << 40, 1 << 20) ==
            std::numeric_limits<std::int64_t>::max());
    // dimensions beyond an int are refused by the sizing function itself
    REQUIRE_THROWS_AS(memory_size(parse_memory_spec("hrr"), MemoryShape(64, 64, 3000000000LL)), UsageError);
    REQUIRE_THROWS_AS(memory_size(parse_memory_spec("rotation:angles=haar"), MemoryShape(64, 64, 4096)), UsageError);
    REQUIRE_THROWS_WITH(memory_size(linear, MemoryShape(64, 64, 63)), Catch::Contains("minimum of 64"));
}
