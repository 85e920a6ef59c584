// The hybrid (memories/hybrid/): a window (the softmax cache) and a recurrent state dividing one
// budget. Each part alone is a special case (share 1: the cache, share 0: the state memory, bit
// for bit); between them the state fits the budget, the sum read is the parts' reads added, the
// slot read moves from the window to the state with the slot's logit; bad input is refused.
// The other divided memories: gsa's routed gate, and loglinear (a Fenwick tree of grids, the
// budget divided among its levels): one level is the linear grid bit for bit, the levels hold
// the Fenwick blocks, the read weights them.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace memcap;
using memcap::test::unit_rows;

namespace {

constexpr int kHybridD = 16;

struct Data {
    RowMat keys, values, queries;
};

Data data(std::uint64_t seed, Eigen::Index n) {
    Rng rng = Rng::stream("hybrid test", seed);
    Data x{unit_rows(rng, n, kHybridD), unit_rows(rng, n, kHybridD), RowMat()};
    x.queries = x.keys;
    return x;
}

RowMat reads(Memory& m, const RowMat& queries) {
    RowMat out(queries.rows(), kHybridD);
    m.read_batch(queries, out);
    return out;
}

/// Built from its entry with a given parameter stream (so two entries can be given the same one).
std::unique_ptr<Memory> built(const std::string& text, std::int64_t budget, std::uint64_t stream = 9) {
    const Spec spec = parse_memory_spec(text);
    Rng rng = Rng::stream("hybrid params", stream);
    const MemoryShape shape(kHybridD, kHybridD, budget);
    (void)memory_size(spec, shape);  // the checks make_memory makes
    return find_memory(spec.name()).make(spec, shape, rng);
}

}  // namespace

TEST_CASE("hybrid: share 1 is the cache and share 0 the state memory, bit for bit", "[memory][hybrid]") {
    const Data x = data(1, 40);
    for (const std::int64_t budget : {256, 1000, 4096}) {
        CAPTURE(budget);
        // share 1: the cache at the whole budget (no parameters: make_memory's streams do not matter)
        auto hybrid = make_memory(parse_memory_spec("hybrid:share=1,window_beta=8"), MemoryShape(kHybridD, kHybridD, budget), 3);
        auto cache = make_memory(parse_memory_spec("softmax:beta=8"), MemoryShape(kHybridD, kHybridD, budget), 3);
        REQUIRE(memory_size(parse_memory_spec("hybrid:share=1"), MemoryShape(kHybridD, kHybridD, budget)).state_floats ==
                memory_size(parse_memory_spec("softmax"), MemoryShape(kHybridD, kHybridD, budget)).state_floats);
        hybrid->write_batch(x.keys, x.values), cache->write_batch(x.keys, x.values);
        REQUIRE(Vec(hybrid->state()) == Vec(cache->state()));
        REQUIRE(reads(*hybrid, x.queries) == reads(*cache, x.queries));
        // share 0: the state memory at the whole budget, its parameters drawn from the same stream
        for (const std::string state : {"gated_deltanet", "gated_deltanet:alpha=0.9,beta=0.5", "linear", "retnet:gamma=0.97"}) {
            CAPTURE(state);
            const std::string name = state.substr(0, state.find(':'));
            const std::string settings = state.find(':') == std::string::npos ? "" : "," + state.substr(state.find(':') + 1);
            auto h = built("hybrid:share=0,state=" + name + settings, budget), alone = built(state, budget);
            REQUIRE(h->param_floats() == alone->param_floats());
            h->write_batch(x.keys, x.values), alone->write_batch(x.keys, x.values);
            REQUIRE(Vec(h->state()) == Vec(alone->state()));
            REQUIRE(reads(*h, x.queries) == reads(*alone, x.queries));
        }
    }
    // through make_memory where the state memory has no random parameter (d_phi = d: phi is the identity)
    auto h = make_memory(parse_memory_spec("hybrid:share=0"), MemoryShape(kHybridD, kHybridD, kHybridD * kHybridD), 4);
    auto g = make_memory(parse_memory_spec("gated_deltanet"), MemoryShape(kHybridD, kHybridD, kHybridD * kHybridD), 4);
    h->write_batch(x.keys, x.values), g->write_batch(x.keys, x.values);
    REQUIRE(reads(*h, x.queries) == reads(*g, x.queries));
}

