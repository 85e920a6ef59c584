// Storage precision (memories/precision.hpp): the formats' rounding, the bits they cost, where
// each memory rounds, fp32 left exactly as it was; and the information limit
// (memories/theory/information.hpp).
#include "core/error.hpp"
#include "core/rng.hpp"
#include "example_backend.hpp"
#include "harness/eval/cell.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "memories/theory/information.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <typeinfo>
#include <limits>

using namespace memcap;

namespace {

float rounded(Precision p, float x) {
    round_to(p, &x, 1);
    return x;
}

bool stored_exactly(Precision p, const float* x, std::int64_t n, std::int64_t block) {
    // A state that is already at p is unchanged by rounding it again: fp formats exactly; integer
    // formats block by block (within 1 ulp of the scale, which is recomputed from the block's max).
    for (std::int64_t s = 0; s < n; s += block) {
        const std::int64_t len = std::min(block, n - s);
        std::vector<float> y(x + s, x + s + len);
        round_to(p, y.data(), len);
        for (std::int64_t i = 0; i < len; ++i)
            if (std::fabs(y[i] - x[s + i]) > 4e-7f * std::max(1.0f, std::fabs(x[s + i]))) return false;
    }
    return true;
}

struct Pairs {
    RowMat keys, values;
};

Pairs random_pairs(int n, int d, std::uint64_t seed) {
    Pairs p{RowMat(n, d), RowMat(n, d)};
    Rng rng = Rng::stream("test_precision", n, d, seed);
    rng.fill_normal(p.keys), rng.fill_normal(p.values);
    normalise_rows(p.keys), normalise_rows(p.values);
    return p;
}

}  // namespace

TEST_CASE("bf16 and fp16 round to nearest even, as their formats store", "[precision]") {
    CHECK(rounded(Precision::bf16, 1.0f) == 1.0f);
    CHECK(rounded(Precision::bf16, 1.0f + std::ldexp(1.0f, -8)) == 1.0f);  // a tie: to the even mantissa
    CHECK(rounded(Precision::bf16, 1.0f + 3 * std::ldexp(1.0f, -8)) == 1.0f + std::ldexp(1.0f, -6));  // a tie up
    CHECK(rounded(Precision::bf16, 1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -12)) == 1.0f + std::ldexp(1.0f, -7));
    CHECK(rounded(Precision::bf16, -3.0e38f) == -226.0f * std::ldexp(1.0f, 120));  // 3e38 / 2^120 = 225.7
    CHECK(std::isnan(rounded(Precision::bf16, std::numeric_limits<float>::quiet_NaN())));

    CHECK(rounded(Precision::fp16, 1.0f + std::ldexp(1.0f, -11)) == 1.0f);  // a tie: to even
    CHECK(rounded(Precision::fp16, 1.0f + 3 * std::ldexp(1.0f, -11)) == 1.0f + std::ldexp(1.0f, -9));
    CHECK(rounded(Precision::fp16, 65504.0f) == 65504.0f);
    CHECK(rounded(Precision::fp16, 65519.0f) == 65504.0f);
    CHECK(std::isinf(rounded(Precision::fp16, 65520.0f)));  // rounds past the largest half
    CHECK(rounded(Precision::fp16, std::ldexp(1.0f, -24)) == std::ldexp(1.0f, -24));  // the smallest subnormal
    CHECK(rounded(Precision::fp16, std::ldexp(1.0f, -26)) == 0.0f);
    CHECK(rounded(Precision::fp16, 3 * std::ldexp(1.0f, -25)) == std::ldexp(1.0f, -23));  // tie between 2^-24 and 2^-23: even
    CHECK(rounded(Precision::fp16, -0.1f) == -0.0999755859375f);
    CHECK(rounded(Precision::fp32, 0.1f) == 0.1f);
}

TEST_CASE("int8 and int4 keep absmax scales per block of 32", "[precision]") {
    std::vector<float> x(40);
    for (int i = 0; i < 40; ++i) x[i] = (i < 32 ? 1.0f : 100.0f) * std::sin(0.7f * float(i) + 0.3f);
    std::vector<float> y = x;
    round_to(Precision::int8, y.data(), 40);
    for (int b = 0; b < 2; ++b) {
        const int s = b * 32, e = b == 0 ? 32 : 40;
        float m = 0;
        for (int i = s; i < e; ++i) m = std::max(m, std::fabs(x[i]));
        for (int i = s; i < e; ++i) {
            const float q = y[i] / (m / 127.0f);
            CHECK(std::fabs(q - std::nearbyint(q)) < 1e-3f);     // on the block's grid
            CHECK(std::fabs(y[i] - x[i]) <= 0.5f * m / 127.0f * 1.0001f);  // within half a step
        }
    }
    std::vector<float> z = x;
    round_to(Precision::int4, z.data(), 40);
    for (int i = 0; i < 32; ++i) CHECK(std::fabs(z[i] - x[i]) <= 0.5f / 7.0f * 1.0001f);
    CHECK(stored_exactly(Precision::int4, z.data(), 40, 32));
}

