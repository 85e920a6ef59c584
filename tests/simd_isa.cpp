// core/simd.hpp built for one instruction set (tests/CMakeLists.txt: baseline x86-64, where
// Floats is four xmm registers; x86-64-v3, AVX2 and FMA, two ymm; and -march=native, which is
// one zmm with AVX-512): every operation lane by lane against the scalar it stands for,
// lane_sum against its tree written out, and the register tile's products, over shapes that
// leave partial tiles of every build's tile shape and run both uncut and panel by panel,
// against each entry's scalar madd chain — bit for bit (memcmp). A build the CPU cannot run
// exits 77 (skipped).
#include "core/simd.hpp"

#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

using namespace memcap;

namespace {

int failures = 0;

void check(bool ok, const char* what, int a = 0, int b = 0, int c = 0) {
    if (!ok) {
        ++failures;
        std::printf("FAIL %s (%d, %d, %d)\n", what, a, b, c);
    }
}

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void lanes(std::mt19937& gen) {
    std::normal_distribution<float> normal;
    float x[simd::kLanes], y[simd::kLanes], z[simd::kLanes], out[simd::kLanes];
    for (int round = 0; round < 100; ++round) {
        for (int l = 0; l < simd::kLanes; ++l) x[l] = normal(gen), y[l] = normal(gen), z[l] = normal(gen);
        x[3] = -0.0f, y[5] = x[5], x[4] = -0.0f, y[4] = 0.0f;  // a negative zero; lanes < must call equal
        const simd::Floats a = simd::load(x), b = simd::load(y), c = simd::load(z);
        const float s = normal(gen);
        const simd::Floats results[] = {a + b, a - b, a * b, s * a, a * s, -a, simd::madd(a, b, c), simd::broadcast(s),
                                        simd::select(a < b, a, c)};
        for (int k = 0; k < static_cast<int>(sizeof results / sizeof results[0]); ++k) {
            simd::store(out, results[k]);
            for (int l = 0; l < simd::kLanes; ++l) {
                const float want[] = {x[l] + y[l], x[l] - y[l], x[l] * y[l], s * x[l], x[l] * s, -x[l],
                                      simd::madd(x[l], y[l], z[l]), s, x[l] < y[l] ? x[l] : z[l]};
                check(same_bits(out[l], want[k]) && same_bits(results[k][l], want[k]), "a lane of an operation", k, l);
            }
        }
        simd::Ints index{};
        for (int l = 0; l < simd::kLanes; ++l) simd::set_lane(index, l, 100 * l);
        index = index + 7;
        simd::Ints bits{};
        for (int l = 0; l < simd::kLanes; ++l) simd::set_lane(bits, l, 1 << 20);
        bits |= simd::select(a < b, index, simd::Ints{});
        for (int l = 0; l < simd::kLanes; ++l)
            check(bits[l] == ((1 << 20) | (x[l] < y[l] ? 100 * l + 7 : 0)), "a lane of the ints", l);
        // lane_sum's tree: lane l + lane l + 8, then + 4, then (0 + 2) + (1 + 3); lanes of very
        // different sizes, so another order rounds otherwise
        float w[simd::kLanes];
        for (int l = 0; l < simd::kLanes; ++l) w[l] = x[l] * (l % 3 == 0 ? 1e7f : 1.0f);
        float s8[8], s4[4];
        for (int l = 0; l < 8; ++l) s8[l] = w[l] + w[l + 8];
        for (int l = 0; l < 4; ++l) s4[l] = s8[l] + s8[l + 4];
        check(same_bits(simd::lane_sum(simd::load(w)), (s4[0] + s4[2]) + (s4[1] + s4[3])), "lane_sum", round);
    }
    float block[simd::kLanes * simd::kLanes];
    for (float& v : block) v = normal(gen);
    simd::Floats t[simd::kLanes];
    for (int i = 0; i < simd::kLanes; ++i) t[i] = simd::load(block + i * simd::kLanes);
    simd::transpose16(t);
    for (int i = 0; i < simd::kLanes; ++i)
        for (int l = 0; l < simd::kLanes; ++l) check(same_bits(t[i][l], block[l * simd::kLanes + i]), "transpose16", i, l);
}

/// c = a b (or c += aᵀ b) by the kernel and by each entry's scalar madd chain in index order.
void products(std::mt19937& gen, int rows, int depth, int cols, bool transposed, bool accumulate) {
    std::normal_distribution<float> normal;
    std::vector<float> a(static_cast<std::size_t>(rows) * depth), b(static_cast<std::size_t>(depth) * cols),
        c(static_cast<std::size_t>(rows) * cols);
    for (float& v : a) v = normal(gen);
    for (float& v : b) v = normal(gen);
    for (float& v : c) v = normal(gen);
    std::vector<float> want = c;
    const auto at = [&](int r, int i) { return transposed ? a[static_cast<std::size_t>(i) * rows + r] : a[static_cast<std::size_t>(r) * depth + i]; };
    for (int r = 0; r < rows; ++r)
        for (int j = 0; j < cols; ++j) {
            float s = accumulate ? want[static_cast<std::size_t>(r) * cols + j] : 0.0f;
            for (int i = 0; i < depth; ++i) s = simd::madd(at(r, i), b[static_cast<std::size_t>(i) * cols + j], s);
            want[static_cast<std::size_t>(r) * cols + j] = s;
        }
    if (transposed)
        simd::add_transposed_product(a.data(), rows, b.data(), cols, depth, c.data(), cols, rows, cols, accumulate);
    else
        simd::multiply(a.data(), depth, 1, b.data(), cols, depth, c.data(), cols, rows, cols, accumulate);
    check(std::memcmp(c.data(), want.data(), sizeof(float) * c.size()) == 0, "a product", rows, depth, cols);
}

/// Whether this CPU runs the build's instructions: compiled for baseline x86-64, so that no
/// instruction of the build's own set runs before the answer.
[[gnu::target("arch=x86-64"), gnu::noinline]] bool cpu_runs_this_build() {
#if defined(__AVX512F__)
    return __builtin_cpu_supports("avx512f");
#elif defined(__AVX2__)
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    return true;
#endif
}

[[gnu::noinline]] int run() {
    std::mt19937 gen(2026);
    lanes(gen);
    // every row count up to 13 (each tile shape's partial tiles), one to five vectors of columns,
    // and two shapes large enough to run panel by panel (depth in blocks; two column panels)
    for (int rows = 1; rows <= 13; ++rows)
        for (int vectors = 1; vectors <= 5; ++vectors)
            for (int transposed = 0; transposed < 2; ++transposed)
                products(gen, rows, 19, 16 * vectors, transposed, (rows + vectors) % 2 == 1);
    products(gen, 7, 700, 112, false, true);
    products(gen, 11, 130, 1040, true, false);
    std::printf("%s: Floats as %d lanes a register, tile %d x %d (%d x 1 one vector wide): %s\n",
#if defined(__AVX512F__)
                "AVX-512", 16,
#elif defined(__AVX__)
                "AVX", 8,
#else
                "SSE", 4,
#endif
                simd::kTileRows, simd::kTileVectors, simd::kTileRowsOneVector, failures ? "FAILED" : "every lane and entry equal");
    return failures ? 1 : 0;
}

}  // namespace

int main() { return cpu_runs_this_build() ? run() : 77; }