TEST_CASE("hybrid: the parts divide the budget, and the sum read adds their reads", "[memory][hybrid]") {
    const Data x = data(2, 30);
    for (const double share : {0.125, 0.25, 0.5, 0.75, 0.875})
        for (const std::int64_t budget : {1024, 1500, 4096}) {
            CAPTURE(share, budget);
            const std::string text = "hybrid:share=" + format_real(share) + ",window_beta=16";
            const MemoryShape shape(kHybridD, kHybridD, budget);
            const MemorySize size = memory_size(parse_memory_spec(text), shape);
            const std::int64_t row = 2 * kHybridD, pairs = static_cast<std::int64_t>(std::floor(share * double(budget) / double(row)));
            const std::int64_t state_budget = budget - pairs * row;
            REQUIRE(size.dim("pairs") == pairs);
            REQUIRE(size.dim("d_phi") == state_budget / kHybridD);  // the grid at what the window leaves
            REQUIRE(size.state_floats == pairs * row + state_budget / kHybridD * kHybridD);
            REQUIRE(size.state_floats <= budget);
            auto h = built(text, budget);
            // the parts, built alone at their budgets (the state first, from the same stream)
            Rng rng = Rng::stream("hybrid params", 9);
            auto state = find_memory("gated_deltanet").make(parse_memory_spec("gated_deltanet"), MemoryShape(kHybridD, kHybridD, state_budget), rng);
            auto window = make_memory(parse_memory_spec("softmax:beta=16"), MemoryShape(kHybridD, kHybridD, pairs * row), 1);
            for (Memory* m : {h.get(), state.get(), window.get()}) m->write_batch(x.keys, x.values);
            REQUIRE(h->state_floats() == window->state_floats() + state->state_floats());
            REQUIRE(h->state_floats() == size.state_floats_after(x.keys.rows()));
            const RowMat sum = reads(*window, x.queries) + reads(*state, x.queries);
            REQUIRE((reads(*h, x.queries) - sum).cwiseAbs().maxCoeff() < 1e-6f);
            // the causal form: both parts' causal forms, added (= token by token, below)
            auto a = built(text, budget), b = built(text, budget);
            RowMat fast(x.keys.rows(), kHybridD), slow(x.keys.rows(), kHybridD);
            a->causal(x.queries, x.keys, x.values, TokenGates{}, fast);
            b->causal_by_token(x.queries, x.keys, x.values, TokenGates{}, slow);
            REQUIRE((fast - slow).cwiseAbs().maxCoeff() < 1e-5f);
        }
}

TEST_CASE("hybrid: the slot read gives the window its keys and the state the rest", "[memory][hybrid]") {
    const Data x = data(3, 24);
    const std::int64_t budget = 2048;  // 32 window pairs' floats at share 1/2: the slot's row and 31 pairs
    const MemoryShape shape(kHybridD, kHybridD, budget);
    REQUIRE(memory_size(parse_memory_spec("hybrid:slot=4"), shape).dim("pairs") == 31);
    auto state = built("hybrid:share=0", budget / 2);  // the state part alone (its budget: what the window leaves)
    // a slot far above every score: the read is the state's; far below: the window's (the cache with a null slot)
    auto high = built("hybrid:slot=100", budget), low = built("hybrid:slot=-100", budget);
    auto window = make_memory(parse_memory_spec("softmax:beta=16,null=-100"), MemoryShape(kHybridD, kHybridD, budget / 2), 1);
    for (Memory* m : {high.get(), low.get(), state.get(), window.get()}) m->write_batch(x.keys, x.values);
    REQUIRE((reads(*high, x.queries) - reads(*state, x.queries)).cwiseAbs().maxCoeff() < 1e-5f);
    REQUIRE((reads(*low, x.queries) - reads(*window, x.queries)).cwiseAbs().maxCoeff() < 1e-5f);
    // between: a key in the window (score beta = 16 on unit keys) outweighs a slot of 4, so its read is
    // nearly the window's; the state gets less weight than under the sum read
    auto mid = built("hybrid:slot=4", budget), sum = built("hybrid", budget);
    mid->write_batch(x.keys, x.values), sum->write_batch(x.keys, x.values);
    const RowMat m = reads(*mid, x.queries), w = reads(*window, x.queries), s = reads(*sum, x.queries);
    REQUIRE((m - w).norm() < (s - w).norm());
}

