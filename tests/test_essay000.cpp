// Essay 000's worked example and structural-mask check, through the softmax backend.
//
// The essay divides dot products by √2 (d = 2); the backend multiplies raw dot
// products by β, so β = 1/√2 reproduces it.
#include "memories/registry.hpp"
#include "memories/softmax/softmax_cache.hpp"

#include <catch2/catch.hpp>

#include <cmath>

using namespace memcap;

namespace {

SoftmaxCache essay_cache() {
    SoftmaxCache cache(MemoryShape{2, 2, {}}, 1.0 / std::sqrt(2.0));
    RowMat keys(3, 2), values(3, 2);
    keys << 2, 0, 0, 2, 1.2f, 0.8f;
    values << 10, 0, 0, 10, 6, 4;
    cache.write_batch(keys, values);
    return cache;
}

}  // namespace

TEST_CASE("q = [2, 0] reads [8.638, 1.362]", "[essay000]") {
    const SoftmaxCache cache = essay_cache();
    Vec q(2), out(2);
    q << 2, 0;
    cache.read(q, out);
    // float32 arithmetic: the essay's doubles 8.638325843083024, 1.3616741569169766 to ~1e-5
    REQUIRE(out(0) == Approx(8.638325843083024).margin(1e-4));
    REQUIRE(out(1) == Approx(1.3616741569169766).margin(1e-4));
    const Vec w = cache.weights(q);
    REQUIRE(w(0) == Approx(0.724).margin(5e-4));
    REQUIRE(w(1) == Approx(0.043).margin(5e-4));
    REQUIRE(w(2) == Approx(0.233).margin(5e-4));
}

TEST_CASE("the structural mask gives the masked route weight exactly 0: [0, 0.155, 0.845]", "[essay000]") {
    const SoftmaxCache cache = essay_cache();
    Vec q(2);
    q << 2, 0;
    const std::vector<char> allowed = {0, 1, 1};
    const Vec w = cache.weights(q, &allowed);
    REQUIRE(w(0) == 0.0f);
    REQUIRE(w(1) == Approx(0.155).margin(5e-4));
    REQUIRE(w(2) == Approx(0.845).margin(5e-4));
    const std::vector<char> none = {0, 0, 0};
    REQUIRE_THROWS(cache.weights(q, &none));
}

TEST_CASE("the same read through the registry's spec string", "[essay000]") {
    auto m = make_memory(parse_memory_spec("softmax:beta=" + format_real(1.0 / std::sqrt(2.0))), MemoryShape{2, 2, {}}, 0);
    RowMat keys(3, 2), values(3, 2), q(1, 2), out(1, 2);
    keys << 2, 0, 0, 2, 1.2f, 0.8f;
    values << 10, 0, 0, 10, 6, 4;
    q << 2, 0;
    m->write_batch(keys, values);
    m->read_batch(q, out);
    REQUIRE(out(0, 0) == Approx(8.638325843083024).margin(1e-4));
    REQUIRE(out(0, 1) == Approx(1.3616741569169766).margin(1e-4));
}

TEST_CASE("essay 000's laboratory: permutation, collision, two routes, uniform mean", "[essay000]") {
    SECTION("paired permutation leaves the read unchanged") {
        SoftmaxCache permuted(MemoryShape{2, 2, {}}, 1.0 / std::sqrt(2.0));
        RowMat keys(3, 2), values(3, 2);
        keys << 1.2f, 0.8f, 2, 0, 0, 2;  // order [2, 0, 1]
        values << 6, 4, 10, 0, 0, 10;
        permuted.write_batch(keys, values);
        Vec q(2), a(2), b(2);
        q << 2, 0;
        essay_cache().read(q, a);
        permuted.read(q, b);
        REQUIRE((a - b).cwiseAbs().maxCoeff() < 1e-5f);
    }
    SECTION("duplicate keys with values 0 and 100 read 50, weights 0.5 / 0.5") {
        SoftmaxCache cache(MemoryShape{2, 1, {}}, 1.0 / std::sqrt(2.0));
        RowMat keys(2, 2), values(2, 1);
        keys << 1, 0, 1, 0;
        values << 0, 100;
        cache.write_batch(keys, values);
        Vec q(2), out(1);
        q << 1, 0;
        cache.read(q, out);
        REQUIRE(out(0) == Approx(50.0f));
        const Vec w = cache.weights(q);
        REQUIRE(w(0) == Approx(0.5f));
        REQUIRE(w(1) == Approx(0.5f));
    }
    SECTION("two different routes give the same output (weights are not identifiable)") {
        SoftmaxCache cache(MemoryShape{3, 2, {}}, 1.0);
        // Route A: equal weight on records 0 and 1; route B: all weight on record 2.
        RowMat keys(3, 3), values(3, 2);
        keys << 1, 0, 0, 1, 0, 0, 0, 1, 0;
        values << 1, 0, 0, 1, 0.5f, 0.5f;
        RowMat a_keys = keys, b_keys = keys;
        SoftmaxCache sharp(MemoryShape{3, 2, {}}, 1e4);  // near-hard routes
        sharp.write_batch(keys, values);
        Vec qa(3), qb(3), oa(2), ob(2);
        qa << 1, 0, 0;  // ties records 0 and 1
        qb << 0, 1, 0;  // picks record 2
        sharp.read(qa, oa);
        sharp.read(qb, ob);
        REQUIRE(sharp.weights(qa)(0) == Approx(0.5f));
        REQUIRE(sharp.weights(qb)(2) == Approx(1.0f));
        REQUIRE((oa - ob).cwiseAbs().maxCoeff() < 1e-5f);
    }
    SECTION("uniform weights (beta = 0) give the exact mean: 2, 8, 14 -> 8") {
        SoftmaxCache cache(MemoryShape{1, 1, {}}, 0.0);
        RowMat keys(3, 1), values(3, 1);
        keys << 0.3f, -1, 2;
        values << 2, 8, 14;
        cache.write_batch(keys, values);
        Vec q(1), out(1);
        q << 5;
        cache.read(q, out);
        REQUIRE(out(0) == Approx(8.0f).margin(1e-5));
    }
}

TEST_CASE("the Kannada example: weights 0.145 / 0.009 / 0.847, unscaled 0.076 / 0.001 / 0.923", "[essay004]") {
    // Keys nanu (2, 0), pustakavannu (0, 2), odide (1, -2); query (0.5, -1.5).
    RowMat keys(3, 2), values = RowMat::Identity(3, 3);
    keys << 2, 0, 0, 2, 1, -2;
    Vec q(2);
    q << 0.5f, -1.5f;
    SoftmaxCache scaled(MemoryShape{2, 3, {}}, 1.0 / std::sqrt(2.0)), unscaled(MemoryShape{2, 3, {}}, 1.0);
    scaled.write_batch(keys, values);
    unscaled.write_batch(keys, values);
    const Vec ws = scaled.weights(q), wu = unscaled.weights(q);
    REQUIRE(ws(0) == Approx(0.145).margin(5e-4));
    REQUIRE(ws(1) == Approx(0.009).margin(5e-4));
    REQUIRE(ws(2) == Approx(0.847).margin(5e-4));
    REQUIRE(wu(0) == Approx(0.076).margin(5e-4));
    REQUIRE(wu(1) == Approx(0.001).margin(5e-4));
    REQUIRE(wu(2) == Approx(0.923).margin(5e-4));
}
