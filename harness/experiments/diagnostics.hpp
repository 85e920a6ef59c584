// memcap/harness/experiments/diagnostics.hpp — attention diagnostics that are not memory tasks
// (essay 004 Parts 2 and 4). Both use double precision and their own streams.
//
// √d statistics: for each d, `trials` draws of a query q and `keys` keys with
// N(0, 1) entries (not normalised), weights p = softmax(K q) (unscaled) or
// softmax(K q / √d) (scaled); reported as means over trials of the largest
// weight, the entropy −Σ p ln p in nats, and the gradient proxy Σ p(1 − p).
// Drawn exactly but cheaply: given q, the logits K q are i.i.d. N(0, ‖q‖²), so a
// trial draws ‖q‖² ~ χ²_d and `keys` standard normals (tests/test_diagnostics.cpp
// checks this against forming K q from full draws).
//
// Weight vs influence: `layers` independent attention reads over `records`
// records. Query and keys are random unit vectors in d dimensions, logits
// β q·k (β = 16 at d = 32 gives logits of standard deviation ≈ 2.8); values
// are random unit directions times log-normal lengths exp(σ z). A record's
// influence is ‖o − o₋ᵢ‖, o₋ᵢ the read with record i removed and the other
// weights renormalised (= pᵢ/(1 − pᵢ) · ‖vᵢ − o‖). Reported: the mean over
// layers of Spearman's rank correlation between weights and influences, and
// the fraction of layers whose largest weight is not the most influential record.
#pragma once

#include <cstdint>
#include <vector>

namespace memcap {

struct SqrtDStats {
    int d = 0;
    bool scaled = false;
    double max_weight = 0, entropy_nats = 0, grad_proxy = 0;     // means over trials
    double max_weight_se = 0, entropy_se = 0, grad_proxy_se = 0;  // their standard errors
    int trials = 0;
};

std::vector<SqrtDStats> sqrt_d_statistics(const std::vector<int>& dims, int keys, int trials, std::uint64_t seed);

struct InfluenceStats {
    double sigma = 0;
    double spearman_mean = 0, spearman_se = 0;
    double mismatch_frac = 0;
    int layers = 0;
};

InfluenceStats weight_vs_influence(double sigma, int records, int d, double beta, int layers, std::uint64_t seed);

}  // namespace memcap
