// The rotation RNN's block form is an orthogonal change of basis away from the
// dense recurrence with a Haar-random R (memories/rotation/rotation_rnn.hpp, "Form").
//
// A dense Haar R (QR of a Gaussian with Mezzadri's sign fix) has a real Schur
// form R = Z T Zᵀ with Z orthogonal and T block-diagonal: 2 × 2 rotations and
// ±1 entries (R is normal, so the quasi-triangular Schur factor is block
// diagonal). Then the dense recurrence s ← ρ R s + U x and the block form
// s' ← ρ T s' + Zᵀ U x give s' = Zᵀ s at every step, and a least-squares
// readout of [s, 1] fitted in either basis makes the same predictions. Finally
// RotationRnn's O(D) step applies exactly such a T.
#include "core/rng.hpp"
#include "memories/rotation/rotation_rnn.hpp"

#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <cmath>
#include <cstring>

using namespace memcap;

namespace {

using MatD = Eigen::MatrixXd;
using VecD = Eigen::VectorXd;

MatD gaussian(Rng& rng, Eigen::Index rows, Eigen::Index cols, double sd = 1.0) {
    MatD m(rows, cols);
    for (Eigen::Index j = 0; j < cols; ++j)
        for (Eigen::Index i = 0; i < rows; ++i) m(i, j) = sd * rng.normal();
    return m;
}

MatD haar_orthogonal(Rng& rng, int dim) {
    Eigen::HouseholderQR<MatD> qr(gaussian(rng, dim, dim));
    MatD q = qr.householderQ();
    for (int j = 0; j < dim; ++j)
        if (qr.matrixQR()(j, j) < 0) q.col(j) = -q.col(j);
    return q;
}

// Zero outside the diagonal blocks that Schur's subdiagonal marks (2 × 2 where T(i+1, i) ≠ 0).
MatD off_block_part(const MatD& t) {
    MatD off = t;
    for (Eigen::Index i = 0; i < t.rows();) {
        const bool pair = i + 1 < t.rows() && std::abs(t(i + 1, i)) > 1e-12;
        const Eigen::Index size = pair ? 2 : 1;
        off.block(i, i, size, size).setZero();
        i += size;
    }
    return off;
}

// States after each of `steps` inputs: s ← a s + b x_t, from s = 0.
MatD run(const MatD& a, const MatD& b, const MatD& inputs) {
    VecD s = VecD::Zero(a.rows());
    MatD states(inputs.rows(), a.rows());
    for (Eigen::Index t = 0; t < inputs.rows(); ++t) {
        s = a * s + b * inputs.row(t).transpose();
        states.row(t) = s.transpose();
    }
    return states;
}

}  // namespace

