// Every memory that declares a backward pass (its table entry's `backward`) is checked
// against central finite differences of its own write_batch and read_batch, on small
// shapes: n = 5 pairs, m = 4 queries, d = 6, at its natural size and at budgets that
// give a feature map (φ = proj wider than d, φ = dpfp) or evict (a cache holding 3 pairs).
//
// The loss is L = Σ_ij W_ij R_ij (W fixed and random, so backward gets d_reads = W), and
// for every entry x of the keys and the queries
//
//     fd(h) = (L(x + h) − L(x − h)) / 2h,   h = 1e-2 (unit-length inputs)
//
// is compared with the backward pass's ∂L/∂x. The tolerance is the error fd(h) can
// have, from two sources, each stated:
//   rounding: L is a sum over the reads of float32 arithmetic; each read entry passes
//     through at most C = 4 (n + d_φ + d) rounded operations (write, feature map, read),
//     each off by at most u = 2^-24 of the running magnitude, so |δL| ≤ ε = u C Σ|W|
//     max(1, max|R|), and the difference quotient is off by at most 2ε / 2h = ε / h;
//   truncation: the central difference's h² L'''/6, estimated by Richardson's
//     |fd(2h) − fd(h)| / 3, itself off by rounding of at most (ε/h + ε/2h) / 3.
// The check: |fd(h) − ∂L/∂x| ≤ ε/h + |fd(2h) − fd(h)|/3 + ε/(2h) for every entry, and
// the gradient is far larger than that tolerance overall (‖g‖∞ > 10 × the largest
// tolerance), so a wrong backward pass cannot hide under it.
#include "memories/registry.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace memcap {
namespace {

struct Case {
    std::string memory;
    std::optional<std::int64_t> budget;
    int n = 5;  // pairs written (more than 32 crosses the gated grids' backward checkpoints)
};

constexpr int kM = 4, kD = 6;

double loss(Memory& mem, const RowMat& keys, const RowMat& values, const RowMat& queries, const RowMat& w, double* max_read) {
    mem.reset();
    mem.write_batch(keys, values);
    RowMat reads(queries.rows(), values.cols());
    mem.read_batch(queries, reads);
    if (max_read) *max_read = reads.cwiseAbs().maxCoeff();
    return (reads.cast<double>().array() * w.cast<double>().array()).sum();
}

void check_gradient(const Case& c) {
    CAPTURE(c.memory, c.budget.value_or(-1));
    const Spec spec = parse_memory_spec(c.memory);
    const MemoryShape shape(kD, kD, c.budget);
    auto mem = make_memory(spec, shape, 7);
    const int d_phi = static_cast<int>(mem->state_floats() > 0 ? mem->state_floats() / kD : kD);
    Rng rng = Rng::stream("test_backward", c.memory, c.budget.value_or(-1));
    RowMat keys = rng.unit_rows<RowMat>(c.n, kD), values = rng.unit_rows<RowMat>(c.n, kD),
           queries = rng.unit_rows<RowMat>(kM, kD);
    queries.row(0) = keys.row(1);  // a query that matches a stored key
    queries.row(1) = keys.row(4);
    RowMat w(kM, kD);
    rng.fill_normal(w);

    double max_read = 0.0;
    loss(*mem, keys, values, queries, w, &max_read);
    RowMat d_keys(c.n, kD), d_queries(kM, kD);
    mem->backward(keys, values, queries, w, d_keys, d_queries);

    const double u = std::ldexp(1.0, -24), h = 1e-2;
    const double cost = 4.0 * (c.n + std::max(d_phi, kD) + kD);
    const double eps = u * cost * w.cwiseAbs().cast<double>().sum() * std::max(1.0, 2.0 * max_read);
    double largest_tol = 0.0, largest_grad = 0.0;
    for (int which = 0; which < 2; ++which) {
        RowMat& x = which == 0 ? keys : queries;
        const RowMat& g = which == 0 ? d_keys : d_queries;
        for (Eigen::Index i = 0; i < x.rows(); ++i)
            for (Eigen::Index j = 0; j < x.cols(); ++j) {
                const float x0 = x(i, j);
                const auto at = [&](double step) {
                    x(i, j) = static_cast<float>(x0 + step);
                    const double l = loss(*mem, keys, values, queries, w, nullptr);
                    x(i, j) = x0;
                    return l;
                };
                const double fd1 = (at(h) - at(-h)) / (2 * h), fd2 = (at(2 * h) - at(-2 * h)) / (4 * h);
                const double tol = eps / h + std::abs(fd2 - fd1) / 3.0 + eps / (2 * h);
                CAPTURE(which == 0 ? "key" : "query", i, j, fd1, fd2, g(i, j), tol);
                REQUIRE(std::abs(fd1 - g(i, j)) <= tol);
                largest_tol = std::max(largest_tol, tol);
                largest_grad = std::max(largest_grad, std::abs(double(g(i, j))));
            }
    }
    CAPTURE(largest_tol, largest_grad);
    REQUIRE(largest_grad > 10.0 * largest_tol);
}

}  // namespace

