// The softmax cache's KV policies (memories/softmax/kv_policy.hpp): each never holds more than
// its budget, counted in bytes, at any token of a long causal stream; the special cases that
// make a policy FIFO are FIFO; each attention-scored policy keeps what its rule says it keeps.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace memcap;
using memcap::test::unit_rows;

namespace {

const std::vector<std::string>& kv_policy_names() {
    static const std::vector<std::string> names = {"sink_cache", "h2o",      "tova", "snapkv", "knorm",
                                                   "random_evict", "kv_merge", "kivi", "mla"};
    return names;
}

RowMat kv_state(const Memory& m) { return RowMat(Vec(m.state()).transpose()); }

/// The [k | v] part of each row of a cache's state (`extra` floats after each pair dropped).
RowMat kv_pairs(const Memory& m, int d, int extra, std::int64_t fixed = 0) {
    const Vec s = m.state();
    const Eigen::Index row = 2 * d + extra, rows = (s.size() - fixed) / row;
    RowMat out(rows, 2 * d);
    for (Eigen::Index r = 0; r < rows; ++r) out.row(r) = s.segment(fixed + r * row, 2 * d).transpose();
    return out;
}

}  // namespace

TEST_CASE("a KV policy never holds more than its budget, in bytes, at any token", "[memory][kv]") {
    const std::string name = GENERATE(from_range(kv_policy_names()));
    CAPTURE(name);
    const int d = 16;
    Rng data = Rng::stream("kv budget", name);
    const Eigen::Index t = 300;
    const RowMat q = unit_rows(data, t, d), k = unit_rows(data, t, d), v = unit_rows(data, t, d);
    for (const std::int64_t budget : {256, 300, 1000, 4096}) {
        for (const std::string& text : memcap::test::conformance_specs()) {
            if (text != name && text.rfind(name + ":", 0) != 0) continue;
            const Spec spec = parse_memory_spec(text);
            if (spec_precision(spec) != Precision::fp32) continue;  // below fp32: bits, the conformance test's
            const MemoryShape shape{d, d, budget};
            if (find_memory(name).min_budget(spec, shape) > budget) continue;
            CAPTURE(text, budget);
            auto m = make_memory(spec, shape, 11);
            const MemorySize size = memory_size(spec, shape);
            REQUIRE(size.state_floats * 4 <= budget * 4);
            Vec out(d);
            std::int64_t peak = 0;
            for (Eigen::Index i = 0; i < t; ++i) {
                m->write(k.row(i).transpose(), v.row(i).transpose());
                m->read(q.row(i).transpose(), out);
                REQUIRE(m->state_floats() * static_cast<std::int64_t>(sizeof(float)) <= budget * 4);
                REQUIRE(m->state().size() == m->state_floats());
                REQUIRE(m->state_floats() == size.state_floats_after(i + 1));
                peak = std::max(peak, m->state_floats());
            }
            // once full, the sizing function's count (KIVI's window fills and empties by groups: its peak)
            if (size.dim("pairs") <= t) REQUIRE(peak == size.state_floats);
            else REQUIRE(peak < size.state_floats);  // a compressed cache holding more than t pairs
        }
    }
}

TEST_CASE("attention sinks at sinks=0 are FIFO, bit for bit", "[memory][kv]") {
    const int d = 16;
    Rng data = Rng::stream("kv sinks");
    const RowMat q = unit_rows(data, 120, d), k = unit_rows(data, 120, d), v = unit_rows(data, 120, d);
    const MemoryShape shape{d, d, 320};
    auto sinks = make_memory(parse_memory_spec("sink_cache:sinks=0"), shape, 1);
    auto fifo = make_memory(parse_memory_spec("softmax"), shape, 1);
    RowMat a(120, d), b(120, d);
    sinks->causal(q, k, v, TokenGates{}, a);
    fifo->causal(q, k, v, TokenGates{}, b);
    REQUIRE(a == b);
    REQUIRE(kv_state(*sinks) == kv_state(*fifo));
    // with sinks the first pairs stay: the first key still reads its value after 120 writes
    auto kept = make_memory(parse_memory_spec("sink_cache:sinks=2,beta=inf"), shape, 1);
    kept->causal(q, k, v, TokenGates{}, a);
    Vec out(d);
    kept->read(k.row(0).transpose(), out);
    REQUIRE((out - v.row(0).transpose()).norm() < 1e-6f);
    fifo->read(k.row(0).transpose(), out);
    REQUIRE((out - v.row(0).transpose()).norm() > 0.1f);
}

