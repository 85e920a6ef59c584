// memcap/harness/exec/progress.hpp — a progress bar on stderr.
//
// On a terminal: one redrawn line "[#####     ] 120/400 cells  35.2/s  ETA 8s".
// Otherwise (logs, CI): a plain line every 10% of the cells. Silent when
// `enabled` is false. Thread-safe: tick() may be called from any thread.
//
// Cells differ in cost by orders of magnitude (n, budget, episodes), and a
// sweep starts its biggest cells first, so the ETA is not cells left / cells
// per second: each tick may carry a weight (an estimate of the cell's work,
// cell_work in eval/cell.hpp), and the ETA is elapsed × (weight left / weight
// done), shown once a twentieth of the weight or 3 s have passed.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace memcap {

class Progress {
public:
    /// `total_weight` 0: every cell weighs 1.
    Progress(std::int64_t total, std::string label, bool enabled = true, double total_weight = 0);
    void tick(std::int64_t done_now = 1, double weight = 1);
    void finish();

private:
    void draw(bool final_line);
    std::int64_t total_, done_ = 0, last_step_ = -1;
    double total_weight_, weight_done_ = 0;
    std::string label_;
    bool enabled_, tty_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    std::mutex mutex_;
};

}  // namespace memcap
