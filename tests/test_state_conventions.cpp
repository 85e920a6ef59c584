// State as the field counts it: symmetric state is stored and counted as its unique entries
// (Based's Taylor features, MesaNet's H), the state view holds exactly state_floats floats, the
// Taylor kernel is the one of the full vec(y yᵀ)/√2 map, and each memory zoology also has is
// counted beside zoology's formula (its mixers' state_size(), github.com/HazyResearch/zoology):
// equal where the conventions agree, off by zoology's normaliser where they differ.
#include "core/rng.hpp"
#include "core/spec.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/registry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

using namespace memcap;

namespace {

std::int64_t taylor_features(std::int64_t m) { return 1 + m + m * (m + 1) / 2; }

/// The widths and budgets the state formulas are checked at (no budget: the natural size).
std::vector<std::pair<int, std::optional<std::int64_t>>> shapes() {
    std::vector<std::pair<int, std::optional<std::int64_t>>> out;
    for (const int d : {8, 32, 64})
        for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>{}, std::optional<std::int64_t>{1024},
                                                         std::optional<std::int64_t>{4096}, std::optional<std::int64_t>{16384}})
            out.emplace_back(d, budget);
    return out;
}

}  // namespace

TEST_CASE("Based keeps y y^T's unique entries: d_v (1 + m + m(m+1)/2) floats, the same kernel", "[memory][state][based]") {
    for (const auto& at : shapes()) {
        const int d = at.first;
        const std::optional<std::int64_t> budget = at.second;
        CAPTURE(d, budget.value_or(-1));
        const MemoryShape shape(d, d, budget);
        const MemorySize size = memory_size(parse_memory_spec("based"), shape);
        const std::int64_t m = size.dim("m");
        REQUIRE(size.dim("d_phi") == taylor_features(m));
        REQUIRE(size.state_floats == d * taylor_features(m));
        if (budget) {  // m is the largest that fits
            REQUIRE(d * taylor_features(m) <= *budget);
            REQUIRE(d * taylor_features(m + 1) > *budget);
        } else {
            REQUIRE(m == d);
        }
        auto mem = make_memory(parse_memory_spec("based"), shape, 3);
        REQUIRE(mem->state_floats() == size.state_floats);
        REQUIRE(mem->state().size() == size.state_floats);
    }
    // at d_v = 64: m = 9 at 4096 floats (1 + 9 + 45 = 55 <= 64 < 66), m = 21 at 16384 (253 <= 256 < 276)
    REQUIRE(memory_size(parse_memory_spec("based"), MemoryShape(64, 64, 4096)).dim("m") == 9);
    REQUIRE(memory_size(parse_memory_spec("based"), MemoryShape(64, 64, 16384)).dim("m") == 21);

    // the kernel: φ(q)·φ(k) = 1 + s² y_q·y_k + s⁴ (y_q·y_k)²/2, as with the full map (y = x at m = d_k)
    for (const double scale : {1.0, 2.0}) {
        const int d = 12;
        Rng rng = Rng::stream("state_conventions", "taylor", d);
        RowMat x(5, d);
        rng.fill_normal(x);
        normalise_rows(x);
        Rng params = Rng::stream("state_conventions", "taylor params", d);
        const FeatureMap phi("taylor", d, taylor_features(d), 1, params, scale);
        REQUIRE(phi.dim() == taylor_features(d));
        RowMat f(5, phi.dim());
        phi.apply(x, f);
        const RowMat kernel = f * f.transpose();
        for (int i = 0; i < 5; ++i)
            for (int j = 0; j < 5; ++j) {
                const double c = scale * scale * double(x.row(i).dot(x.row(j)));
                CHECK(kernel(i, j) == Approx(1.0 + c + c * c / 2.0).epsilon(1e-5));
            }
    }
}

TEST_CASE("MesaNet keeps H's lower triangle: d_phi(d_phi+1)/2 + d_v d_phi floats", "[memory][state][mesanet]") {
    for (const auto& at : shapes()) {
        const int d = at.first;
        const std::optional<std::int64_t> budget = at.second;
        CAPTURE(d, budget.value_or(-1));
        const MemoryShape shape(d, d, budget);
        const MemorySize size = memory_size(parse_memory_spec("mesanet"), shape);
        const std::int64_t p = size.dim("d_phi");
        const auto floats = [d](std::int64_t k) { return k * (k + 1) / 2 + d * k; };
        REQUIRE(size.state_floats == floats(p));
        if (budget) {
            REQUIRE(floats(p) <= *budget);
            REQUIRE(floats(p + 1) > *budget);
        } else {
            REQUIRE(p == d);
        }
        auto mem = make_memory(parse_memory_spec("mesanet"), shape, 3);
        REQUIRE(mem->state_floats() == size.state_floats);
        REQUIRE(mem->state().size() == size.state_floats);
    }
    // the state is G, then H's lower triangle row by row: after one write of (k, v) with unit φ(k) = k
    // (natural size), H = k kᵀ and G = v kᵀ
    const int d = 4;
    auto mem = make_memory(parse_memory_spec("mesanet"), MemoryShape(d, d), 1);
    RowMat k(1, d), v(1, d);
    k << 0.5f, 0.5f, 0.5f, -0.5f;
    v << 1.0f, 2.0f, 3.0f, 4.0f;
    mem->write_batch(k, v);
    const Vec s = mem->state();
    REQUIRE(s.size() == d * d + d * (d + 1) / 2);
    for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) CHECK(s(i * d + j) == Approx(v(0, i) * k(0, j)));
    for (int i = 0, c = d * d; i < d; ++i)
        for (int j = 0; j <= i; ++j, ++c) CHECK(s(c) == Approx(k(0, i) * k(0, j)));
}

