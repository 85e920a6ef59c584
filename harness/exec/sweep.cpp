// memcap/harness/exec/sweep.cpp — see sweep.hpp.
#include "harness/exec/sweep.hpp"

#include "core/error.hpp"
#include "harness/results/atomic_file.hpp"
#include "harness/exec/progress.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/sweep_config.hpp"

#include <nlohmann/json.hpp>
#include <omp.h>

#if MEMCAP_MPI
#include <mpi.h>
#endif

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <unistd.h>

#ifndef MEMCAP_VERSION
#define MEMCAP_VERSION "0.0.0"
#endif

namespace memcap {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------- signals

std::atomic<bool> g_stop{false};
std::atomic<int> g_signal{0};
static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int sig) {
    g_signal.store(sig);
    g_stop.store(true);
}

/// SIGINT/SIGTERM set the stop flag while alive; the second one kills (SA_RESETHAND).
class StopSignals {
public:
    StopSignals() {
        struct sigaction sa {};
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND | SA_RESTART;
        sigaction(SIGINT, &sa, &old_int_);
        sigaction(SIGTERM, &sa, &old_term_);
    }
    ~StopSignals() {
        sigaction(SIGINT, &old_int_, nullptr);
        sigaction(SIGTERM, &old_term_, nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    struct sigaction old_int_ {}, old_term_ {};
};

// ---------------------------------------------------------------- journal

std::uint64_t fnv1a(const char* data, std::size_t size, std::uint64_t h = 1469598103934665603ULL) {
    for (std::size_t i = 0; i < size; ++i) h = (h ^ static_cast<unsigned char>(data[i])) * 1099511628211ULL;
    return h;
}

std::string hex16(std::uint64_t x) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
    return buf;
}

class Journal {
public:
    static constexpr std::uint64_t kMissing = ~0ULL;

    /// Creates a new journal (it must not exist) holding only `header`.
    Journal(std::string path, const std::string& header, std::size_t cells) : path_(std::move(path)), where_(cells, {kMissing, 0}) {
        fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd_ < 0) throw UsageError("journal '" + path_ + "': cannot create: " + std::strerror(errno));
        write_all(header);
        end_ = header.size();
        sync();
    }

