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
//
// Journal format (text): a header line, then one record per finished cell:
//
//   memcap-journal 1 config=<16 hex digits> cells=<N>
//   @<cell index> <line count> <FNV-1a 64 of the lines, 16 hex digits>
//   <that many CSV rows, exactly as they go into NAME.csv>
//
// A record counts only when all its lines are there and its checksum matches,
// so a torn last record (kill -9, power loss mid-write) is dropped on --resume
// and that cell is computed again. The final CSV is assembled from the journal
// in cell order, hence byte-identical whatever the thread count, MPI rank
// count, completion order or number of interruptions.
//
// Signals: the first SIGINT/SIGTERM stops handing out cells; cells in flight
// finish and are journaled; the exit status is 130/143. A second one kills at
// once (the journal stays valid).
//
// MPI (built with -DMEMCAP_MPI=ON, started by mpirun or srun --mpi=pmix):
// rank 0 hands out cells in batches on request and journals every result;
// every rank computes with OpenMP threads (rank 0 on `threads` threads beside
// the one serving requests). Only rank 0 touches files.
#pragma once

#include <optional>
#include <string>

namespace memcap {

struct SweepOptions {
    std::string config_path;
    std::string out_dir = ".";
    std::optional<int> threads;  // default: all cores (OpenMP's default)
    bool resume = false;
    bool dry_run = false;
    bool progress = true;
    std::string command;  // recorded in the manifest
};

/// Runs `memcap sweep`; returns the exit status (0 done, 130/143 interrupted).
/// Bad input is a UsageError, thrown before any file is created or changed.
int run_sweep(const SweepOptions& options);

}  // namespace memcap