TEST_CASE("memcap's state count beside zoology's state_size() for the mixers both have", "[memory][state][zoology]") {
    // zoology's formulas, written out here from its mixers' state_size() (one head):
    //   delta_net.py, gated_delta_net.py: num_heads * head_k_dim * head_v_dim
    //   gla.py: key_dim * head_v_dim (no short convolution)
    //   mamba.py, mamba2.py: 2 * d_model * d_state, d_inner = 2 d_model channels
    //   attention.py: 2 * d_model * sequence_length; slide_attn.py: 2 * d_model * block_size
    //   based.py: heads * head_dim * expanded + heads * expanded; feature_maps/taylor.py:
    //     expanded = m(m+1)/2 + m + 1; feature_maps/base.py (a plain map): expanded = feature_dim
    const auto zoology_grid = [](std::int64_t d_k, std::int64_t d_v) { return d_k * d_v; };
    const auto zoology_mamba = [](std::int64_t d_model, std::int64_t d_state) { return 2 * d_model * d_state; };
    const auto zoology_window = [](std::int64_t d_model, std::int64_t pairs) { return 2 * d_model * pairs; };
    const auto zoology_based = [](std::int64_t head_dim, std::int64_t expanded) { return head_dim * expanded + expanded; };

    int checked = 0;
    for (const int d : {16, 32, 64})
        for (const std::int64_t budget : {std::int64_t{1024}, std::int64_t{4096}, std::int64_t{16384}}) {
            const MemoryShape shape(d, d, budget);
            for (const MemoryEntry& e : memory_registry()) {
                if (!e.zoology) continue;
                CAPTURE(e.name, d, budget);
                const MemorySize size = memory_size(parse_memory_spec(e.name), shape);
                const std::int64_t zoology = e.zoology->floats(size, shape);
                const std::int64_t memcap = size.state_floats;
                REQUIRE_FALSE(e.zoology->formula.empty());
                REQUIRE(e.zoology->formula.find("zoology/mixers/") != std::string::npos);  // names its source file
                if (e.name == "delta" || e.name == "deltanet" || e.name == "gated_deltanet" || e.name == "gla") {
                    REQUIRE(zoology == zoology_grid(size.dim("d_phi"), d));
                    REQUIRE(memcap == zoology);  // the conventions agree
                } else if (e.name == "selective" || e.name == "mamba2") {
                    REQUIRE(zoology == zoology_mamba(d / 2, size.dim("d_phi")));
                    REQUIRE(memcap == zoology);
                } else if (e.name == "softmax" || e.name == "sliding_window") {
                    REQUIRE(zoology == zoology_window(d, size.dim("pairs")));
                    REQUIRE(memcap == zoology);  // no null slot by default
                } else if (e.name == "based") {
                    const std::int64_t expanded = taylor_features(size.dim("m"));
                    REQUIRE(zoology == zoology_based(d, expanded));
                    REQUIRE(memcap == zoology - expanded);  // zoology also keeps the normaliser Σ φ(k)
                } else if (e.name == "linear") {
                    REQUIRE(zoology == zoology_based(d, size.dim("d_phi")));
                    REQUIRE(memcap == zoology - size.dim("d_phi"));
                } else {
                    FAIL("a zoology count this test does not check: " + e.name);
                }
                ++checked;
            }
        }
    REQUIRE(checked == 9 * 10);  // delta, deltanet, gated_deltanet, gla, selective, mamba2, softmax, sliding_window, linear, based
    // the cache without a budget is unbounded in both conventions
    const MemorySize open = memory_size(parse_memory_spec("softmax"), MemoryShape(64, 64));
    REQUIRE(find_memory("softmax").zoology->floats(open, MemoryShape(64, 64)) == -1);
    // a null slot's row is counted by memcap, not by zoology's cache of the pairs
    const MemoryShape shape(64, 64, 1024);
    const MemorySize with_null = memory_size(parse_memory_spec("softmax:null=4"), shape);
    REQUIRE(with_null.state_floats == find_memory("softmax").zoology->floats(with_null, shape) + 128);
    // `memcap list`'s line
    const std::string line = describe_zoology(find_memory("based"));
    REQUIRE(line.find("at d=64, B=1024: 975 floats (memcap: 960)") != std::string::npos);  // m = 4: 65 (1 + 4 + 10) = 975
    REQUIRE(describe_zoology(find_memory("mesanet")).empty());  // zoology has no MesaNet
}
