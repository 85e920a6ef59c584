// memcap/harness/eval/abstention.cpp — see abstention.hpp.
#include "harness/eval/abstention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {

namespace {

double balance(double right_accepted, double present, double absent_rejected, double absent) {
    if (present > 0 && absent > 0) return 0.5 * (right_accepted / present + absent_rejected / absent);
    if (present > 0) return right_accepted / present;
    return absent > 0 ? absent_rejected / absent : 0.0;
}

}  // namespace

double choose_threshold(const std::vector<Decision>& decisions) {
    if (decisions.empty()) return 0.0;
    std::vector<Decision> d = decisions;
    std::stable_sort(d.begin(), d.end(), [](const Decision& a, const Decision& b) { return a.statistic < b.statistic; });
    double present = 0, absent = 0, right = 0;
    for (const auto& x : d) {
        if (x.kind == Decision::Absent) absent += 1;
        else present += 1;
        if (x.kind == Decision::PresentRight) right += 1;
    }
    // Threshold below entry k: entries k … end accepted, 0 … k − 1 rejected.
    double best = balance(right, present, 0, absent), best_threshold = d.front().statistic;
    double right_accepted = right, absent_rejected = 0;
    for (std::size_t k = 1; k <= d.size(); ++k) {
        const Decision& gone = d[k - 1];  // now rejected
        if (gone.kind == Decision::Absent) absent_rejected += 1;
        if (gone.kind == Decision::PresentRight) right_accepted -= 1;
        if (k < d.size() && d[k].statistic == gone.statistic) continue;  // not a place a threshold can fall
        const double t = k < d.size() ? 0.5 * (double(gone.statistic) + double(d[k].statistic))
                                      : std::nextafter(double(gone.statistic), std::numeric_limits<double>::infinity());
        const double b = balance(right_accepted, present, absent_rejected, absent);
        if (b > best) best = b, best_threshold = t;
    }
    return best_threshold;
}

double roc_auc(const std::vector<Decision>& decisions) {
    std::vector<Decision> d = decisions;
    std::stable_sort(d.begin(), d.end(), [](const Decision& a, const Decision& b) { return a.statistic < b.statistic; });
    double present = 0, absent = 0, rank_sum = 0;  // Σ of the present queries' (mid)ranks
    for (std::size_t i = 0; i < d.size();) {
        std::size_t j = i;
        while (j < d.size() && d[j].statistic == d[i].statistic) ++j;
        const double mid = 0.5 * (double(i + 1) + double(j));  // ranks i + 1 … j share their mean
        for (std::size_t k = i; k < j; ++k) {
            if (d[k].kind == Decision::Absent) absent += 1;
            else present += 1, rank_sum += mid;
        }
        i = j;
    }
    if (present == 0 || absent == 0) return std::numeric_limits<double>::quiet_NaN();
    return (rank_sum - present * (present + 1) / 2) / (present * absent);
}

Abstention score_abstention(const std::vector<Decision>& decisions, double threshold) {
    Abstention a;
    a.threshold = threshold;
    double accepted_absent = 0, accepted_present = 0, right_accepted = 0;
    for (const auto& x : decisions) {
        const bool accept = double(x.statistic) >= threshold;
        if (x.kind == Decision::Absent) {
            a.absent += 1;
            accepted_absent += accept;
        } else {
            a.present += 1;
            accepted_present += accept;
            right_accepted += accept && x.kind == Decision::PresentRight;
        }
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    a.false_accept = a.absent ? accepted_absent / double(a.absent) : nan;
    a.present_accept = a.present ? accepted_present / double(a.present) : nan;
    a.balanced = balance(right_accepted, double(a.present), double(a.absent) - accepted_absent, double(a.absent));
    a.auc = roc_auc(decisions);
    return a;
}

}  // namespace memcap
