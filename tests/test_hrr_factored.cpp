// HRR's factored batches (memories/hrr/hrr.hpp: write through G = Kᵀ V and the maps'
// spectra, read through W = P_vᵀ irfft(conj(A) · F T) / D by Parseval) equal the per-item
// forms up to float rounding. At these sizes the batch takes the factored form.
#include "core/rng.hpp"
#include "memories/hrr/hrr.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <utility>
#include <vector>

using namespace memcap;

TEST_CASE("HRR: factored batched write and read equal one at a time", "[memory][hrr]") {
    const int d = 64, n = 512;
    const std::int64_t budget = GENERATE(1024, 4097);  // even and odd D
    CAPTURE(budget);
    REQUIRE(Hrr::write_flops(double(budget), d, d, n, true) < Hrr::write_flops(double(budget), d, d, n, false));
    REQUIRE(Hrr::read_flops(double(budget), d, d, n, true) < Hrr::read_flops(double(budget), d, d, n, false));
    const MemoryShape shape{d, d, budget};
    Rng p1 = Rng::stream("hrr_factored", budget), p2 = Rng::stream("hrr_factored", budget);
    Hrr batched(shape, p1), single(shape, p2);
    Rng data = Rng::stream("hrr_factored_data", budget);
    RowMat keys(n, d), values(n, d);
    data.fill_normal(keys), data.fill_normal(values);
    normalise_rows(keys), normalise_rows(values);

    batched.write_batch(keys, values);
    for (int i = 0; i < n; ++i) single.write(keys.row(i).transpose(), values.row(i).transpose());
    const Vec a = batched.state(), b = single.state();
    REQUIRE((a - b).norm() <= 1e-4f * b.norm());

    RowMat reads(n, d);
    batched.read_batch(keys, reads);
    for (int i = 0; i < n; i += 37) {
        Vec one(d);
        batched.read(keys.row(i).transpose(), one);
        REQUIRE((reads.row(i).transpose() - one).norm() <= 1e-4f * one.norm());
    }
}

TEST_CASE("HRR with positional keys: kept row spectra give the per-item trace and reads, whatever came before",
          "[memory][hrr]") {
    // Sequence tasks write the same rows (positions' keys, a vocabulary's values) in every
    // episode; with maps (D ≠ d) the memory keeps each row's spectrum (hrr.hpp, write_kept).
    // Its trace and reads must be the per-item algebra up to float rounding, and, kept or
    // not, the same bits: a memory that has seen other episodes (and, past the cap of kept
    // rows, rows it could not keep) ends each episode where a fresh memory does.
    const int d = 16;
    const std::int64_t budget = GENERATE(256, 1001);
    CAPTURE(budget);
    MemoryShape positional{d, d, budget}, plain{d, d, budget};
    positional.positional_keys = true;
    REQUIRE(Hrr::size(positional).kept);
    REQUIRE_FALSE(Hrr::size(plain).kept);
    const std::int64_t cap = Hrr::size(positional).kept_rows();
    REQUIRE(cap == Hrr::kKeptSpectra);
    Rng data = Rng::stream("hrr_kept_data", budget);
    const int vocab = 20, positions = static_cast<int>(cap) + 88;  // more positions than the cap
    RowMat tokens(vocab, d), places(positions, d);
    data.fill_normal(tokens), data.fill_normal(places);
    normalise_rows(tokens), normalise_rows(places);
    // episodes of L pairs: keys the first L positions (the last episode: every position), values tokens
    std::vector<std::pair<RowMat, RowMat>> episodes;
    for (const int length : {40, 40, 60, positions, positions, 40}) {
        RowMat keys = places.topRows(length), values(length, d);
        for (int i = 0; i < length; ++i) values.row(i) = tokens.row(static_cast<Eigen::Index>(data.below(vocab)));
        episodes.emplace_back(std::move(keys), std::move(values));
    }
    Rng p = Rng::stream("hrr_kept", budget);
    Hrr seasoned(positional, p);
    for (const auto& [keys, values] : episodes) {
        CAPTURE(keys.rows());
        Rng p1 = Rng::stream("hrr_kept", budget), p2 = Rng::stream("hrr_kept", budget);
        Hrr fresh(positional, p1), reference(plain, p2);
        seasoned.reset();
        seasoned.write_batch(keys, values);
        fresh.write_batch(keys, values);
        reference.write_batch(keys, values);
        const auto bytes = sizeof(float) * static_cast<std::size_t>(budget);
        REQUIRE(std::memcmp(seasoned.state().data(), fresh.state().data(), bytes) == 0);
        const Vec a = seasoned.state(), b = reference.state();
        REQUIRE((a - b).norm() <= 1e-4f * b.norm());
        RowMat r_seasoned(keys.rows(), d), r_fresh(keys.rows(), d), r_reference(keys.rows(), d);
        seasoned.read_batch(keys, r_seasoned);
        fresh.read_batch(keys, r_fresh);
        reference.read_batch(keys, r_reference);
        REQUIRE(std::memcmp(r_seasoned.data(), r_fresh.data(), sizeof(float) * static_cast<std::size_t>(r_fresh.size())) == 0);
        REQUIRE((r_seasoned - r_reference).norm() <= 1e-4f * r_reference.norm());
    }
}

TEST_CASE("HRR: the direct forms (D = d ≤ 64) and the FFT forms compute the convolution and the correlation",
          "[memory][hrr]") {
    // The definitions in double: T_t = Σ_i Σ_j k_ij v_i,(t−j) mod D and r_t = Σ_j q_j T_(t+j) mod D.
    // D ≤ kDirectDim takes the direct forms (the write by FFTs across pairs at D = 16, 32, 64), larger D
    // the FFTs one by one: all must give them to float rounding.
    for (const int dim : {1, 2, 7, 16, 32, 33, 48, 64, 65, 128}) {
        CAPTURE(dim);
        const int n = 300;
        Rng p = Rng::stream("hrr_direct", dim);
        Hrr memory(MemoryShape{dim, dim}, p);
        Rng data = Rng::stream("hrr_direct_data", dim);
        RowMat keys(n, dim), values(n, dim), queries(40, dim);
        data.fill_normal(keys), data.fill_normal(values), data.fill_normal(queries);
        normalise_rows(keys), normalise_rows(values);
        memory.write_batch(keys.topRows(n - 1), values.topRows(n - 1));
        memory.write(keys.row(n - 1).transpose(), values.row(n - 1).transpose());  // one more, alone
        Eigen::VectorXd want = Eigen::VectorXd::Zero(dim);
        for (int i = 0; i < n; ++i)
            for (int t = 0; t < dim; ++t)
                for (int j = 0; j < dim; ++j) want(t) += double(keys(i, j)) * values(i, ((t - j) % dim + dim) % dim);
        const Eigen::VectorXd got = memory.state().cast<double>();
        REQUIRE((got - want).norm() <= 1e-5 * want.norm());
        RowMat reads(queries.rows(), dim);
        memory.read_batch(queries, reads);
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            Eigen::VectorXd r = Eigen::VectorXd::Zero(dim);
            for (int t = 0; t < dim; ++t)
                for (int j = 0; j < dim; ++j) r(t) += double(queries(i, j)) * got((t + j) % dim);
            REQUIRE((reads.row(i).transpose().cast<double>() - r).norm() <= 1e-5 * r.norm() + 1e-6);
            Vec one(dim);
            memory.read(queries.row(i).transpose(), one);
            REQUIRE((one.cast<double>() - r).norm() <= 1e-5 * r.norm() + 1e-6);
        }
    }
}
