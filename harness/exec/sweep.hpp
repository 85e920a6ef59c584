// memcap/harness/exec/sweep.hpp — `memcap sweep`: a config's cells on every core
// (and every MPI rank), crash-safe and resumable.
//
// Files, for config NAME.ini and --out DIR:
//
//   DIR/NAME.csv                the results, every cell in sweep order; it
//                               appears (atomically) only when the sweep is complete
//   DIR/NAME.csv.manifest.json  command, canonical config, version, compiler;
//                               written first, checked by --resume
//   DIR/NAME.csv.journal        cells in the order they finished, each flushed
//                               as it finishes; removed once NAME.csv is written
//   DIR/NAME.csv.crossing-R     the same for crossing round R (crossing.hpp), when a
//                               block has `crossing`; removed once NAME.csv is written
//
// The journal's format and how a torn record is dropped: journal.hpp. The CSV
// is assembled from the journal in cell order, hence byte-identical whatever
// the thread count, MPI rank count, completion order or number of interruptions.
//
// Signals: the first SIGINT/SIGTERM stops handing out cells; cells in flight
// finish and are journaled; the exit status is 130/143. A second one kills at
// once (the journal stays valid).
//
// MPI: mpi.hpp. Signals: signals.hpp.
#pragma once

#include <optional>
#include <string>

namespace memcap {

struct SweepOptions {
    std::string config_path;
    std::string out_dir = ".";
    std::optional<int> threads;  // default: all cores (OpenMP's default)
    bool resume = false;
    bool force = false;  // replace an existing sweep's files (otherwise refused without --resume)
    bool dry_run = false;
    bool check = false;  // only check the config (its cells and races), then exit
    bool progress = true;
    std::string command;  // recorded in the manifest
};

/// Runs `memcap sweep`; returns the exit status (0 done, 130/143 interrupted).
/// Bad input is a UsageError, thrown before any file is created or changed.
int run_sweep(const SweepOptions& options);

}  // namespace memcap