TEST_CASE("hybrid: the window holds the recent pairs and the state the older ones", "[memory][hybrid]") {
    // 64 pairs of d = 16 into 1024 floats: the cache alone holds the last 32 (and reads them
    // exactly at beta=inf). At share 1/2 with a slot the window holds the last 15 (its 16 rows, one
    // the slot's) and reads them (score 64 on its own key against the slot's 40); the pairs it
    // evicted are the state's (a 16 × 32 grid), which the cache alone reads at chance.
    const Data x = data(4, 64);
    const auto correct = [&](const std::string& text, Eigen::Index from, Eigen::Index to) {
        auto m = built(text, 1024);
        m->write_batch(x.keys, x.values);
        const RowMat r = reads(*m, x.queries);
        int right = 0;
        for (Eigen::Index i = from; i < to; ++i) {
            Eigen::Index best;
            (x.values * r.row(i).transpose()).maxCoeff(&best);
            right += best == i;
        }
        return right;
    };
    REQUIRE(correct("hybrid:share=1,window_beta=inf", 32, 64) == 32);  // the cache: the last 32 exactly
    REQUIRE(correct("hybrid:share=1,window_beta=inf", 0, 32) == 0);    // evicted
    REQUIRE(correct("hybrid:share=0.5,window_beta=64,slot=40", 49, 64) == 15);  // the window's
    REQUIRE(correct("hybrid:share=0.5,window_beta=64,slot=40", 0, 49) > 0);     // the state's
}

TEST_CASE("hybrid: bad input is refused with one line", "[memory][hybrid]") {
    const MemoryShape shape(kHybridD, kHybridD, 1024);
    REQUIRE_THROWS_WITH(parse_memory_spec("hybrid:state=nope"), Catch::Contains("state=nope"));
    REQUIRE_THROWS_WITH(parse_memory_spec("hybrid:state=softmax"), Catch::Contains("state=softmax"));  // a cache is not a state
    REQUIRE_THROWS_WITH(parse_memory_spec("hybrid:share=1.5"), Catch::Contains("share"));
    REQUIRE_THROWS_WITH(parse_memory_spec("hybrid:share=-0.1"), Catch::Contains("share"));
    // a setting the state memory does not take, or a value it refuses, when the hybrid is sized
    REQUIRE_THROWS_AS(memory_size(parse_memory_spec("hybrid:state=linear,alpha=0.9"), shape), UsageError);
    REQUIRE_THROWS_WITH(memory_size(parse_memory_spec("hybrid:alpha=1.5"), shape), Catch::Contains("alpha"));
    // a budget too small for the parts: below the minimum, named
    const Spec half = parse_memory_spec("hybrid:share=0.5");
    const std::int64_t minimum = find_memory("hybrid").min_budget(half, shape);
    REQUIRE(minimum == 4 * kHybridD);  // a pair (2 d) in the window's half, and the grid's d_v in the rest
    REQUIRE_THROWS_WITH(memory_size(half, MemoryShape(kHybridD, kHybridD, minimum - 1)), Catch::Contains("minimum of " + std::to_string(minimum)));
    for (std::int64_t b = minimum; b < minimum + 200; ++b) REQUIRE_NOTHROW(memory_size(half, MemoryShape(kHybridD, kHybridD, b)));
    // the slot's row counts: two rows in the window
    REQUIRE(find_memory("hybrid").min_budget(parse_memory_spec("hybrid:share=0.5,slot=4"), shape) == 2 * 4 * kHybridD);
}

TEST_CASE("hybrid: heads split each part", "[memory][hybrid][heads]") {
    const Data x = data(5, 20);
    for (const int h : {2, 4}) {
        CAPTURE(h);
        const std::string text = "hybrid:share=0.25,heads=" + std::to_string(h);
        auto m = make_memory(parse_memory_spec(text), MemoryShape(kHybridD, kHybridD, 2048), 1);
        m->write_batch(x.keys, x.values);
        REQUIRE(m->state_floats() <= 2048);
        REQUIRE(m->state_floats() == memory_size(parse_memory_spec(text), MemoryShape(kHybridD, kHybridD, 2048)).state_floats_after(20));
    }
}