TEST_CASE("a block too small for a normal scale is stored as 0, never NaN", "[precision]") {
    std::vector<float> x{5e-44f, -3e-44f, 0.0f, 1e-45f};
    for (const Precision p : {Precision::int8, Precision::int4}) {
        std::vector<float> y = x;
        round_to(p, y.data(), 4);
        for (const float v : y) CHECK(v == 0.0f);
    }
}

TEST_CASE("bits: a format's numbers and scales, and the most numbers a budget of bits holds", "[precision]") {
    CHECK(flat_bits(Precision::fp32, 100) == 3200);
    CHECK(flat_bits(Precision::bf16, 100) == 1600);
    CHECK(flat_bits(Precision::int8, 64) == 64 * 8 + 2 * 32);
    CHECK(flat_bits(Precision::int4, 33) == 33 * 4 + 2 * 32);
    CHECK(row_bits(Precision::int8, 4, 4) == 2 * (32 + 32));  // a key and a value, each with a scale
    for (const Precision p : {Precision::fp32, Precision::bf16, Precision::fp16, Precision::int8, Precision::int4})
        for (std::int64_t bits = 1; bits < 5000; bits += 7) {
            const std::int64_t e = flat_elements(p, bits);
            CHECK(flat_bits(p, e) <= bits);
            CHECK(flat_bits(p, e + 1) > bits);
        }
}

TEST_CASE("precision=fp32 is the memory as it was: the same spec, the same state, bit for bit", "[precision]") {
    // fp32 binds as left out (the same canonical spec), and the table's factory hands back the
    // backend itself, unwrapped; any other precision is wrapped. (The golden CSVs check that a
    // whole sweep's fp32 bits did not move.)
    {
        const MemoryShape shape(16, 16, 1024);
        auto plain = make_memory(parse_memory_spec("softmax"), shape, 0);
        auto at32 = make_memory(parse_memory_spec("softmax:precision=fp32"), shape, 0);
        auto at16 = make_memory(parse_memory_spec("softmax:precision=bf16"), shape, 0);
        const Memory& p = *plain;
        const Memory& q32 = *at32;
        const Memory& q16 = *at16;
        CHECK(typeid(p) == typeid(q32));
        CHECK(typeid(p) != typeid(q16));
    }
    CHECK(parse_memory_spec("delta:beta=0.5,precision=fp32").canonical() == parse_memory_spec("delta:beta=0.5").canonical());
    CHECK(parse_memory_spec("delta:precision=int8").canonical() == "delta:beta=1,phi=proj,nu=1,precision=int8");
    const Pairs p = random_pairs(40, 16, 1);
    for (const auto& name : memory_names()) {
        if (!find_memory(name).reduced_precision) continue;
        const MemoryShape shape(16, 16, 1024);
        auto a = make_memory(parse_memory_spec(name), shape, 3);
        auto b = make_memory(parse_memory_spec(name + ":precision=fp32"), shape, 3);
        a->write_batch(p.keys, p.values);
        b->write_batch(p.keys, p.values);
        INFO(name);
        REQUIRE(a->state_floats() == b->state_floats());
        CHECK(std::memcmp(a->state().data(), b->state().data(), sizeof(float) * std::size_t(a->state_floats())) == 0);
    }
}

TEST_CASE("every backend holds its state at the precision it is given, within the budget's bits", "[precision]") {
    const Pairs p = random_pairs(24, 16, 2);
    for (const auto& name : memory_names()) {
        if (!find_memory(name).reduced_precision) continue;
        for (const char* prec : {"bf16", "fp16", "int8", "int4"}) {
            const Spec spec = parse_memory_spec(name + ":precision=" + prec);
            const Precision pr = parse_precision(prec);
            const MemoryShape shape(16, 16, 2048);
            const MemorySize size = memory_size(spec, shape);
            auto m = make_memory(spec, shape, 5);
            m->write_batch(p.keys, p.values);
            INFO(name << " at " << prec);
            const std::int64_t bits = state_bits(pr, size, shape, m->state_floats());
            CHECK(bits <= 2048 * 32);
            // It buys more numbers than fp32 would at the same bits (or as many, when whole rows or
            // a shape's steps leave the difference unused).
            CHECK(size.state_floats >= memory_size(parse_memory_spec(name), shape).state_floats);
            // The state is stored at the format: rounding it again changes nothing. A cache's rows are
            // rounded key by key and value by value (blocks of d = 16); others (a state that grows by
            // rows of another width too: fox's [k | v | c]) in blocks of 32, rounded whole.
            const std::int64_t block = size.floats_per_write == 2 * 16 ? 16 : kScaleBlock;
            CHECK(stored_exactly(pr, m->state().data(), m->state_floats(), block));
            // Reads of the stored state are finite (unit-scale pairs: no format overflows here), or,
            // for MesaNet only, a measured failure: its rounded H + lambda I may not be positive
            // definite at the default ridge (memories/README.md, "Storage precision").
            RowMat out(4, 16);
            try {
                m->read_batch(p.keys.topRows(4), out);
                CHECK(out.allFinite());
            } catch (const MemoryFailure& e) {
                CHECK(name == "mesanet");
                CHECK_THAT(e.what(), Catch::Contains("not positive definite"));
            }
        }
    }
}

