// memcap/tests/test_progress.cpp — the progress line's ETA, on a fake clock (no timing).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <string>

#include "harness/exec/progress.hpp"

using namespace memcap;
using namespace std::chrono_literals;

namespace {
std::string shown(double seconds) {  // as the progress line prints seconds
    char text[32];
    std::snprintf(text, sizeof text, "%.0fs", seconds);
    return text;
}
}  // namespace

TEST_CASE("progress: the cost model prices the cells before any is timed", "[progress]") {
    std::chrono::steady_clock::time_point t{};
    const auto clock = [&] { return t; };
    const double work = 4e11;  // about 100 s of work at kSecondsPerWork
    Progress bar(100, "test", true, work, clock);  // enabled: ticks count (the line goes to stderr)
    bar.set_threads(2);
    for (int i = 0; i < 100; ++i) bar.expect("a", work / 100);
    // before any cell: every cell priced by the cost model, over the two threads
    CHECK(bar.eta_text() == shown(work * kSecondsPerWork / 2));
    // one small cell done at 0.5 s: still under a twentieth of the weight and kMeasuredAfter, still priced
    t += 500ms;
    bar.tick("a", work / 100, 0.9);
    CHECK(bar.eta_text() == shown((work - work / 100) * kSecondsPerWork / 2));
    // from kMeasuredAfter on, the cells' own seconds take over: 99 cells left of class "a", measured
    // at 0.9 s each (one cell is too few for its class; all classes together give the same rate)
    REQUIRE(kMeasuredAfter > 0.5);
    t = std::chrono::steady_clock::time_point{} + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                      std::chrono::duration<double>(kMeasuredAfter));
    CHECK(bar.eta_text() == shown((work - work / 100) * (0.9 / (work / 100)) / 2));
}

TEST_CASE("progress: without weights nothing prices a cell before one is done", "[progress]") {
    std::chrono::steady_clock::time_point t{};
    Progress bar(100, "test", true, 0, [&] { return t; });
    CHECK(bar.eta_text() == "?");
    t += 4s;
    bar.tick();
    CHECK(bar.eta_text() == shown(4.0 * (1.0 - 0.01) / 0.01));
}