// ---- Gated Slot Attention (memories/gsa/): m slots written through a routed gate, read by softmax.

namespace {

/// Nonzero key rows of a gsa state (its layout: K̃ rows, then Ṽ rows).
int written_slots(const Memory& m, Eigen::Index slots) {
    const ConstStateView s = m.state();
    int n = 0;
    for (Eigen::Index i = 0; i < slots; ++i) n += s.segment(i * kHybridD, kHybridD).cwiseAbs().maxCoeff() > 0.0f;
    return n;
}

}  // namespace

TEST_CASE("gsa: a routed slot takes the pair through its gate, the others are left exactly as they were",
          "[memory][gsa]") {
    const Data x = data(6, 12);
    const std::int64_t budget = 16 * 2 * kHybridD;  // 16 slots
    REQUIRE(memory_size(parse_memory_spec("gsa"), MemoryShape(kHybridD, kHybridD, budget)).dim("slots") == 16);
    // the hash (temp=inf): one slot written, holding g k and g v
    auto half = built("gsa:write=0.5", budget);
    half->write(x.keys.row(0).transpose(), x.values.row(0).transpose());
    REQUIRE(written_slots(*half, 16) == 1);
    const ConstStateView s = half->state();
    for (Eigen::Index i = 0; i < 16; ++i) {
        if (s.segment(i * kHybridD, kHybridD).cwiseAbs().maxCoeff() == 0.0f) continue;
        REQUIRE(Vec(s.segment(i * kHybridD, kHybridD)) == Vec(0.5f * x.keys.row(0).transpose()));
        REQUIRE(Vec(s.segment(16 * kHybridD + i * kHybridD, kHybridD)) == Vec(0.5f * x.values.row(0).transpose()));
    }
    // top-k: k slots written; top 1 is the hash at any temperature, bit for bit
    auto two = built("gsa:temp=1,topk=2", budget);
    two->write(x.keys.row(0).transpose(), x.values.row(0).transpose());
    REQUIRE(written_slots(*two, 16) == 2);
    auto top1 = built("gsa:temp=4,topk=1", budget), hash = built("gsa", budget);
    top1->write_batch(x.keys, x.values), hash->write_batch(x.keys, x.values);
    REQUIRE(Vec(top1->state()) == Vec(hash->state()));
    // at g = 1 every written slot holds one pair exactly: its key and its value, as written
    const ConstStateView h = hash->state();
    for (Eigen::Index i = 0; i < 16; ++i) {
        const Vec key = h.segment(i * kHybridD, kHybridD), value = h.segment(16 * kHybridD + i * kHybridD, kHybridD);
        if (key.cwiseAbs().maxCoeff() == 0.0f) continue;
        bool found = false;
        for (Eigen::Index j = 0; j < x.keys.rows(); ++j)
            found |= key == Vec(x.keys.row(j).transpose()) && value == Vec(x.values.row(j).transpose());
        REQUIRE(found);
    }
    // and a pair whose slot no later pair took reads back exactly at beta=inf (the last one always does)
    auto hard = built("gsa:beta=inf", budget);
    hard->write_batch(x.keys, x.values);
    Vec out(kHybridD);
    hard->read(x.keys.row(11).transpose(), out);
    REQUIRE(out == Vec(x.values.row(11).transpose()));
}

namespace {

/// Fenwick level of key j for the read after the write of token t (j ≤ t), at L levels: 0 for
/// j = t; ℓ ≥ 1 for the block of 2^(ℓ−1) tokens bit ℓ − 1 of t gives (flash-linear-attention's
/// naive level mask); L − 1 for every block above it (the cap).
int fenwick_level(int t, int j, int levels) {
    if (j == t) return 0;
    for (int l = 1; l < 31; ++l) {
        const int half = 1 << (l - 1);
        const int end = t - t % half;  // the block of level l ends before this index
        if ((t & half) != 0 && j < end && j >= end - half) return std::min(l, levels - 1);
    }
    return -1;  // not reached for j < t
}

}  // namespace