TEST_CASE("an additive grid accumulates the rounding of each write, as a stored state would", "[precision]") {
    // The linear grid at its natural size (d_phi = d_k: no projection) is M += v k^T; at bf16
    // the stored M is rounded after every write, so it equals that recurrence rounded each step.
    const int d = 8, n = 30;
    const Pairs p = random_pairs(n, d, 3);
    auto m = make_memory(parse_memory_spec("linear:precision=bf16"), MemoryShape(d, d), 0);
    m->write_batch(p.keys, p.values);
    RowMat ref = RowMat::Zero(d, d);
    for (int i = 0; i < n; ++i) {
        ref += p.values.row(i).transpose() * p.keys.row(i);
        round_to(Precision::bf16, ref.data(), ref.size());
    }
    REQUIRE(m->state_floats() == d * d);
    CHECK(std::memcmp(m->state().data(), ref.data(), sizeof(float) * d * d) == 0);
    // Rounding once at the end is not the same memory (the accumulated rounding is the point).
    RowMat once = p.values.transpose() * p.keys;
    round_to(Precision::bf16, once.data(), once.size());
    CHECK(std::memcmp(m->state().data(), once.data(), sizeof(float) * d * d) != 0);
}

TEST_CASE("the cache stores each written pair rounded, and a budget of bits buys whole rows", "[precision]") {
    const int d = 8;
    const Pairs p = random_pairs(100, d, 4);
    // 4096 bits: at int4 a row costs 2 (8·4 + 32) = 128 bits -> 32 pairs; at fp32 512 bits -> 8.
    const MemoryShape shape(d, d, 4096 / 32);
    const MemorySize at4 = memory_size(parse_memory_spec("softmax:precision=int4"), shape);
    CHECK(at4.dim("pairs") == 32);
    CHECK(memory_size(parse_memory_spec("softmax"), shape).dim("pairs") == 8);
    CHECK(memory_size(parse_memory_spec("softmax:precision=bf16"), shape).dim("pairs") == 16);
    auto m = make_memory(parse_memory_spec("softmax:precision=int4"), shape, 0);
    m->write_batch(p.keys.topRows(10), p.values.topRows(10));
    CHECK(state_bits(Precision::int4, at4, shape, m->state_floats()) == 10 * 128);
    for (int i = 0; i < 10; ++i) {
        Vec k = p.keys.row(i).transpose(), v = p.values.row(i).transpose();
        round_to(Precision::int4, k.data(), d), round_to(Precision::int4, v.data(), d);
        CHECK(std::memcmp(m->state().data() + 2 * d * i, k.data(), sizeof(float) * d) == 0);
        CHECK(std::memcmp(m->state().data() + 2 * d * i + d, v.data(), sizeof(float) * d) == 0);
    }
}

TEST_CASE("a backend that cannot hold a reduced precision is refused, naming why", "[precision]") {
    example::register_example_backend();
    REQUIRE_FALSE(find_memory("value_sum").reduced_precision);
    const Spec spec = parse_memory_spec("value_sum:precision=int8");  // the key exists on every memory
    CHECK_THROWS_WITH(memory_size(spec, MemoryShape(8, 8, 64)), Catch::Contains("cannot hold its state at int8"));
    CHECK_NOTHROW(memory_size(parse_memory_spec("value_sum:precision=fp32"), MemoryShape(8, 8, 64)));
}

TEST_CASE("the information limit: log2 n! bits for n pairs", "[theory][precision]") {
    CHECK(theory::log2_factorial(0) == Approx(0.0).margin(1e-12));
    CHECK(theory::log2_factorial(10) == Approx(std::log2(3628800.0)).epsilon(1e-12));
    // Pinned against an independent sum of log2 k (Python: the largest n with sum_{k<=n} log2 k <= B).
    CHECK(theory::max_pairs_exact(8192) == 966);
    CHECK(theory::max_pairs_exact(131072) == 10944);
    CHECK(theory::max_pairs_exact(33554432) == 1739680);
    for (const double bits : {100.0, 8192.0, 1e6}) {
        const std::int64_t n = theory::max_pairs_exact(bits);
        CHECK(theory::log2_factorial(n) <= bits);
        CHECK(theory::log2_factorial(n + 1) > bits);
        CHECK(theory::min_bits_at(n, 1.0) == Approx(theory::log2_factorial(n)).epsilon(1e-12));
        // Allowing 10% of the reads wrong lets more pairs fit, but never more than ~1/0.9 as many.
        const std::int64_t n90 = theory::max_pairs_at(bits, 0.9);
        CHECK(n90 >= n);
        CHECK(theory::min_bits_at(n90, 0.9) <= bits);
        CHECK(theory::min_bits_at(n90 + 1, 0.9) > bits);
    }
    // Pinned against the same bound computed in Python (math.lgamma, bisection): 17% and 15% more
    // than the exact line at 2^13 and 2^19 bits.
    CHECK(theory::max_pairs_at(8192, 0.9) == 1133);
    CHECK(theory::max_pairs_at(524288, 0.9) == 43815);
}