TEST_CASE("rotation RNN: dense Haar R and its real Schur block form agree up to the basis change",
          "[memory][rotation]") {
    const int dim = 24, d_in = 8, vocab = 16, steps = 20, lag = 3;
    const double rho = 0.9;
    Rng rng = Rng::stream("test_rotation_form");
    const MatD r = haar_orthogonal(rng, dim);
    REQUIRE((r.transpose() * r - MatD::Identity(dim, dim)).norm() < 1e-12);

    Eigen::RealSchur<MatD> schur(r);
    const MatD z = schur.matrixU(), t = schur.matrixT();
    REQUIRE((z.transpose() * z - MatD::Identity(dim, dim)).norm() < 1e-12);
    REQUIRE((z * t * z.transpose() - r).norm() < 1e-12);
    // R is normal, so T is block diagonal, and each block is orthogonal (a rotation or ±1).
    REQUIRE(off_block_part(t).norm() < 1e-10);
    REQUIRE((t.transpose() * t - MatD::Identity(dim, dim)).norm() < 1e-10);

    const MatD u = gaussian(rng, dim, d_in, 1.0 / std::sqrt(double(dim)));
    const MatD codes = gaussian(rng, vocab, d_in);

    SECTION("s' = Zᵀ s at every step") {
        const MatD x = gaussian(rng, 80, d_in);
        const MatD dense = run(rho * r, u, x), block = run(rho * t, z.transpose() * u, x);
        const MatD rotated = dense * z;  // row t: (Zᵀ s_t)ᵀ
        REQUIRE((block - rotated).norm() <= 1e-12 * dense.norm());
    }

    SECTION("a least-squares readout of [s, 1] predicts the same in either basis") {
        // Lag recall in miniature: a stream of random tokens; the target is the token `lag` steps back.
        auto episodes = [&](int count, MatD& dense_x, MatD& block_x, MatD& y, std::vector<int>& target) {
            dense_x.resize(count, dim + 1), block_x.resize(count, dim + 1), y = MatD::Zero(count, vocab);
            target.resize(static_cast<std::size_t>(count));
            for (int e = 0; e < count; ++e) {
                MatD x(steps, d_in);
                std::vector<int> tokens(steps);
                for (int s = 0; s < steps; ++s) {
                    tokens[s] = static_cast<int>(rng.uniform() * vocab) % vocab;
                    x.row(s) = codes.row(tokens[s]);
                }
                const VecD sd = run(rho * r, u, x).bottomRows(1).transpose();
                const VecD sb = run(rho * t, z.transpose() * u, x).bottomRows(1).transpose();
                dense_x.row(e) << sd.transpose(), 1.0;
                block_x.row(e) << sb.transpose(), 1.0;
                target[static_cast<std::size_t>(e)] = tokens[steps - lag];
                y(e, tokens[steps - lag]) = 1.0;
            }
        };
        MatD xd, xb, y, td, tb, ty;
        std::vector<int> train_target, test_target;
        episodes(400, xd, xb, y, train_target);
        episodes(200, td, tb, ty, test_target);
        const MatD wd = xd.colPivHouseholderQr().solve(y), wb = xb.colPivHouseholderQr().solve(y);
        const MatD pd = td * wd, pb = tb * wb;
        REQUIRE((pd - pb).norm() <= 1e-9 * pd.norm());
        int agree = 0, correct = 0;
        for (Eigen::Index e = 0; e < pd.rows(); ++e) {
            Eigen::Index a, b;
            pd.row(e).maxCoeff(&a), pb.row(e).maxCoeff(&b);
            agree += (a == b);
            correct += (a == test_target[static_cast<std::size_t>(e)]);
        }
        REQUIRE(agree == pd.rows());
        REQUIRE(correct > 4 * pd.rows() / vocab);  // far above chance (1/16): the comparison is not vacuous
    }
}

TEST_CASE("rotation RNN: the O(D) step applies s <- rho T s + x with T a direct sum of 2x2 rotations",
          "[memory][rotation]") {
    const int d = 16;
    const std::string angles = GENERATE("uniform", "haar");
    CAPTURE(angles);
    MemoryShape shape{d, d, {}};
    shape.positional_keys = true;  // the input is the value itself (U = I when D = d)
    Rng params = Rng::stream("test_rotation_step", angles);
    RotationRnn m(shape, 0.9, angles, params);
    const MatD a = m.transition();
    REQUIRE((a.transpose() * a - 0.81 * MatD::Identity(d, d)).norm() < 1e-6);  // ρ T with T orthogonal
    // T is a direct sum of 2 × 2 rotations on coordinate pairs (j, P + j) and ±1 entries:
    // every row and column has at most two non-zeros.
    for (Eigen::Index i = 0; i < d; ++i) {
        REQUIRE((a.row(i).array() != 0.0).count() <= 2);
        REQUIRE((a.col(i).array() != 0.0).count() <= 2);
    }

    Rng data = Rng::stream("test_rotation_step_data", angles);
    const MatD x = gaussian(data, 30, d);
    const MatD expected = run(a, MatD::Identity(d, d), x);
    const RowMat keys = RowMat::Zero(30, d), values = x.cast<float>();
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
        m.write(keys.row(i).transpose(), values.row(i).transpose());
        const VecD s = m.state().cast<double>();
        REQUIRE((s - expected.row(i).transpose()).norm() <= 1e-5 * expected.row(i).norm());
    }
}