TEST_CASE("loglinear: one level is the linear grid at the same budget, bit for bit", "[memory][loglinear]") {
    const Data x = data(7, 40);
    for (const std::int64_t budget : {200, 256, 1000, 4096})
        for (const std::string phi : {"proj", "dpfp"}) {
            CAPTURE(budget, phi);
            const std::string log = "loglinear:levels=1,ratio=0.3,phi=" + phi, lin = "linear:phi=" + phi;
            const MemoryShape shape(kHybridD, kHybridD, budget);
            REQUIRE(memory_size(parse_memory_spec(log), shape).state_floats == memory_size(parse_memory_spec(lin), shape).state_floats);
            auto a = built(log, budget), b = built(lin, budget);
            REQUIRE(a->param_floats() == b->param_floats());
            a->write_batch(x.keys, x.values), b->write_batch(x.keys, x.values);
            REQUIRE(Vec(a->state()) == Vec(b->state()));
            REQUIRE(reads(*a, x.queries) == reads(*b, x.queries));
            // one write at a time, and one read at a time
            auto c = built(log, budget), e = built(lin, budget);
            for (Eigen::Index i = 0; i < 10; ++i) {
                c->write(x.keys.row(i).transpose(), x.values.row(i).transpose());
                e->write(x.keys.row(i).transpose(), x.values.row(i).transpose());
            }
            REQUIRE(Vec(c->state()) == Vec(e->state()));
            Vec oc(kHybridD), oe(kHybridD);
            c->read(x.queries.row(3).transpose(), oc), e->read(x.queries.row(3).transpose(), oe);
            REQUIRE(oc == oe);
            // the causal form (the grid's is chunked): within rounding
            RowMat ca(x.keys.rows(), kHybridD), cb(x.keys.rows(), kHybridD);
            built(log, budget)->causal(x.queries, x.keys, x.values, TokenGates{}, ca);
            built(lin, budget)->causal(x.queries, x.keys, x.values, TokenGates{}, cb);
            REQUIRE((ca - cb).cwiseAbs().maxCoeff() < 1e-5f);
        }
}

TEST_CASE("loglinear: the levels hold the Fenwick blocks, and the read weights them by ratio^level", "[memory][loglinear]") {
    const Data x = data(8, 45);
    for (const int levels : {2, 3, 4, 7}) {
        CAPTURE(levels);
        // each level d x d (phi the identity) and the counter: the budget divided equally
        const std::int64_t budget = levels * kHybridD * kHybridD + 1;
        const std::string text = "loglinear:levels=" + std::to_string(levels) + ",ratio=0.5";
        const MemorySize size = memory_size(parse_memory_spec(text), MemoryShape(kHybridD, kHybridD, budget));
        REQUIRE(size.dim("d_phi") == kHybridD);
        REQUIRE(size.state_floats == budget);
        REQUIRE(memory_size(parse_memory_spec(text), MemoryShape(kHybridD, kHybridD, budget - 1)).dim("d_phi") == kHybridD - 1);
        auto m = built(text, budget);
        const int d2 = kHybridD * kHybridD;
        for (int t = 0; t < static_cast<int>(x.keys.rows()); ++t) {
            m->write(x.keys.row(t).transpose(), x.values.row(t).transpose());
            if (t % 5 != 4 && t != 31 && t != 32) continue;
            CAPTURE(t);
            std::vector<RowMat> expect(static_cast<std::size_t>(levels), RowMat::Zero(kHybridD, kHybridD));
            for (int j = 0; j <= t; ++j)
                expect[static_cast<std::size_t>(fenwick_level(t, j, levels))] += x.values.row(j).transpose() * x.keys.row(j);
            const ConstStateView s = m->state();
            RowMat read_weights = RowMat::Zero(kHybridD, kHybridD);
            for (int l = 0; l < levels; ++l) {
                const RowMat held = Eigen::Map<const RowMat>(s.data() + l * d2, kHybridD, kHybridD);
                REQUIRE((held - expect[static_cast<std::size_t>(l)]).cwiseAbs().maxCoeff() < 1e-5f);
                read_weights += std::pow(0.5f, float(l)) * expect[static_cast<std::size_t>(l)];
            }
            REQUIRE(s[levels * d2] == float((t + 1) % (1 << (levels - 1))));  // the counter
            Vec out(kHybridD);
            m->read(x.queries.row(t).transpose(), out);
            REQUIRE((out - read_weights * x.queries.row(t).transpose()).cwiseAbs().maxCoeff() < 1e-5f);
        }
        // the batched write leaves the same state; ratio 1 reads as the linear grid of the levels' width
        auto batch = built(text, budget), flat = built("loglinear:levels=" + std::to_string(levels) + ",ratio=1", budget);
        batch->write_batch(x.keys, x.values), flat->write_batch(x.keys, x.values);
        REQUIRE(Vec(batch->state()) == Vec(m->state()));
        auto grid = built("linear", kHybridD * kHybridD);
        grid->write_batch(x.keys, x.values);
        REQUIRE((reads(*flat, x.queries) - reads(*grid, x.queries)).cwiseAbs().maxCoeff() < 1e-4f);
        REQUIRE((reads(*batch, x.queries) - reads(*flat, x.queries)).cwiseAbs().maxCoeff() > 1e-2f);
    }
}