TEST_CASE("H2O with the recent window the whole cache is FIFO", "[memory][kv]") {
    const int d = 16;
    const std::int64_t pairs = 9;
    Rng data = Rng::stream("kv h2o fifo");
    const RowMat q = unit_rows(data, 100, d), k = unit_rows(data, 100, d), v = unit_rows(data, 100, d);
    auto h2o = make_memory(parse_memory_spec("h2o:recent=1"), MemoryShape{d, d, pairs * (2 * d + 2)}, 1);
    auto fifo = make_memory(parse_memory_spec("softmax"), MemoryShape{d, d, pairs * 2 * d}, 1);
    RowMat a(100, d), b(100, d);
    h2o->causal(q, k, v, TokenGates{}, a);
    fifo->causal(q, k, v, TokenGates{}, b);
    REQUIRE((a - b).cwiseAbs().maxCoeff() < 1e-6f);
    REQUIRE(kv_pairs(*h2o, d, 2) == kv_pairs(*fifo, d, 0));  // the same pairs in the same slots
}

TEST_CASE("attention-scored policies keep the pair the queries ask for, FIFO loses it", "[memory][kv]") {
    // One pair, then a stream of others, each token's query the first key: H2O, TOVA, SnapKV and
    // merging keep it (it draws the attention), FIFO and random eviction lose it.
    const int d = 16;
    Rng data = Rng::stream("kv heavy hitter");
    const Eigen::Index t = 200;
    const RowMat k = unit_rows(data, t, d), v = unit_rows(data, t, d);
    const RowMat q = k.row(0).replicate(t, 1);
    const auto kept = [&](const std::string& text) {
        auto m = make_memory(parse_memory_spec(text), MemoryShape{d, d, 512}, 1);
        RowMat out(t, d);
        m->causal(q, k, v, TokenGates{}, out);
        return (out.row(t - 1) - v.row(0)).norm() < 1e-3f;
    };
    for (const char* text : {"h2o:beta=inf", "h2o:beta=inf,recent=0", "tova:beta=inf", "snapkv:beta=inf", "kv_merge:beta=inf"}) {
        CAPTURE(text);
        REQUIRE(kept(text));
    }
    REQUIRE_FALSE(kept("softmax:beta=inf"));
    REQUIRE_FALSE(kept("random_evict:beta=inf"));
    REQUIRE_FALSE(kept("h2o:beta=inf,recent=1"));
}

TEST_CASE("KNorm keeps the keys of smallest norm", "[memory][kv]") {
    const int d = 8;
    Rng data = Rng::stream("kv knorm");
    RowMat k = unit_rows(data, 10, d);
    const RowMat v = unit_rows(data, 10, d);
    for (Eigen::Index i = 0; i < 10; ++i) k.row(i) *= 1.0f + 0.1f * static_cast<float>((i * 7) % 10);  // norms 1 .. 1.9, shuffled
    auto m = make_memory(parse_memory_spec("knorm"), MemoryShape{d, d, 4 * 2 * d}, 1);
    m->write_batch(k, v);
    std::vector<float> held, smallest;
    const RowMat pairs = kv_pairs(*m, d, 0);
    for (Eigen::Index r = 0; r < pairs.rows(); ++r) held.push_back(pairs.row(r).leftCols(d).norm());
    for (Eigen::Index i = 0; i < 10; ++i) smallest.push_back(k.row(i).norm());
    std::sort(held.begin(), held.end());
    std::sort(smallest.begin(), smallest.end());
    smallest.resize(4);
    for (std::size_t i = 0; i < 4; ++i) REQUIRE(std::abs(held[i] - smallest[i]) < 1e-5f);
}

TEST_CASE("random eviction is the cell's stream: the same seed, the same pairs, another seed others", "[memory][kv]") {
    const int d = 16;
    Rng data = Rng::stream("kv random");
    const RowMat k = unit_rows(data, 200, d), v = unit_rows(data, 200, d);
    const Spec spec = parse_memory_spec("random_evict");
    const MemoryShape shape{d, d, 320};
    auto a = make_memory(spec, shape, 1), b = make_memory(spec, shape, 1), c = make_memory(spec, shape, 2);
    for (auto* m : {a.get(), b.get(), c.get()}) m->write_batch(k, v);
    REQUIRE(kv_state(*a) == kv_state(*b));
    REQUIRE(kv_state(*a) != kv_state(*c));
    a->reset();
    a->write_batch(k, v);
    REQUIRE(kv_state(*a) == kv_state(*b));  // reset restarts the draws
    auto fifo = make_memory(parse_memory_spec("softmax"), shape, 1);
    fifo->write_batch(k, v);
    REQUIRE(kv_state(*fifo).cols() == kv_state(*a).cols());
    REQUIRE(kv_state(*a) != kv_state(*fifo));
}

