// memcap/harness/exec/progress.cpp — see progress.hpp.
#include "harness/exec/progress.hpp"

#include <algorithm>
#include <cstdio>

#include <unistd.h>

namespace memcap {

Progress::Progress(std::int64_t total, std::string label, bool enabled, double total_weight, Clock now)
    : total_(total), total_weight_(total_weight > 0 ? total_weight : static_cast<double>(total)),
      prior_(total_weight > 0 ? kSecondsPerWork : 0.0), label_(std::move(label)), enabled_(enabled && total > 0),
      tty_(::isatty(2) != 0), now_(now ? std::move(now) : Clock([] { return std::chrono::steady_clock::now(); })),
      start_(now_()), last_draw_(start_) {}

double Progress::seconds() const { return std::chrono::duration<double>(now_() - start_).count(); }

void Progress::tick(std::int64_t done_now, double weight) {
    if (!enabled_) return;
    std::lock_guard<SpinLock> lock(lock_);
    advance(done_now, weight);
}

void Progress::advance(std::int64_t done_now, double weight) {
    done_ += done_now;
    weight_done_ += weight;
    const auto now = now_();
    if (tty_) {
        if (now - last_draw_ > std::chrono::milliseconds(100) || done_ == total_) draw(false), last_draw_ = now;
    } else {
        // a plain line per 10% of the cells, once the run has lasted a second
        const std::int64_t step = done_ * 10 / total_;
        if (step != last_step_ && done_ < total_ && now - start_ > std::chrono::seconds(1))
            draw(false), last_step_ = step;
    }
}

void Progress::expect(const std::string& cls, double weight) {
    std::lock_guard<SpinLock> lock(lock_);
    classes_[cls].expected += weight;
}

void Progress::tick(const std::string& cls, double weight, double seconds) {
    if (!enabled_) return;
    std::lock_guard<SpinLock> lock(lock_);  // the class and the totals move together
    Class& c = classes_[cls];
    c.weight_done += weight, c.seconds += seconds, c.cells_done += 1;
    busy_ += seconds;
    advance(1, weight);
}

double Progress::class_eta(double wall) const {
    if (busy_ <= 0 || wall <= 0 || weight_done_ <= 0) return -1;
    const double overall = busy_ / weight_done_;  // seconds per unit weight, all classes together
    double left = 0;
    for (const auto& [name, c] : classes_) {
        const double rate = c.cells_done >= 2 && c.weight_done > 0 ? c.seconds / c.weight_done : overall;
        left += std::max(0.0, c.expected - c.weight_done) * rate;
    }
    // the threads busy: at most the cells left (the last few run on fewer)
    const double threads = threads_ > 0 ? static_cast<double>(std::min<std::int64_t>(threads_, std::max<std::int64_t>(1, total_ - done_)))
                                         : busy_ / wall;
    return left / threads;
}

void Progress::finish() {
    if (!enabled_) return;
    std::lock_guard<SpinLock> lock(lock_);
    if (tty_ || last_step_ >= 0) draw(true);
}

double Progress::eta(double secs) const {
    const double share = weight_done_ / total_weight_;
    if (share > 0 && (share >= 0.05 || secs >= kMeasuredAfter)) {  // measured on the cells done
        const double by_class = class_eta(secs);
        return by_class >= 0 ? by_class : secs * (1.0 - share) / share;
    }
    if (prior_ <= 0) return -1;
    // priced by the cost model, over the threads that will run the cells left
    const double threads = static_cast<double>(std::max<std::int64_t>(1, std::min<std::int64_t>(std::max(threads_, 1), total_ - done_)));
    return std::max(0.0, total_weight_ - weight_done_) * prior_ / threads;
}

std::string Progress::eta_text() {
    std::lock_guard<SpinLock> lock(lock_);
    const double e = eta(seconds());
    char text[32];
    std::snprintf(text, sizeof text, e >= 0 ? "%.0fs" : "?", e);
    return text;
}

void Progress::draw(bool final_line) {
    const double secs = seconds();
    const double rate = secs > 0 ? static_cast<double>(done_) / secs : 0.0;
    const double eta_s = final_line ? secs : eta(secs);
    char eta_text[32];
    std::snprintf(eta_text, sizeof eta_text, eta_s >= 0 ? "%.0fs" : "?", eta_s);
    if (tty_) {
        constexpr int width = 30;
        const int filled = static_cast<int>(width * done_ / total_);
        std::fprintf(stderr, "\r%s [%s%s] %lld/%lld %s  %.1f/s  %s %s ", label_.c_str(),
                     std::string(static_cast<std::size_t>(filled), '#').c_str(),
                     std::string(static_cast<std::size_t>(width - filled), ' ').c_str(), static_cast<long long>(done_),
                     static_cast<long long>(total_), unit_.c_str(), rate, final_line ? "took" : "ETA", eta_text);
        if (final_line) std::fputc('\n', stderr);
    } else {
        std::fprintf(stderr, "%s: %lld/%lld %s (%.0f%%), %.1f/s, %s %s\n", label_.c_str(),
                     static_cast<long long>(done_), static_cast<long long>(total_), unit_.c_str(),
                     100.0 * static_cast<double>(done_) / static_cast<double>(total_), rate,
                     final_line ? "took" : "ETA", eta_text);
    }
    std::fflush(stderr);
}

}  // namespace memcap