TEST_CASE("loglinear: the budget caps the levels, and bad settings are refused", "[memory][loglinear]") {
    for (const std::int64_t budget : {256, 1000, 4096})
        for (const int levels : {1, 2, 4, 8}) {
            CAPTURE(budget, levels);
            const std::string text = "loglinear:levels=" + std::to_string(levels);
            const MemorySize size = memory_size(parse_memory_spec(text), MemoryShape(kHybridD, kHybridD, budget));
            const std::int64_t counter = levels >= 2 ? 1 : 0;
            REQUIRE(size.dim("d_phi") == (budget - counter) / levels / kHybridD);
            REQUIRE(size.state_floats == levels * kHybridD * size.dim("d_phi") + counter);
            REQUIRE(size.state_floats <= budget);
            REQUIRE(built(text, budget)->state_floats() == size.state_floats);
        }
    const MemoryShape tight(kHybridD, kHybridD, 4 * kHybridD);  // 4 levels need 4 d_v + 1
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("loglinear:levels=4"), tight, 1), Catch::Contains(std::to_string(4 * kHybridD + 1)));
    REQUIRE_THROWS_WITH(parse_memory_spec("loglinear:levels=0"), Catch::Contains("levels"));
    REQUIRE_THROWS_WITH(parse_memory_spec("loglinear:ratio=0"), Catch::Contains("ratio"));
    REQUIRE_THROWS_WITH(parse_memory_spec("loglinear:ratio=1.5"), Catch::Contains("ratio"));
}

TEST_CASE("mom: one memory is its base memory, bit for bit", "[memory][mom]") {
    const Data x = data(9, 40);
    for (const std::int64_t budget : {256, 1000, 4096})
        for (const std::string base : {"gated_deltanet", "gated_deltanet:alpha=0.9,beta=0.5", "linear", "delta:beta=0.5"}) {
            CAPTURE(budget, base);
            const std::string name = base.substr(0, base.find(':'));
            const std::string settings = base.find(':') == std::string::npos ? "" : "," + base.substr(base.find(':') + 1);
            const std::string text = "mom:memories=1,topk=2,temp=4,base=" + name + settings;
            const MemoryShape shape(kHybridD, kHybridD, budget);
            REQUIRE(memory_size(parse_memory_spec(text), shape).state_floats == memory_size(parse_memory_spec(base), shape).state_floats);
            auto m = built(text, budget), alone = built(base, budget);
            REQUIRE(m->param_floats() == alone->param_floats());
            m->write_batch(x.keys, x.values), alone->write_batch(x.keys, x.values);
            REQUIRE(Vec(m->state()) == Vec(alone->state()));
            REQUIRE(reads(*m, x.queries) == reads(*alone, x.queries));
            RowMat a(x.keys.rows(), kHybridD), b(x.keys.rows(), kHybridD);
            built(text, budget)->causal(x.queries, x.keys, x.values, TokenGates{}, a);
            built(base, budget)->causal(x.queries, x.keys, x.values, TokenGates{}, b);
            REQUIRE(a == b);
        }
}

