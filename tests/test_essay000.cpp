// Essay 000's worked example and structural-mask check, through the softmax backend.
//
// The essay divides dot products by √2 (d = 2); the backend multiplies raw dot
// products by β, so β = 1/√2 reproduces it.
#include "memories/registry.hpp"
#include "memories/softmax_cache.hpp"

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
