// memcap/harness/exec/mpi.cpp — see mpi.hpp.
#include "harness/exec/mpi.hpp"

#include "core/error.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/signals.hpp"
#include "harness/build_stamp.hpp"

#if MEMCAP_MPI
#include "harness/exec/mpi_ops.h"

#include <dlfcn.h>

#include <filesystem>
#endif

#include <omp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

namespace memcap {
namespace {

/// The launcher's process count from its environment (1 when not launched as several processes).
long launched_processes() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
        if (const char* v = std::getenv(var)) return std::max(1L, std::strtol(v, nullptr, 10));
    return 1;
}

[[maybe_unused]] bool launched_by_mpi() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

#if MEMCAP_MPI
constexpr int kTagResults = 1;  // worker → rank 0: finished cells, and a request for more
constexpr int kTagWork = 2;     // rank 0 → worker: cell indices (none: stop)

// Results message: [last, want, count] then per cell [index, length, bytes...], all u64 little-endian host order.
void put_u64(std::string& buf, std::uint64_t x) { buf.append(reinterpret_cast<const char*>(&x), sizeof x); }
std::uint64_t get_u64(const std::string& buf, std::size_t& pos) {
    std::uint64_t x = 0;
    std::memcpy(&x, buf.data() + pos, sizeof x);
    pos += sizeof x;
    return x;
}

/// MPI's calls, from the module built beside memcap (mpi_ops.h), loaded on first use: only a
/// process started by an MPI launcher loads MPI's libraries. Looked for beside the running
/// executable, then where the build put it.
const MemcapMpiOps& mpi() {
    static const MemcapMpiOps* ops = [] {
        std::string tried, why;
        std::error_code ec;
        const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
        std::vector<std::string> paths;
        if (!ec) paths.push_back((exe.parent_path() / build_mpi_module_name()).string());
        if (paths.empty() || paths[0] != build_mpi_module_path()) paths.emplace_back(build_mpi_module_path());
        for (const std::string& path : paths) {
            // RTLD_GLOBAL: OpenMPI's own components, which it loads, look for its symbols globally
            void* module = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
            if (!module) {
                const char* error = ::dlerror();
                tried += (tried.empty() ? "" : ", ") + path, why = error ? error : "";
                continue;
            }
            const auto get = reinterpret_cast<MemcapMpiOpsFn>(::dlsym(module, MEMCAP_MPI_OPS_SYMBOL));
            const MemcapMpiOps* found = get ? get() : nullptr;
            if (found && found->version == MEMCAP_MPI_OPS_VERSION) return found;
            tried += (tried.empty() ? "" : ", ") + path, why = "not memcap's MPI module of this version";
        }
        throw UsageError("started by an MPI launcher, but memcap's MPI module could not be loaded (" + tried + "): " + why);
    }();
    return *ops;
}

std::string recv_bytes(int source, int tag, int* from) {
    int sender = 0;
    const int bytes = mpi().probe(source, tag, &sender);
    std::string buf(static_cast<std::size_t>(bytes), '\0');
    mpi().recv(buf.data(), bytes, sender, tag);
    if (from) *from = sender;
    return buf;
}

#endif

}  // namespace

MpiSession::MpiSession() {
#if MEMCAP_MPI
    if (!launched_by_mpi()) {
        if (launched_processes() > 1)
            throw UsageError("started as " + std::to_string(launched_processes()) +
                             " processes without MPI; under Slurm use `srun --mpi=pmix`");
        return;
    }
    const bool funneled = mpi().init_funneled(&rank_, &size_) != 0;
    active_ = true;
    if (!funneled && size_ > 1) {
        if (rank_ == 0) std::fprintf(stderr, "memcap: error: the MPI library lacks MPI_THREAD_FUNNELED\n");
        mpi().abort_world(2);
    }
#else
    if (launched_processes() > 1)
        throw UsageError("started as " + std::to_string(launched_processes()) +
                         " processes, but this memcap was built without MPI (configure with -DMEMCAP_MPI=ON)");
#endif
}

MpiSession::~MpiSession() {
#if MEMCAP_MPI
    if (active_) mpi().finalize();
#endif
}

int MpiSession::agree(int status) const {
#if MEMCAP_MPI
    if (active_) mpi().max_int(&status);
#endif
    return status;
}

void MpiSession::sum([[maybe_unused]] std::vector<double>& values) const {
#if MEMCAP_MPI
    if (active_ && size_ > 1 && !values.empty())
        mpi().sum_doubles(values.data(), static_cast<int>(values.size()));
#endif
}

