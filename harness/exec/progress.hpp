// memcap/harness/exec/progress.hpp — a progress bar on stderr.
//
// On a terminal: one redrawn line "[#####     ] 120/400 cells  35.2/s  ETA 8s".
// Otherwise (logs, CI): a plain line every 10% of the cells. Silent when
// `enabled` is false. Thread-safe: tick() may be called from any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace memcap {

class Progress {
public:
    Progress(std::int64_t total, std::string label, bool enabled = true);
    void tick(std::int64_t done_now = 1);
    void finish();

private:
    void draw(bool final_line);
    std::int64_t total_, done_ = 0, last_step_ = -1;
    std::string label_;
    bool enabled_, tty_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    std::mutex mutex_;
};

}  // namespace memcap