TEST_CASE("merging folds the evicted pair into the nearest kept one, weighted by attention", "[memory][kv]") {
    // keys e1, e1, e2 into two slots, recent window 1, written without reads (each key its own
    // query): e1 scores 1 + 1/2, its copy 1/2; the copy is evicted and merged into e1's slot with
    // weights 3/4 and 1/4, and e2 takes the freed slot.
    const int d = 4;
    RowMat k = RowMat::Zero(3, d), v(3, d);
    k(0, 0) = 1.0f, k(1, 0) = 1.0f, k(2, 1) = 1.0f;
    v << 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0;
    auto m = make_memory(parse_memory_spec("kv_merge:beta=inf,recent=0.5"), MemoryShape{d, d, 2 * (2 * d + 2)}, 1);
    m->write_batch(k, v);
    Vec out(d);
    m->read(k.row(0).transpose(), out);
    const Vec expected = 0.75f * v.row(0).transpose() + 0.25f * v.row(1).transpose();
    REQUIRE((out - expected).norm() < 1e-6f);
    m->read(k.row(2).transpose(), out);
    REQUIRE((out - v.row(2).transpose()).norm() < 1e-6f);
}

TEST_CASE("a KV policy's settings are checked: unknown keys, windows the budget cannot hold", "[memory][kv]") {
    REQUIRE_THROWS_AS(parse_memory_spec("h2o:window=3"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("h2o:recent=1.5"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("sink_cache:sinks=-1"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("snapkv:window=0"), UsageError);
    // sinks or an observation window the budget cannot hold (with one more pair) name the minimum
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("sink_cache:sinks=8"), MemoryShape{16, 16, 256}, 0),
                        Catch::Contains("minimum"));
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("snapkv:window=16"), MemoryShape{16, 16, 512}, 0),
                        Catch::Contains("minimum"));
    REQUIRE_NOTHROW(make_memory(parse_memory_spec("sink_cache:sinks=7"), MemoryShape{16, 16, 256}, 0));
}

// ---- The caches that keep each pair in fewer floats (memories/softmax/compressed_cache.hpp) ----

TEST_CASE("KIVI with the full-precision window covering the budget is the plain cache, bit for bit", "[memory][kv]") {
    const int d = 16;
    Rng data = Rng::stream("kv kivi plain");
    const RowMat q = unit_rows(data, 150, d), k = unit_rows(data, 150, d), v = unit_rows(data, 150, d);
    // R = 10 pairs of 32 floats: B = 320 holds the window and no group beside it; a larger budget
    // whose groups (G = 32) do not fit beside the window of R + G − 1 pairs is the plain cache too
    for (const auto& [text, budget] : {std::pair<const char*, std::int64_t>{"kivi:residual=10", 320},
                                       {"kivi:residual=10,bits=4", 320}, {"kivi", 1024}}) {
        CAPTURE(text, budget);
        const MemoryShape shape{d, d, budget};
        REQUIRE(memory_size(parse_memory_spec(text), shape).dim("groups") == 0);
        auto kivi = make_memory(parse_memory_spec(text), shape, 1);
        auto fifo = make_memory(parse_memory_spec("softmax"), shape, 1);
        RowMat a(150, d), b(150, d);
        kivi->causal(q, k, v, TokenGates{}, a);
        fifo->causal(q, k, v, TokenGates{}, b);
        REQUIRE(a == b);
        REQUIRE(kv_state(*kivi) == kv_state(*fifo));
    }
}

TEST_CASE("KIVI reads back what it quantised within half a step, and 2 bits lose more than 8", "[memory][kv]") {
    // Keys per channel and values per token, min-max at 2^b − 1 steps with half scales and zeros:
    // a dequantised entry is within half a step (the group's range / (2^b − 1) / 2, at most 1 / (2^b − 1)
    // for unit rows) and the half's rounding of the zero point (2^−11 of it) of the entry written.
    const int d = 16;
    Rng data = Rng::stream("kv kivi error");
    const Eigen::Index n = 63;  // 7 groups of 8 quantised (at writes 8, 16, ..., 56), the last 7 in the window
    const RowMat k = unit_rows(data, n, d), v = unit_rows(data, n, d);
    const auto worst = [&](const std::string& bits) {
        // unbounded: groups of 8, nothing evicted
        auto m = make_memory(parse_memory_spec("kivi:beta=inf,group=8,bits=" + bits), MemoryShape{d, d, {}}, 1);
        m->write_batch(k, v);
        RowMat reads(n, d);
        m->read_batch(k, reads);
        float err = 0.0f;
        for (Eigen::Index i = 0; i < n - 7; ++i) err = std::max(err, (reads.row(i) - v.row(i)).cwiseAbs().maxCoeff());
        for (Eigen::Index i = n - 7; i < n; ++i) REQUIRE(reads.row(i) == v.row(i));  // the window: exact
        return err;
    };
    const float at8 = worst("8"), at4 = worst("4"), at2 = worst("2");
    CHECK(at8 < 1.0f / 255.0f + 1e-3f);
    CHECK(at8 > 0.0f);
    CHECK(at4 < 1.0f / 15.0f + 1e-3f);
    CHECK(at2 > 4.0f * at8);
}

