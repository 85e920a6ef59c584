// memcap/memories/theory.hpp — theory of associative-recall accuracy (draft).
#pragma once

#include <cstdint>

namespace memcap::theory {

double normal_log_cdf(double x);
double wta_recall(double gap, double sd_target, double sd_other, double candidates);
double fks_recall(double s, double candidates);

struct HrrMoments {
    double signal_mean, signal_var, target_var, other_var;
};
HrrMoments hrr_moments(std::int64_t n, std::int64_t D);
double hrr_recall(std::int64_t n, std::int64_t D, std::int64_t candidates);
double grid_recall(std::int64_t n, int d, double noise_sigma = 0.0);
double cache_recall(std::int64_t n, int d, double beta = 16.0, double noise_sigma = 0.0);
double sphere_tail(int d, double x);

}  // namespace memcap::theory