TEST_CASE("every memory that declares a backward pass matches finite differences", "[backward]") {
    std::vector<std::string> names;
    for (const auto& e : memory_registry())
        if (e.backward) names.push_back(e.name);
    REQUIRE(!names.empty());
    const std::string name = GENERATE_COPY(from_range(names));
    // natural size, and a budget that makes φ wider than d (the grids) or evicts (the cache: 3 pairs)
    check_gradient({name, std::nullopt});
    check_gradient({name, std::int64_t{3 * 2 * kD}});
}

TEST_CASE("backward passes of the non-default settings match finite differences", "[backward]") {
    for (const Case& c : std::vector<Case>{{"softmax:beta=2", std::nullopt},
                                           {"softmax:beta=4", std::int64_t{4 * 2 * kD}},
                                           {"linear:phi=dpfp,nu=2", std::int64_t{kD * 24}},
                                           {"linear:phi=proj", std::int64_t{kD * 4}},  // φ narrower than d
                                           {"delta:beta=0.5", std::nullopt},
                                           {"delta:phi=proj", std::int64_t{kD * 10}},
                                           {"delta:phi=dpfp,nu=2", std::int64_t{kD * 24}},  // ν = 1 maps some of these inputs to φ = 0, where unit(φ) jumps
                                           {"selective:rho=0.8,gate=none", std::nullopt},
                                           {"hrr", std::int64_t{7}},  // an odd D, mapped
                                           {"hrr", std::int64_t{64}},
                                           {"gated_deltanet:alpha=0.8,beta=0.5", std::nullopt},
                                           {"gated_deltanet:alpha=0.9,beta=1.5,step=longhorn", std::int64_t{kD * 10}},
                                           {"gated_deltanet:alpha=0.95,beta=0.5", std::nullopt, 70},  // three checkpoint segments
                                           {"kda:alpha=0.5,beta=0.7", std::nullopt},
                                           {"kda:alpha=0.7,beta=0.5", std::int64_t{kD * 10}, 40},
                                           {"rwkv7:w=0.6,a=0.7", std::nullopt},
                                           {"rwkv7:w=0.8,a=0.4", std::nullopt, 40},
                                           {"gla:alpha=0.5", std::int64_t{kD * 10}},
                                           {"retnet:gamma=0.7", std::nullopt, 40},
                                           {"mesanet:lambda=0.3,gamma=0.9", std::nullopt},
                                           {"mesanet:lambda=1", std::int64_t{200}},  // d_phi = 14 > d: projected
                                           {"based", std::int64_t{kD * 13}},
                                           {"based:scale=2", std::nullopt}})
        check_gradient(c);
}

TEST_CASE("a memory without a backward pass refuses one", "[backward]") {
    for (const auto& e : memory_registry()) {
        if (e.backward) continue;
        CAPTURE(e.name);
        auto mem = make_memory(parse_memory_spec(e.name), MemoryShape(kD, kD), 1);
        RowMat k = RowMat::Zero(1, kD), q = RowMat::Zero(1, kD), w = RowMat::Zero(1, kD), dk(1, kD), dq(1, kD);
        mem->reset();
        REQUIRE_THROWS_AS(mem->backward(k, k, q, w, dk, dq), std::logic_error);
    }
}

}  // namespace memcap