#if MEMCAP_MPI

namespace {

/// Rank 0's serving thread: answers requests until every worker has been told to stop.
void serve_requests(int workers, const std::vector<std::size_t>& todo, std::atomic<std::size_t>& next,
                    const std::function<bool()>& halted, const std::function<void(std::size_t, const std::string&, int)>& record) {
    int active = workers;
    while (active > 0) {
        int source = 0;
        if (!mpi().iprobe_any(kTagResults, &source)) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
            continue;
        }
        int from = 0;
        const std::string msg = recv_bytes(source, kTagResults, &from);
        std::size_t pos = 0;
        const auto last = get_u64(msg, pos), want = get_u64(msg, pos), count = get_u64(msg, pos);
        for (std::uint64_t k = 0; k < count; ++k) {
            const auto idx = get_u64(msg, pos), len = get_u64(msg, pos);
            record(static_cast<std::size_t>(idx), msg.substr(pos, len), from);
            pos += len;
        }
        if (last) {
            --active;
            continue;
        }
        std::string work;
        for (std::uint64_t k = 0; k < want && !halted(); ++k) {
            const std::size_t at = next.fetch_add(1);
            if (at >= todo.size()) break;
            put_u64(work, todo[at]);
        }
        mpi().send(work.data(), static_cast<int>(work.size()), from, kTagWork);
        if (work.empty()) --active;
    }
}

}  // namespace

void mpi_serve(const MpiSession& session, const std::vector<CellSpec>& cells, const std::vector<std::size_t>& todo,
               int threads, const RecordCell& record) {
    const int size = session.size();
    // One thread serves the workers' requests (the only one calling MPI); the others compute.
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::exception_ptr failure;
    std::mutex failure_mutex;
    auto fail = [&] {
        std::lock_guard<std::mutex> lock(failure_mutex);
        if (!failure) failure = std::current_exception();
        failed = true;
    };
    auto halted = [&] { return stop_requested().load() || failed.load(); };
    auto guarded = [&](std::size_t idx, const std::string& rows, int rank) {
        try {
            if (!failed) record(idx, rows, rank);
        } catch (...) {
            fail();
        }
    };
#pragma omp parallel num_threads(threads + 1)
    {
        if (omp_get_thread_num() == 0) {
            serve_requests(size - 1, todo, next, halted, guarded);
        } else {
            while (!halted()) {
                const std::size_t at = next.fetch_add(1);
                if (at >= todo.size()) break;
                try {
                    guarded(todo[at], cell_text(cells[todo[at]]), 0);
                } catch (...) {
                    fail();
                }
            }
        }
    }
    if (failure) std::rethrow_exception(failure);
}

void mpi_work(const MpiSession& session, const std::vector<CellSpec>& cells, int threads) {
    std::string results;
    std::uint64_t count = 0;
    while (true) {
        const bool last = stop_requested().load();
        std::string msg;
        put_u64(msg, last ? 1 : 0);
        put_u64(msg, static_cast<std::uint64_t>(2 * threads));
        put_u64(msg, count);
        msg += results;
        mpi().send(msg.data(), static_cast<int>(msg.size()), 0, kTagResults);
        results.clear();
        count = 0;
        if (last) return;
        const std::string work = recv_bytes(0, kTagWork, nullptr);
        if (work.empty()) return;
        std::vector<std::size_t> batch(work.size() / sizeof(std::uint64_t));
        std::size_t pos = 0;
        for (auto& i : batch) i = static_cast<std::size_t>(get_u64(work, pos));
        try {
            run_cells_unordered(cells, batch, threads, stop_requested(), [&](std::size_t idx, const std::string& rows, double) {
                put_u64(results, idx);
                put_u64(results, rows.size());
                results += rows;
                ++count;
            });
        } catch (const std::exception& e) {  // a bug in a cell: stop every rank, loudly
            std::fprintf(stderr, "memcap: internal error on rank %d: %s\n", session.rank(), e.what());
            mpi().abort_world(1);
        }
    }
}

#else

void mpi_serve(const MpiSession&, const std::vector<CellSpec>&, const std::vector<std::size_t>&, int, const RecordCell&) {
    throw std::logic_error("mpi_serve: memcap was built without MPI");
}

void mpi_work(const MpiSession&, const std::vector<CellSpec>&, int) { throw std::logic_error("mpi_work: memcap was built without MPI"); }

#endif

}  // namespace memcap
