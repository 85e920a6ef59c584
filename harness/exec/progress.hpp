// memcap/harness/exec/progress.hpp — a progress bar on stderr.
//
// On a terminal: one redrawn line "[#####     ] 120/400 cells  35.2/s  ETA 8s".
// Otherwise (logs, CI): a plain line every 10% of the cells. Silent when
// `enabled` is false. Thread-safe: tick() may be called from any thread.
//
// Cells differ in cost by orders of magnitude (n, budget, episodes), and a
// sweep starts its biggest cells first, so the ETA is not cells left / cells
// per second: each tick may carry a weight (an estimate of the cell's work,
// cell_work in eval/cell.hpp), and the ETA is shown once a twentieth of the weight or
// 3 s have passed: by the classes below where cells report them, else elapsed ×
// (weight left / weight done).
//
// A cost model is wrong by a different factor for each memory (normals, FFTs and memory
// traffic are not FLOPs), so a sweep that runs one memory's big cells first would extrapolate
// that memory's factor to all. Cells may therefore name a class (the memory and readout) and
// report the seconds they took: each class's seconds per unit weight are then measured on
// its own cells (two or more done; until then, all classes' together), the seconds left are
// Σ over classes of weight left × that rate, and the ETA is those seconds over the threads
// running cells (set_threads; without it, the parallelism seen so far, seconds of cells done
// over wall time, which undercounts while the first long cells are still running).
//
// Before any of that is known (no cell done, or less than a twentieth of the weight in the
// first kMeasuredAfter seconds), the weight left is priced at kSecondsPerWork, the cost
// model's rough rate on one thread: the ETA is a number from the first line, then
// calibrated as above.
#pragma once

#include "core/spin_lock.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace memcap {

/// Seconds one unit of cell work (cell_work in eval/cell.hpp: about a FLOP of the memory's
/// cost model) takes on one thread, roughly: the price of the cells before any is timed.
/// Measured seconds of cells over their work, per tuning round and for the scored cells of
/// a cut-down capacity sweep (seeds 2, budgets 1024-16384, n 64-4096) on the 2-core EPYC,
/// loaded: 1.4e-10 to 4.4e-10. A wrong value only moves the first estimates, never a result.
constexpr double kSecondsPerWork = 2.5e-10;
/// Seconds after which the cells done price the rest even if they are less than a twentieth
/// of the weight. 1 s: the capacity sweep's scored cells ran about 13 times faster than
/// kSecondsPerWork prices them (2026-12-05, 2-core EPYC: an ETA of 391 s at its first line,
/// 1.1 s in, for 29 s in all; 25 s from the cells done at 2 s), and by 1 s hundreds of
/// cells are done. The non-terminal progress prints its first line at 1 s.
constexpr double kMeasuredAfter = 1.0;

class Progress {
public:
    using Clock = std::function<std::chrono::steady_clock::time_point()>;
    /// `total_weight` 0: every cell weighs 1, and nothing prices a cell before one is done (the
    /// ETA is "?" until then); otherwise weights are cell work, priced at kSecondsPerWork until
    /// cells are timed. `now` replaces the steady clock (tests).
    Progress(std::int64_t total, std::string label, bool enabled = true, double total_weight = 0, Clock now = {});
    void tick(std::int64_t done_now = 1, double weight = 1);
    /// Threads running the cells: the class-calibrated ETA divides the seconds left by it.
    void set_threads(int threads) { threads_ = threads; }
    /// What the bar counts ("cells" unless set).
    void set_unit(std::string unit) { unit_ = std::move(unit); }
    /// Declares a cell of class `cls` and weight `weight` still to run (before the ticks).
    void expect(const std::string& cls, double weight);
    /// One cell of class `cls` done, of weight `weight`, which took `seconds` on its thread.
    void tick(const std::string& cls, double weight, double seconds);
    void finish();
    /// The ETA as the progress line shows it now: seconds ("12s"), or "?" when nothing prices the
    /// cells left.
    std::string eta_text();

private:
    void draw(bool final_line);
    double seconds() const;  // since the start
    double eta(double secs) const;  // < 0: not known
    void advance(std::int64_t done_now, double weight);  // with the lock held
    std::int64_t total_, done_ = 0, last_step_ = -1;
    double total_weight_, weight_done_ = 0, prior_;
    std::string label_, unit_ = "cells";
    struct Class {
        double expected = 0, weight_done = 0, seconds = 0;
        std::int64_t cells_done = 0;
    };
    std::map<std::string, Class> classes_;
    double busy_ = 0;  // seconds of the cells done that reported them
    int threads_ = 0;
    /// Seconds left by the classes' own rates, over the parallelism seen; < 0 when not known.
    double class_eta(double wall) const;
    bool enabled_, tty_;
    Clock now_;
    std::chrono::steady_clock::time_point start_, last_draw_;
    SpinLock lock_;  // ticks come from every thread; it never sleeps (core/spin_lock.hpp)
};

}  // namespace memcap