    /// Opens an existing journal, keeps its complete records and cuts off a torn tail.
    /// `note` receives a line for the user when something was cut.
    Journal(std::string path, const std::string& header, std::size_t cells, std::string& note)
        : path_(std::move(path)), where_(cells, {kMissing, 0}) {
        std::string text;
        {
            std::ifstream in(path_, std::ios::binary);
            if (!in) throw UsageError("journal '" + path_ + "' cannot be read");
            std::ostringstream ss;
            ss << in.rdbuf();
            text = ss.str();
        }
        fd_ = ::open(path_.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
        if (fd_ < 0) throw UsageError("journal '" + path_ + "': cannot open for writing: " + std::strerror(errno));
        std::size_t pos = 0;
        if (text.compare(0, header.size(), header) == 0) {
            pos = header.size();
        } else if (header.compare(0, text.size(), text) == 0) {  // torn while being created
            truncate_to(0);
            write_all(header);
            text = header;
            pos = header.size();
        } else {
            throw UsageError("journal '" + path_ + "' was written for a different config or memcap version");
        }
        std::size_t kept = 0;
        while (pos < text.size()) {
            const std::size_t record = parse_record(text, pos);
            if (record == 0) break;
            pos += record;
            ++kept;
        }
        if (pos < text.size()) {
            note = "journal '" + path_ + "': dropped an incomplete record at its end (" +
                   std::to_string(text.size() - pos) + " bytes); that cell is computed again";
            truncate_to(pos);
        }
        end_ = pos;
    }

    ~Journal() {
        if (fd_ >= 0) ::close(fd_);
    }
    Journal(const Journal&) = delete;
    Journal& operator=(const Journal&) = delete;

    /// Appends one finished cell (written with one write(2), then visible to readers).
    void append(std::size_t cell, const std::string& rows) {
        const auto lines = std::count(rows.begin(), rows.end(), '\n');
        const std::string head =
            "@" + std::to_string(cell) + " " + std::to_string(lines) + " " + hex16(fnv1a(rows.data(), rows.size())) + "\n";
        write_all(head + rows);
        if (where_[cell].first == kMissing) ++done_;
        where_[cell] = {end_ + head.size(), rows.size()};
        end_ += head.size() + rows.size();
        const auto now = std::chrono::steady_clock::now();
        if (now - last_sync_ > std::chrono::seconds(2)) sync(), last_sync_ = now;  // bounds the loss on power failure
    }

    bool done(std::size_t cell) const { return where_[cell].first != kMissing; }
    std::size_t done_count() const { return done_; }

    /// The rows journaled for `cell` (which must be done).
    std::string rows(std::size_t cell) const {
        std::string out(where_[cell].second, '\0');
        std::size_t got = 0;
        while (got < out.size()) {
            const auto r = ::pread(fd_, &out[got], out.size() - got, static_cast<off_t>(where_[cell].first + got));
            if (r <= 0) throw UsageError("journal '" + path_ + "': read failed: " + std::strerror(errno));
            got += static_cast<std::size_t>(r);
        }
        return out;
    }

    void sync() {
        if (::fdatasync(fd_) != 0) throw UsageError("journal '" + path_ + "': sync failed: " + std::strerror(errno));
    }
    const std::string& path() const { return path_; }

private:
    /// Length of the complete, valid record at `pos`, or 0 if it is torn or corrupt.
    std::size_t parse_record(const std::string& text, std::size_t pos) {
        const auto eol = text.find('\n', pos);
        if (eol == std::string::npos || text[pos] != '@') return 0;
        unsigned long long cell = 0, lines = 0;
        char hash[17] = {};
        const std::string head = text.substr(pos, eol - pos);
        if (std::sscanf(head.c_str(), "@%llu %llu %16s", &cell, &lines, hash) != 3 || cell >= where_.size()) return 0;
        std::size_t end = eol + 1;
        for (unsigned long long i = 0; i < lines; ++i) {
            const auto nl = text.find('\n', end);
            if (nl == std::string::npos) return 0;
            end = nl + 1;
        }
        if (hex16(fnv1a(text.data() + eol + 1, end - eol - 1)) != hash) return 0;
        if (where_[cell].first == kMissing) {  // a cell journaled twice keeps its first (identical) record
            where_[cell] = {eol + 1, end - eol - 1};
            ++done_;
        }
        return end - pos;
    }

    void write_all(const std::string& text) {
        std::size_t put = 0;
        while (put < text.size()) {
            const auto w = ::write(fd_, text.data() + put, text.size() - put);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) throw UsageError("journal '" + path_ + "': write failed: " + std::strerror(errno));
            put += static_cast<std::size_t>(w);
        }
    }

    void truncate_to(std::size_t size) {
        if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
            throw UsageError("journal '" + path_ + "': cannot truncate: " + std::strerror(errno));
    }

    std::string path_;
    int fd_ = -1;
    std::uint64_t end_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> where_;  // per cell: (offset, length) of its rows
    std::size_t done_ = 0;
    std::chrono::steady_clock::time_point last_sync_ = std::chrono::steady_clock::now();
};

// ---------------------------------------------------------------- MPI

/// The launcher's process count from its environment (1 when not launched as several processes).
long launched_processes() {
    for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"})
        if (const char* v = std::getenv(var)) return std::max(1L, std::strtol(v, nullptr, 10));
    return 1;
}

[[maybe_unused]] bool launched_by_mpi() {
    return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK");
}