TEST_CASE("mom: the router writes each pair to its top k memories and mixes their reads", "[memory][mom]") {
    const Data x = data(10, 30);
    const std::int64_t budget = 4 * kHybridD * kHybridD;  // 4 memories of d x d: phi the identity
    const MemoryShape shape(kHybridD, kHybridD, budget);
    const MemorySize size = memory_size(parse_memory_spec("mom:memories=4,base=linear"), shape);
    REQUIRE(size.dim("memories") == 4);
    REQUIRE(size.dim("d_phi") == kHybridD);
    REQUIRE(size.state_floats == budget);
    REQUIRE(memory_size(parse_memory_spec("mom:memories=3,shared=1,base=linear"), MemoryShape(kHybridD, kHybridD, budget + 5)).state_floats == budget);
    const int d2 = kHybridD * kHybridD;
    // a linear memory holds Σ v kᵀ of the pairs routed to it: every pair is in exactly k memories
    for (const int k : {1, 2, 3}) {
        CAPTURE(k);
        auto m = built("mom:memories=4,base=linear,temp=2,topk=" + std::to_string(k), budget);
        m->write_batch(x.keys, x.values);
        RowMat total = RowMat::Zero(kHybridD, kHybridD), all = RowMat::Zero(kHybridD, kHybridD);
        for (int p = 0; p < 4; ++p) total += Eigen::Map<const RowMat>(m->state().data() + p * d2, kHybridD, kHybridD);
        for (Eigen::Index i = 0; i < x.keys.rows(); ++i) all += x.values.row(i).transpose() * x.keys.row(i);
        REQUIRE((total - float(k) * all).cwiseAbs().maxCoeff() < 1e-4f);
        // one write at a time leaves the same state
        auto one = built("mom:memories=4,base=linear,temp=2,topk=" + std::to_string(k), budget);
        for (Eigen::Index i = 0; i < x.keys.rows(); ++i) one->write(x.keys.row(i).transpose(), x.values.row(i).transpose());
        REQUIRE((Vec(one->state()) - Vec(m->state())).cwiseAbs().maxCoeff() < 1e-5f);
        // a read mixes k memories' reads with weights summing to 1: with every memory holding
        // the same pairs (topk = M), the mixture is any one memory's read
        if (k == 1) {
            // the hash: the pair's key routes its read to the memory it was written to, which
            // holds it alone here (a memory written once reads v (k·k) = v exactly for unit keys)
            auto lone = built("mom:memories=4,base=linear,topk=1", budget);
            lone->write(x.keys.row(0).transpose(), x.values.row(0).transpose());
            Vec out(kHybridD);
            lone->read(x.keys.row(0).transpose(), out);
            REQUIRE((out - x.values.row(0).transpose()).cwiseAbs().maxCoeff() < 1e-5f);
        }
    }
    auto every = built("mom:memories=4,topk=4,temp=3,base=linear", budget), grid = built("linear", kHybridD * kHybridD);
    every->write_batch(x.keys, x.values), grid->write_batch(x.keys, x.values);
    REQUIRE((reads(*every, x.queries) - reads(*grid, x.queries)).cwiseAbs().maxCoeff() < 1e-4f);
    // the shared memory takes every pair and adds its read
    auto with = built("mom:memories=2,shared=1,topk=2,base=linear", 3 * kHybridD * kHybridD);
    with->write_batch(x.keys, x.values);
    REQUIRE((reads(*with, x.queries) - 2.0f * reads(*grid, x.queries)).cwiseAbs().maxCoeff() < 1e-4f);
    // bad input
    REQUIRE_THROWS_WITH(parse_memory_spec("mom:memories=0"), Catch::Contains("memories"));
    REQUIRE_THROWS_WITH(parse_memory_spec("mom:base=softmax"), Catch::Contains("base=softmax"));
    REQUIRE_THROWS_WITH(memory_size(parse_memory_spec("mom:alpha=1.5"), shape), Catch::Contains("alpha"));
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("mom:memories=4,base=linear"), MemoryShape(kHybridD, kHybridD, 4 * kHybridD - 1), 1),
                        Catch::Contains(std::to_string(4 * kHybridD)));
}
