// memcap/memories/theory/capacity.cpp — see capacity.hpp.
#include "memories/theory/capacity.hpp"

#include "memories/theory/crosstalk.hpp"
#include "memories/theory/hrr.hpp"
#include "memories/theory/numeric.hpp"

#include <boost/math/tools/toms748_solve.hpp>

#include <algorithm>
#include <cmath>
#include <utility>

namespace memcap::theory {
namespace {

const std::vector<double> kBetas = {4, 8, 16, 32, 64, 128};
constexpr int kCacheWidthMin = 4, kCacheWidthMax = 64;
constexpr std::int64_t kSmallestN = 4;

// The models at real n, as calls of the ModelTable: the same function names and arguments as
// recall_model.hpp's hrr_call, grid_call and cache_call, so a call at an integer n is theirs
// (the real and integer versions agree there) and the power-of-two search's values are reused.
ModelCall hrr_at(double n, std::int64_t D, double sigma) {
    return {"hrr_recall", {n, double(D), sigma}, [=] { return hrr_noisy_recall_real(n, D, sigma); }};
}
ModelCall grid_at(double n, int d, double sigma) {
    return {"grid_recall", {n, double(d), sigma}, [=] { return grid_recall_real(n, d, sigma); }};
}
ModelCall cache_at(double n, int d, double beta, double sigma) {
    return {"cache_recall", {n, double(d), beta, sigma}, [=] { return cache_recall_real(n, d, beta, sigma); }};
}

/// One candidate setting of a model (a width, and the cache's β): its accuracy at real n and
/// the largest n it describes.
struct Setting {
    int d;
    double beta;
    double limit;
    std::function<double(double)> accuracy;
};

/// n* of the envelope of `settings` (capacity.hpp): from line.n (the power-of-two capacity, or
/// 1 when not even 4 passes), each setting passing there, most accurate first, crossed from
/// the best n* so far when it still passes there.
void cross(CapacityLine& line, const std::vector<Setting>& settings, double threshold) {
    const double lo = line.n ? static_cast<double>(*line.n) : 1.0;
    std::vector<std::pair<double, std::size_t>> order;  // (accuracy at lo, setting)
    for (std::size_t i = 0; i < settings.size(); ++i)
        if (settings[i].limit >= lo) {
            const double a = settings[i].accuracy(lo);
            if (a >= threshold) order.emplace_back(a, i);
        }
    std::stable_sort(order.begin(), order.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    for (const auto& [at_lo, i] : order) {
        const Setting& s = settings[i];
        double from = lo, at_from = at_lo;
        if (line.nstar > 0) {  // only a setting still passing at the best n* so far can hold out longer
            if (s.limit <= line.nstar) continue;
            from = line.nstar, at_from = s.accuracy(from);
            if (at_from < threshold) continue;
        }
        double n = from, at_n = at_from;
        bool at_limit = false;
        for (double hi = std::min(2 * from, s.limit);; hi = std::min(2 * from, s.limit)) {
            if (hi <= from) {  // from is the setting's limit
                at_limit = true;
                break;
            }
            const double at_hi = s.accuracy(hi);
            if (at_hi >= threshold) {
                from = n = hi, at_from = at_n = at_hi;
                continue;
            }
            n = crossing_n(s.accuracy, from, hi, threshold, at_from, at_hi).n;
            at_n = s.accuracy(n);
            break;
        }
        if (n > line.nstar) line.nstar = n, line.nstar_d = s.d, line.nstar_beta = s.beta, line.nstar_accuracy = at_n,
                            line.nstar_at_limit = at_limit;
    }
}

/// Largest n = 4, 8, … ≤ limit with accuracy(n) ≥ threshold, scanning upward to the first miss.
template <class F>
std::optional<std::pair<std::int64_t, double>> scan_up(std::int64_t limit, double threshold, F accuracy) {
    std::optional<std::pair<std::int64_t, double>> best;
    for (std::int64_t n = kSmallestN; n <= limit; n *= 2) {
        const double a = accuracy(n);
        if (a < threshold) break;
        best = std::make_pair(n, a);
    }
    return best;
}

/// The same by bisection over n = 4, 8, …, limit, for a model whose accuracy falls with n.
template <class F>
std::optional<std::pair<std::int64_t, double>> bisect_down(std::int64_t limit, double threshold, F accuracy) {
    int fail = 2;
    while ((std::int64_t{1} << (fail + 1)) <= limit) ++fail;  // the largest exponent
    const double top = accuracy(std::int64_t{1} << fail);
    if (top >= threshold) return std::make_pair(std::int64_t{1} << fail, top);
    std::optional<std::pair<std::int64_t, double>> best;
    int ok = 1;  // below n = 4
    while (fail - ok > 1) {
        const int mid = (ok + fail) / 2;
        const double a = accuracy(std::int64_t{1} << mid);
        if (a >= threshold) ok = mid, best = std::make_pair(std::int64_t{1} << mid, a);
        else fail = mid;
    }
    return best;
}

// HRR at its natural size D = d = B.
CapacityLine hrr_line(std::int64_t b, double threshold, const std::function<double(int)>& sigma_at, ModelTable& models) {
    CapacityLine c;
    c.d = static_cast<int>(b);
    const double sigma = sigma_at(c.d);
    if (const auto s = scan_up(b, threshold, [&](std::int64_t n) { return models.value(hrr_call(n, b, sigma)); }))
    c.n = s->first, c.accuracy = s->second;
    c.widths = std::to_string(b);
    cross(c, {{c.d, 0.0, static_cast<double>(b), [&](double n) { return models.value(hrr_at(n, b, sigma)); }}}, threshold);
    return c;
}

// The square grid, widths from the largest d with d² ≤ B down while capacity grows.
CapacityLine grid_line(std::int64_t b, double threshold, const std::function<double(int)>& sigma_at, ModelTable& models) {
    CapacityLine line;
    int top = 4;
    while (std::int64_t{top} * 2 * top * 2 <= b) top *= 2;
    CapacityLine& best = line;
    std::string& widths = line.widths;
    for (int d = top; d >= 4 && std::int64_t{d} * d <= b; d /= 2) {
        widths += (widths.empty() ? "" : " ") + std::to_string(d);
        const double sigma = sigma_at(d);
        auto grid = [&](std::int64_t n) { return models.value(grid_call(n, d, sigma)); };
        if (best.n) {  // a narrower width counts only if it holds more: one call says
            const double a = *best.n * 2 <= std::int64_t{d} * d ? grid(*best.n * 2) : 0;
            if (a < threshold) break;
        }
        const auto s = bisect_down(std::int64_t{d} * d, threshold, grid);  // n ≤ d²: the grid's own floats
        if (!s) break;
        best.n = s->first, best.d = d, best.accuracy = s->second;
    }
    std::vector<Setting> settings;  // every square width, d² its largest n
    for (int d = top; d >= 4 && std::int64_t{d} * d <= b; d /= 2) {
        const double sigma = sigma_at(d);
        settings.push_back({d, 0.0, double(d) * d, [&models, d, sigma](double n) { return models.value(grid_at(n, d, sigma)); }});
    }
    cross(line, settings, threshold);
    return line;
}

// The summary's budgets only: widths 4..64, betas 4..128, n <= B / 2d.
CapacityLine cache_line(std::int64_t b, double threshold, const std::function<double(int)>& sigma_at, ModelTable& models) {
    CapacityLine line;
    CapacityLine& best = line;
    std::string& widths = line.widths;
    std::size_t lead = kBetas.size() / 2;  // the beta that passed last, tried first
    for (int d = kCacheWidthMin; d <= kCacheWidthMax; d *= 2) {
        const std::int64_t pairs = b / (2 * std::int64_t{d});
        if (pairs < kSmallestN) break;
        if (best.n && pairs <= *best.n) break;  // wider codes hold fewer pairs
        widths += (widths.empty() ? "" : " ") + std::to_string(d);
        const double sigma = sigma_at(d);
        // Does some beta reach the threshold at n? Climbs from `lead` (the beta that passed
        // last) towards higher accuracy, taking it as unimodal in beta; the first that passes.
        auto passes = [&](std::int64_t n) -> std::optional<std::pair<double, double>> {
            auto at = [&](std::size_t i) { return models.value(cache_call(n, d, kBetas[i], sigma)); };
            std::size_t i = lead;
            double a = at(i);
            while (a < threshold) {
                const double up = i + 1 < kBetas.size() ? at(i + 1) : -1;
                const double down = i > 0 ? at(i - 1) : -1;
                if (up <= a && down <= a) return std::nullopt;  // a peak below the threshold
                if (up > down) ++i, a = up;
                else --i, a = down;
            }
            lead = i;
            return std::make_pair(kBetas[i], a);
        };
        // Bisection over log2 n in (best, pairs]: the model's accuracy falls with n.
        int lo = best.n ? static_cast<int>(std::log2(static_cast<double>(*best.n))) : 1;  // known or assumed to fail above
        int hi = static_cast<int>(std::log2(static_cast<double>(pairs)));
        std::optional<std::pair<double, double>> found;
        int found_e = 0;
        if (const auto top_pass = passes(std::int64_t{1} << hi)) {
            found = top_pass, found_e = hi;
        } else {
            int fail = hi;  // smallest exponent known to fail
            int ok = lo;    // largest exponent known (or taken) not to matter
            while (fail - ok > 1) {
                const int mid = (ok + fail) / 2;
                if (const auto m = passes(std::int64_t{1} << mid)) found = m, found_e = mid, ok = mid;
                else fail = mid;
            }
        }
        if (found) best.n = std::int64_t{1} << found_e, best.d = d, best.beta = found->first, best.accuracy = found->second;
    }
    std::vector<Setting> settings;  // every width and β, B / 2d pairs the largest n
    for (int d = kCacheWidthMin; d <= kCacheWidthMax; d *= 2) {
        const std::int64_t pairs = b / (2 * std::int64_t{d});
        if (pairs < 1) break;
        const double sigma = sigma_at(d);
        for (const double beta : kBetas)
            settings.push_back({d, beta, static_cast<double>(pairs),
                                [&models, d, beta, sigma](double n) { return models.value(cache_at(n, d, beta, sigma)); }});
    }
    cross(line, settings, threshold);
    return line;
}

}  // namespace

Crossing crossing_n(const std::function<double(double)>& accuracy, double lo, double hi, double threshold, double at_lo,
                    double at_hi) {
    require(lo >= 1 && hi > lo && at_lo >= threshold && at_hi < threshold,
            "crossing_n: need 1 <= lo < hi, accuracy(lo) >= threshold > accuracy(hi)");
    int calls = 0;
    const auto f = [&](double x) {
        ++calls;
        return accuracy(std::exp(x)) - threshold;
    };
    const auto done = [](double a, double b) { return std::abs(b - a) <= kCrossingTolerance; };
    std::uintmax_t iterations = 200;
    const auto r = boost::math::tools::toms748_solve(f, std::log(lo), std::log(hi), at_lo - threshold, at_hi - threshold, done,
                                                     iterations);
    return {std::exp(0.5 * (r.first + r.second)), std::exp(r.first), std::exp(r.second), calls};
}

const std::vector<CapacityModel>& capacity_models() {
    static const std::vector<CapacityModel> models = {
        {"hrr", "hrr_recall", true, hrr_line,
         [](double sigma) {
             return sigma > 0 ? "natural size D = d = B; query noise approximate (see predictions)" : "natural size D = d = B";
         }},
        {"linear", "grid_recall", true, grid_line, [](double) { return "square d x d grid (phi identity)"; }},
        {"softmax", "cache_recall", false, cache_line,
         [](double) { return "no eviction (n <= B/2d); beta from 4 8 16 32 64 128: one that passes (climbing from the last)"; }},
    };
    return models;
}

}  // namespace memcap::theory
