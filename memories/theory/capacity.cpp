// memcap/memories/theory/capacity.cpp — see capacity.hpp.
#include "memories/theory/capacity.hpp"

#include <cmath>
#include <utility>

namespace memcap::theory {
namespace {

const std::vector<double> kBetas = {4, 8, 16, 32, 64, 128};
constexpr int kCacheWidthMin = 4, kCacheWidthMax = 64;
constexpr std::int64_t kSmallestN = 4;

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
    return line;
}

}  // namespace

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