TEST_CASE("rotation RNN: a batch of steps gives the bits of one step at a time", "[memory][rotation]") {
    // The batched write runs the pairs a tile of SIMD lanes at a time, the last pairs
    // and the ±1 entries on a zero-padded copy; sizes around and across the tile width
    // (8 to 32 floats per tile, by ISA), with and without ±1 entries (odd D, Haar).
    const std::string angles = GENERATE("uniform", "haar");
    const int d = GENERATE(1, 2, 3, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 129);
    CAPTURE(angles, d);
    MemoryShape shape{d, d, {}};
    shape.positional_keys = true;
    Rng params = Rng::stream("test_rotation_batch", angles, d);
    Rng again = Rng::stream("test_rotation_batch", angles, d);
    RotationRnn batch(shape, 0.93, angles, params), single(shape, 0.93, angles, again);
    Rng data = Rng::stream("test_rotation_batch_data", angles, d);
    const RowMat x = gaussian(data, 47, d).cast<float>(), keys = RowMat::Zero(47, d);
    batch.write_batch(keys.topRows(20), x.topRows(20));
    batch.write_batch(keys.bottomRows(27), x.bottomRows(27));
    for (Eigen::Index i = 0; i < x.rows(); ++i) single.write(keys.row(i).transpose(), x.row(i).transpose());
    REQUIRE(batch.state_floats() == d);
    REQUIRE(std::memcmp(batch.state().data(), single.state().data(), sizeof(float) * static_cast<std::size_t>(d)) == 0);
    const MatD expected = run(batch.transition(), MatD::Identity(d, d), x.cast<double>());
    const VecD s = batch.state().cast<double>();
    REQUIRE((s - expected.bottomRows(1).transpose()).norm() <= 1e-5 * expected.bottomRows(1).norm());
}

TEST_CASE("rotation RNN with an input map: inputs kept from earlier batches give the bits of a fresh memory",
          "[memory][rotation]") {
    // With positional keys and D ≠ d, write_batch maps only the tokens it has not kept from
    // earlier batches (up to kKeptInputs): a memory that has seen other episodes must end an
    // episode in the state a fresh memory with the same parameters reaches, to the bit —
    // whether the episode's tokens were all kept, partly kept, or one new token among kept
    // ones (a single row mapped alone), and past the cap of kept rows.
    const int d = 24;
    const int dim = GENERATE(256, 1000, 4097);
    CAPTURE(dim);
    MemoryShape shape{d, d, dim};
    shape.positional_keys = true;
    Rng data = Rng::stream("test_rotation_kept_data", dim);
    const int vocab = static_cast<int>(RotationRnn::kKeptInputs) + 40;
    const RowMat codes = gaussian(data, vocab, d).cast<float>();
    const auto episode = [&](std::vector<int> tokens) {
        RowMat x(static_cast<Eigen::Index>(tokens.size()), d);
        for (std::size_t t = 0; t < tokens.size(); ++t) x.row(static_cast<Eigen::Index>(t)) = codes.row(tokens[t]);
        return x;
    };
    std::vector<std::vector<int>> episodes;
    for (int e = 0; e < 6; ++e) {  // tokens 0 .. 79 over six episodes: the first 64 distinct ones are kept
        std::vector<int> tokens;
        for (int t = 0; t < 30; ++t) tokens.push_back((e * 13 + t * 7) % 80);
        episodes.push_back(tokens);
    }
    episodes.push_back({3, 5, 3, 7, 5, 3});                    // all kept
    episodes.push_back({3, 90, 5, 90, 3});                     // one new token among kept ones
    episodes.push_back({91, 92, 3, 93, 91, 79, 94, 3, 95});    // new ones, kept ones, one seen but past the cap
    Rng params = Rng::stream("test_rotation_kept", dim);
    RotationRnn seasoned(shape, 0.9, "uniform", params);
    for (const auto& tokens : episodes) {
        const RowMat x = episode(tokens), keys = RowMat::Zero(x.rows(), d);
        seasoned.reset();
        seasoned.write_batch(keys, x);
        Rng again = Rng::stream("test_rotation_kept", dim);
        RotationRnn fresh(shape, 0.9, "uniform", again);
        fresh.write_batch(keys, x);
        CAPTURE(tokens);
        REQUIRE(seasoned.state_floats() == dim);
        REQUIRE(std::memcmp(seasoned.state().data(), fresh.state().data(), sizeof(float) * static_cast<std::size_t>(dim)) == 0);
    }
}
