// memcap/harness/exec/mpi.hpp — a sweep across MPI ranks.
//
// Built with -DMEMCAP_MPI=ON and started by mpirun or `srun --mpi=pmix`: rank 0
// hands out cells in small batches as ranks ask for them (dynamic), computes
// cells itself on `threads` threads beside one thread that serves the
// requests, and records every result; the other ranks compute and send their
// rows back. Only rank 0 touches files. Without MPI (or not launched by an MPI
// launcher) a session has one rank, and a process started as one of several
// without MPI refuses to run rather than compute the whole sweep in every copy.
#pragma once

#include "harness/eval/cell.hpp"

#include <functional>
#include <string>
#include <vector>

namespace memcap {

/// MPI for the lifetime of one sweep, when the process was started by an MPI launcher.
class MpiSession {
public:
    MpiSession();  // UsageError when started as several processes without MPI
    ~MpiSession();
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }

    /// Every rank passes its status (0 = fine); all get the largest.
    int agree(int status) const;
    /// Element-wise sum over the ranks, in place, on every rank. Exact where at most one
    /// rank holds a non-zero value per element (x + 0 = x), as in the tuning's scores.
    void sum(std::vector<double>& values) const;

private:
    [[maybe_unused]] bool active_ = false;  // used only with MEMCAP_MPI
    int rank_ = 0, size_ = 1;
};

/// Called on rank 0 for each finished cell: its index, its rows and the rank that computed it.
using RecordCell = std::function<void(std::size_t, const std::string&, int rank)>;

/// Rank 0 of several: serves the other ranks' requests for cells of `todo` and computes
/// cells itself on `threads` threads, until `todo` is done or a stop is requested.
/// Rethrows the first exception from `record` or from a cell.
void mpi_serve(const MpiSession& session, const std::vector<CellSpec>& cells, const std::vector<std::size_t>& todo,
               int threads, const RecordCell& record);

/// Any other rank: asks rank 0 for batches of cells, computes them, sends the rows back.
void mpi_work(const MpiSession& session, const std::vector<CellSpec>& cells, int threads);

}  // namespace memcap
