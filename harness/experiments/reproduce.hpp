// memcap/harness/experiments/reproduce.hpp — `memcap reproduce`: every essay experiment at the essays' protocols.
//
// Runs essay 004 Parts 1-4 and essay 000's laboratory, then compares each
// published number with the measured one:
//
//   reproduce_cells.csv   the per-seed rows of every memory/task cell (the run CSV format)
//   reproduction.csv      one row per published number: experiment, quantity, essay value,
//                         measured value, 95% interval, verdict
//   REPRODUCTION.md       the same table for people, and the paired-permutation control
//   order_checks.csv      per backend: the largest output difference after writing the
//                         same pairs in two orders (order-free memories: 0 to rounding)
//
// Verdicts follow tests/support.hpp: a published number "agrees" when it is
// within 3·√(sd²/S + sd²/P) of the mean over S seeds (sd the spread across
// seeds, P the seeds behind the essay's number), plus half a unit of the
// essay's last printed digit; "about half" means within 10 points of 50%,
// "perfect" means at least 99%. Everything is seeded, so the files are
// byte-identical run to run and at any thread count.
#pragma once

#include <string>

namespace memcap {

/// Runs the reproduction into `out_dir` (created if missing). Returns the number of
/// published numbers that do not agree (a result, reported in the table). With
/// `print_timings`, prints CPU seconds per experiment and wall seconds per phase to stderr.
int reproduce(const std::string& out_dir, int threads, bool progress, const std::string& command,
              bool print_timings = false);

}  // namespace memcap