/// MPI for the lifetime of one sweep, when the process was started by an MPI launcher.
class MpiSession {
public:
    MpiSession() {
#if MEMCAP_MPI
        if (!launched_by_mpi()) {
            if (launched_processes() > 1)
                throw UsageError("started as " + std::to_string(launched_processes()) +
                                 " processes without MPI; under Slurm use `srun --mpi=pmix`");
            return;
        }
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        active_ = true;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
        if (provided < MPI_THREAD_FUNNELED && size_ > 1) {
            if (rank_ == 0) std::fprintf(stderr, "memcap: error: the MPI library lacks MPI_THREAD_FUNNELED\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
#else
        if (launched_processes() > 1)
            throw UsageError("started as " + std::to_string(launched_processes()) +
                             " processes, but this memcap was built without MPI (configure with -DMEMCAP_MPI=ON)");
#endif
    }
    ~MpiSession() {
#if MEMCAP_MPI
        if (active_) MPI_Finalize();
#endif
    }
    MpiSession(const MpiSession&) = delete;
    MpiSession& operator=(const MpiSession&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }

    /// Every rank passes its status (0 = fine); all get the largest.
    int agree(int status) const {
#if MEMCAP_MPI
        if (active_) MPI_Allreduce(MPI_IN_PLACE, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
        return status;
    }

private:
    [[maybe_unused]] bool active_ = false;  // used only with MEMCAP_MPI
    int rank_ = 0, size_ = 1;
};

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

std::string recv_bytes(int source, int tag, int* from) {
    MPI_Status st;
    MPI_Probe(source, tag, MPI_COMM_WORLD, &st);
    int bytes = 0;
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    std::string buf(static_cast<std::size_t>(bytes), '\0');
    MPI_Recv(buf.data(), bytes, MPI_BYTE, st.MPI_SOURCE, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (from) *from = st.MPI_SOURCE;
    return buf;
}

/// A worker rank: asks rank 0 for batches of cells, computes them, sends the rows back.
void mpi_worker(const std::vector<CellSpec>& cells, int threads) {
    std::string results;
    std::uint64_t count = 0;
    while (true) {
        const bool last = g_stop.load();
        std::string msg;
        put_u64(msg, last ? 1 : 0);
        put_u64(msg, static_cast<std::uint64_t>(2 * threads));
        put_u64(msg, count);
        msg += results;
        MPI_Send(msg.data(), static_cast<int>(msg.size()), MPI_BYTE, 0, kTagResults, MPI_COMM_WORLD);
        results.clear();
        count = 0;
        if (last) return;
        const std::string work = recv_bytes(0, kTagWork, nullptr);
        if (work.empty()) return;
        std::vector<std::size_t> batch(work.size() / sizeof(std::uint64_t));
        std::size_t pos = 0;
        for (auto& i : batch) i = static_cast<std::size_t>(get_u64(work, pos));
        run_cells_unordered(cells, batch, threads, g_stop, [&](std::size_t idx, const std::string& rows) {
            put_u64(results, idx);
            put_u64(results, rows.size());
            results += rows;
            ++count;
        });
    }
}
#endif

// ---------------------------------------------------------------- the sweep

std::string describe_block(const SweepBlock& b) {
    std::size_t n = b.readouts.size() * b.ds.size() * b.tasks.size() * b.memories.size() * b.budgets.size() *
                    b.ns.size() * static_cast<std::size_t>(b.seeds);
    auto part = [](std::size_t k, const char* one, const char* many) {
        return std::to_string(k) + " " + (k == 1 ? one : many);
    };
    return "block " + b.name + ": " + part(b.memories.size(), "memory", "memories") + " x " +
           part(b.tasks.size(), "task", "tasks") + " x " + part(b.budgets.size(), "budget", "budgets") + " x " +
           part(b.ns.size(), "n", "n") + " x " + part(static_cast<std::size_t>(b.seeds), "seed", "seeds") + " x " +
           part(b.ds.size(), "d", "d") + " x " + part(b.readouts.size(), "readout", "readouts") + " = " +
           std::to_string(n) + " cells";
}

/// Times an evenly spread sample of cells (at most ~2 s) and extrapolates.
std::string estimate_work(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& todo, int threads) {
    if (todo.empty()) return "nothing left to compute";
    const std::size_t want = std::min<std::size_t>(todo.size(), 40);
    std::vector<std::size_t> sample;
    for (std::size_t k = 0; k < want; ++k) sample.push_back(todo[k * todo.size() / want]);
    // visit the sample in a scrambled but fixed order, so a time-limited prefix is still spread out
    std::vector<std::size_t> order(sample.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [](std::size_t a, std::size_t b) {
        return fnv1a(reinterpret_cast<const char*>(&a), sizeof a) < fnv1a(reinterpret_cast<const char*>(&b), sizeof b);
    });
    const auto start = std::chrono::steady_clock::now();
    std::size_t timed = 0;
    for (const auto k : order) {
        run_cell(cells[sample[k]]);
        ++timed;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) break;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = secs / static_cast<double>(timed) * static_cast<double>(todo.size());
    char buf[200];
    std::snprintf(buf, sizeof buf, "about %.3g s of CPU time, %.3g s wall at %d thread%s (timed %zu sample cells)", cpu,
                  cpu / threads, threads, threads == 1 ? "" : "s", timed);
    return buf;
}

nlohmann::ordered_json make_manifest(const SweepOptions& o, const SweepConfig& config, std::size_t cells) {
    nlohmann::ordered_json m;
    m["tool"] = "memcap";
    m["version"] = MEMCAP_VERSION;
    m["command"] = o.command;
    m["compiler"] = std::string("g++ ") + __VERSION__;
    m["config_file"] = config.path;
    m["config"] = config.canonical();
    m["cells"] = cells;
    m["csv_header"] = std::string(kCsvHeader, std::strlen(kCsvHeader) - 1);
    return m;
}

/// Throws unless the manifest at `path` describes this very sweep.
void check_manifest(const std::string& path, const nlohmann::ordered_json& expect, const std::string& config_path) {
    std::ifstream in(path);
    if (!in) throw UsageError("--resume: manifest '" + path + "' is missing; cannot check the config it was started with");
    nlohmann::ordered_json got;
    try {
        got = nlohmann::ordered_json::parse(in);
    } catch (const std::exception&) {
        throw UsageError("--resume: manifest '" + path + "' is not valid JSON");
    }
    for (const char* key : {"config", "cells", "csv_header", "version"})
        if (!got.contains(key) || got[key] != expect[key])
            throw UsageError("--resume: config '" + config_path + "' differs from the one the sweep in '" + path +
                             "' was started with (" + key + " differs); use another --out or remove that sweep");
}

}  // namespace

int run_sweep(const SweepOptions& o) {
    MpiSession mpi;
    const bool root = mpi.rank() == 0;

    // Phase 1, every rank: the config and its cells (identical everywhere).
    SweepConfig config;
    std::vector<CellSpec> cells;
    std::string error;
    try {
        config = load_sweep_config(o.config_path);
        cells = config.cells();
        try {
            check_buildable(cells);
        } catch (const UsageError& e) {
            throw UsageError("config '" + o.config_path + "': " + e.what());
        }
    } catch (const UsageError& e) {
        error = e.what();
    }
    if (mpi.agree(error.empty() ? 0 : 1) != 0) {
        if (!root) return 2;
        throw UsageError(error.empty() ? "the config failed to load on another MPI rank" : error);
    }
    const int threads = o.threads.value_or(omp_get_max_threads());

    // `results/` names the directory `results` (its parent is `.`, not `results`).
    fs::path dir(o.out_dir.empty() ? "." : o.out_dir);
    while (!dir.has_filename() && dir.has_relative_path()) dir = dir.parent_path();
    const std::string csv_path = (dir / (config.name + ".csv")).string();
    const std::string manifest_path = csv_path + ".manifest.json";
    const std::string journal_path = csv_path + ".journal";
    const auto manifest = make_manifest(o, config, cells.size());
    const std::string journal_header = "memcap-journal 1 config=" +
                                       hex16(fnv1a(manifest["config"].dump().data(), manifest["config"].dump().size(),
                                                   fnv1a(kCsvHeader, std::strlen(kCsvHeader)))) +
                                       " cells=" + std::to_string(cells.size()) + "\n";

    if (o.dry_run) {  // reads nothing but the config and writes nothing
        if (!root) return 0;
        std::vector<std::size_t> todo(cells.size());
        for (std::size_t i = 0; i < cells.size(); ++i) todo[i] = i;
        std::error_code ec;
        std::cout << "sweep " << config.name << " (" << config.path << "): " << cells.size() << " cells in "
                  << config.blocks.size() << (config.blocks.size() == 1 ? " block\n" : " blocks\n");
        for (const auto& b : config.blocks) std::cout << "  " << describe_block(b) << "\n";
        std::cout << "  output: " << csv_path;
        if (fs::exists(csv_path, ec)) std::cout << " (exists: the sweep is complete)";
        else if (fs::exists(journal_path, ec)) std::cout << " (an interrupted sweep's journal exists: --resume finishes it)";
        std::cout << "\n  estimate: " << estimate_work(cells, todo, threads * mpi.size()) << "\n";
        return 0;
    }

    // Phase 2, rank 0: the output files. Nothing is created before every check passed.
    std::unique_ptr<Journal> journal;
    std::vector<std::size_t> todo;
    bool complete = false;
    if (root) {
        bool made_dir = false, fresh = false;  // what this attempt created, to be removed if it fails
        try {
            std::error_code ec;
            if (!fs::exists(dir, ec)) {
                const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
                if (!fs::is_directory(parent, ec))
                    throw UsageError("--out '" + o.out_dir + "': directory '" + parent.string() + "' does not exist");
                check_writable(dir.string());
                if (!fs::create_directory(dir, ec))
                    throw UsageError("--out '" + o.out_dir + "': cannot create directory: " + ec.message());
                made_dir = true;
            } else if (!fs::is_directory(dir, ec)) {
                throw UsageError("--out '" + o.out_dir + "' is not a directory");
            }
            check_writable(csv_path);
            const bool have_csv = fs::exists(csv_path, ec), have_journal = fs::exists(journal_path, ec),
                       have_manifest = fs::exists(manifest_path, ec);
            if (!o.resume && (have_csv || have_journal || have_manifest))
                throw UsageError("'" + (have_csv ? csv_path : have_journal ? journal_path : manifest_path) +
                                 "' already exists; pass --resume to finish or keep that sweep, or remove it");
            std::string note;
            if (o.resume && (have_csv || have_journal)) {
                check_manifest(manifest_path, manifest, config.path);
                if (have_csv) {
                    complete = true;
                } else {
                    journal = std::make_unique<Journal>(journal_path, journal_header, cells.size(), note);
                }
            } else {
                fresh = true;
                AtomicFile mf(manifest_path);
                // paths and the command line may hold any bytes: invalid UTF-8 is written as U+FFFD
                mf.write(manifest.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
                mf.commit();
                journal = std::make_unique<Journal>(journal_path, journal_header, cells.size());
            }
            if (!note.empty()) std::cerr << "memcap: " << note << "\n";
            if (journal) {
                for (std::size_t i = 0; i < cells.size(); ++i)
                    if (!journal->done(i)) todo.push_back(i);
                // bigger n first: the long cells start early, so the end of the sweep is not one straggler
                std::stable_sort(todo.begin(), todo.end(),
                                 [&](std::size_t a, std::size_t b) { return cells[a].n > cells[b].n; });
                if (o.resume && have_journal && o.progress)
                    std::cerr << "memcap: resuming " << csv_path << ": " << journal->done_count() << " of "
                              << cells.size() << " cells already done\n";
            }
        } catch (const UsageError& e) {
            error = e.what();
            // A new sweep that could not start (a full disk, say) leaves nothing behind.
            std::error_code ec;
            if (fresh) fs::remove(manifest_path, ec), fs::remove(journal_path, ec);
            if (made_dir) fs::remove(dir, ec);  // only if empty
        }
    }
    if (mpi.agree(error.empty() ? 0 : 1) != 0) {
        if (!root) return 2;
        throw UsageError(error);
    }
    if (mpi.agree(complete ? 1 : 0) != 0) {
        if (root) {
            std::error_code ec;
            fs::remove(journal_path, ec);  // left over from a crash between writing the CSV and removing it
            std::cerr << "memcap: sweep already complete: " << csv_path << "\n";
        }
        return 0;
    }

    // Phase 3: compute.
    g_stop = false;
    g_signal = 0;
    StopSignals signals;
    std::exception_ptr failure;
    std::vector<std::size_t> per_rank(static_cast<std::size_t>(mpi.size()), 0);
    if (root) {
        Progress bar(static_cast<std::int64_t>(todo.size()), "sweep " + config.name, o.progress);
        std::mutex journal_mutex;
        auto record = [&](std::size_t idx, const std::string& rows, int rank) {
            std::lock_guard<std::mutex> lock(journal_mutex);
            journal->append(idx, rows);
            ++per_rank[static_cast<std::size_t>(rank)];
            bar.tick();
        };
        if (mpi.size() == 1) {
            try {
                run_cells_unordered(cells, todo, threads, g_stop,
                                    [&](std::size_t idx, const std::string& rows) { record(idx, rows, 0); });
            } catch (...) {
                failure = std::current_exception();
            }
        }
#if MEMCAP_MPI
        else {
            // One thread serves the workers' requests (the only one calling MPI); the others compute.
            std::atomic<std::size_t> next{0};
            std::atomic<bool> failed{false};
            std::mutex failure_mutex;
            auto fail = [&] {
                std::lock_guard<std::mutex> lock(failure_mutex);
                if (!failure) failure = std::current_exception();
                failed = true;
            };
            auto halted = [&] { return g_stop.load() || failed.load(); };
#pragma omp parallel num_threads(threads + 1)
            {
                if (omp_get_thread_num() == 0) {
                    int active = mpi.size() - 1;
                    while (active > 0) {
                        int flag = 0;
                        MPI_Status st;
                        MPI_Iprobe(MPI_ANY_SOURCE, kTagResults, MPI_COMM_WORLD, &flag, &st);
                        if (!flag) {
                            std::this_thread::sleep_for(std::chrono::milliseconds(1));
                            continue;
                        }
                        int from = 0;
                        const std::string msg = recv_bytes(st.MPI_SOURCE, kTagResults, &from);
                        std::size_t pos = 0;
                        const auto last = get_u64(msg, pos), want = get_u64(msg, pos), count = get_u64(msg, pos);
                        for (std::uint64_t k = 0; k < count; ++k) {
                            const auto idx = get_u64(msg, pos), len = get_u64(msg, pos);
                            try {
                                if (!failed) record(static_cast<std::size_t>(idx), msg.substr(pos, len), from);
                            } catch (...) {
                                fail();
                            }
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
                        MPI_Send(work.data(), static_cast<int>(work.size()), MPI_BYTE, from, kTagWork, MPI_COMM_WORLD);
                        if (work.empty()) --active;
                    }
                } else {
                    while (!halted()) {
                        const std::size_t at = next.fetch_add(1);
                        if (at >= todo.size()) break;
                        const std::size_t idx = todo[at];
                        const std::string rows = csv_rows(cells[idx], run_cell(cells[idx]));
                        try {
                            record(idx, rows, 0);
                        } catch (...) {
                            fail();
                        }
                    }
                }
            }
        }
#endif
        bar.finish();
    }
#if MEMCAP_MPI
    else {
        mpi_worker(cells, threads);
    }
#endif
    if (!root) return g_signal ? 128 + g_signal : 0;

    journal->sync();
    if (failure) std::rethrow_exception(failure);
    if (mpi.size() > 1 && o.progress) {
        std::string line = "memcap: cells computed per rank:";
        for (std::size_t r = 0; r < per_rank.size(); ++r) line += " " + std::to_string(r) + ":" + std::to_string(per_rank[r]);
        std::cerr << line << "\n";
    }
    if (journal->done_count() < cells.size()) {
        const int sig = g_signal ? g_signal.load() : SIGINT;
        std::cerr << "memcap: " << (sig == SIGTERM ? "terminated" : "interrupted") << " with " << journal->done_count()
                  << " of " << cells.size() << " cells done (kept in " << journal->path()
                  << "); run again with --resume to finish\n";
        return 128 + sig;
    }

    AtomicFile csv(csv_path);
    csv.write(kCsvHeader);
    for (std::size_t i = 0; i < cells.size(); ++i) csv.write(journal->rows(i));
    csv.commit();
    journal.reset();
    std::error_code ec;
    fs::remove(journal_path, ec);
    return 0;
}

}  // namespace memcap