TEST_CASE("KIVI at a budget holds the newest pairs and evicts a group at a time", "[memory][kv]") {
    const int d = 8;
    Rng data = Rng::stream("kv kivi fifo");
    const Eigen::Index n = 400;
    const RowMat k = unit_rows(data, n, d), v = unit_rows(data, n, d);
    const Spec spec = parse_memory_spec("kivi:beta=inf,bits=8,group=4,residual=2");
    const MemoryShape shape{d, d, 512};
    const MemorySize size = memory_size(spec, shape);
    const std::int64_t groups = size.dim("groups"), window = size.dim("window"), g = 4;
    REQUIRE(groups > 0);
    REQUIRE(window >= 2 + g - 1);
    REQUIRE(size.dim("pairs") > 512 / (2 * d));  // more pairs than the plain cache's 32
    auto m = make_memory(spec, shape, 1);
    m->write_batch(k, v);
    const std::int64_t made = (n - window - 1) / g + 1, held = groups * g + (n - made * g);
    Vec out(d);
    for (Eigen::Index i = n - held; i < n; ++i) {  // every held pair reads back (8 bits: within a step)
        m->read(k.row(i).transpose(), out);
        REQUIRE((out - v.row(i).transpose()).cwiseAbs().maxCoeff() < 0.02f);
    }
    for (Eigen::Index i = n - held - g; i < n - held; ++i) {  // the group evicted last is gone
        m->read(k.row(i).transpose(), out);
        REQUIRE((out - v.row(i).transpose()).norm() > 0.1f);
    }
}

TEST_CASE("KIVI's settings are checked: bits, a window the budget cannot hold", "[memory][kv]") {
    REQUIRE_THROWS_AS(parse_memory_spec("kivi:bits=3"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("kivi:bits=16"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("kivi:group=0"), UsageError);
    REQUIRE_THROWS_AS(parse_memory_spec("kivi:residual=-1"), UsageError);
    REQUIRE_THROWS_WITH(make_memory(parse_memory_spec("kivi:residual=9"), MemoryShape{16, 16, 256}, 0),
                        Catch::Contains("minimum"));
    REQUIRE_NOTHROW(make_memory(parse_memory_spec("kivi:residual=8"), MemoryShape{16, 16, 256}, 0));
}

TEST_CASE("MLA with the latent as wide as the pair is the plain cache, up to rounding", "[memory][kv]") {
    const int d = 16;
    Rng data = Rng::stream("kv mla plain");
    const RowMat q = unit_rows(data, 150, d), k = unit_rows(data, 150, d), v = unit_rows(data, 150, d);
    for (const char* beta : {"16", "inf"}) {
        CAPTURE(beta);
        const MemoryShape shape{d, d, 40 * 2 * d};
        auto mla = make_memory(parse_memory_spec(std::string("mla:latent=1,beta=") + beta), shape, 3);
        auto fifo = make_memory(parse_memory_spec(std::string("softmax:beta=") + beta), shape, 3);
        REQUIRE(mla->state_floats() == 0);
        REQUIRE(mla->param_floats() == 2 * (2 * d) * (2 * d));
        RowMat a(150, d), b(150, d);
        mla->causal(q, k, v, TokenGates{}, a);
        fifo->causal(q, k, v, TokenGates{}, b);
        REQUIRE((a - b).cwiseAbs().maxCoeff() < 1e-5f);
        REQUIRE(mla->state_floats() == fifo->state_floats());  // 40 latents of 2d floats
    }
}

TEST_CASE("MLA keeps a latent of r floats a pair: an orthonormal projection, more pairs at a budget", "[memory][kv]") {
    const int d = 16;
    Rng data = Rng::stream("kv mla latent");
    const RowMat k = unit_rows(data, 1, d), v = unit_rows(data, 1, d);
    for (const double share : {1.0, 0.5, 0.25}) {
        CAPTURE(share);
        const Spec spec = parse_memory_spec("mla:latent=" + format_real(share));
        const MemorySize size = memory_size(spec, MemoryShape{d, d, 1024});
        const std::int64_t r = size.dim("latent");
        REQUIRE(r == static_cast<std::int64_t>(share * 2 * d));
        REQUIRE(size.dim("pairs") == 1024 / r);
        auto m = make_memory(spec, MemoryShape{d, d, 1024}, 5);
        m->write_batch(k, v);
        REQUIRE(m->state_floats() == r);
        // the latent's norm: the pair's (sqrt 2) when r = 2d, less when the projection drops a part
        const float norm = Vec(m->state()).norm();
        if (share == 1.0) REQUIRE(std::abs(norm - std::sqrt(2.0f)) < 1e-5f);
        else REQUIRE(norm < std::sqrt(2.0f) - 1e-3f);
    }
}
