// memcap/python/src/module.cpp — the compiled half of the Python package `memcap` (module `memcap._memcap`).
//
// The pure-Python half (python/memcap/__init__.py) turns what this returns into
// pandas DataFrames; everything that computes goes through the same harness the
// `memcap` command line uses:
//
//   run_csv        the cells of one grid (harness/exec/grid.hpp), checked, tuned and run
//                  (runner.hpp), as the CLI's CSV text (results/csv.hpp)
//   sweep          harness/exec/sweep.hpp's run_sweep
//   aggregate_csv  results/aggregate.hpp's summary of a results CSV
//   Memory         one backend built by make_memory, written and read from numpy
//   register_memory  a backend written in Python joins the registry (PyBackend below)
//   load_plugin    a C++ backend built outside the tree (harness/exec/plugins.hpp)
//
// Errors: memcap's UsageError becomes memcap.UsageError, a ValueError subclass
// carrying the same one-line message; anything else from the harness is a
// RuntimeError.
//
// Threads and the GIL: run_csv and sweep release the GIL and compute on a worker
// thread (OpenMP inside); the calling thread wakes every 100 ms to run Python's
// signal handlers (PyErr_CheckSignals), so Ctrl-C stops the run: no new cell
// starts, cells in flight finish, then KeyboardInterrupt is raised (choices on
// tuning seeds, made before the cells, run to their end first). A backend
// written in Python takes the GIL for each call it serves (reset, write, read,
// state), so C++ cells still run in parallel beside it and Python calls run one
// at a time.
#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/cli/options.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/grid.hpp"
#include "harness/exec/pipeline.hpp"
#include "harness/exec/plugins.hpp"
#include "harness/exec/progress.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/sweep.hpp"
#include "harness/exec/tuning.hpp"
#include "harness/results/aggregate.hpp"
#include "harness/results/csv.hpp"
#include "memories/grid/feature_map.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <cmath>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <dlfcn.h>
#include <sys/resource.h>
#include <unistd.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace py = pybind11;
using namespace memcap;

namespace {

/// Runs currently in progress: the registry is not synchronised, so registering while a
/// run reads it is refused.
std::atomic<int> g_active_runs{0};

struct ActiveRun {
    ActiveRun() { ++g_active_runs; }
    ~ActiveRun() { --g_active_runs; }
};

void refuse_while_running(const char* what) {
    if (g_active_runs.load() > 0)
        throw std::runtime_error(std::string(what) + ": not while a run or sweep is in progress");
}

// ---------------------------------------------------------------------------------------
// Running harness work off the calling thread, with Ctrl-C and progress callbacks.

/// Calls `work` on a worker thread with the GIL released. Every 100 ms the calling thread
/// takes the GIL, runs Python's signal handlers (a KeyboardInterrupt sets *stop, and is
/// raised once `work` has returned) and calls `tick` (may be empty). Exceptions from `work`
/// are rethrown here.
void run_interruptible(const std::function<void()>& work, std::atomic<bool>* stop, const std::function<void()>& tick) {
    ActiveRun active;
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    std::exception_ptr failure;
    std::optional<py::error_already_set> interrupt;
    {
        py::gil_scoped_release release;
        std::thread worker([&] {
            try {
                work();
            } catch (...) {
                failure = std::current_exception();
            }
            std::lock_guard<std::mutex> lock(m);
            done = true;
            cv.notify_all();
        });
        std::unique_lock<std::mutex> lock(m);
        while (!cv.wait_for(lock, std::chrono::milliseconds(100), [&] { return done; })) {
            lock.unlock();
            {
                py::gil_scoped_acquire acquire;
                if (!interrupt && PyErr_CheckSignals() != 0) {
                    interrupt.emplace();  // fetches (and clears) the pending exception
                    if (stop) *stop = true;
                }
                if (tick && !interrupt) try {
                        tick();
                    } catch (py::error_already_set& e) {
                        interrupt.emplace(std::move(e));
                        if (stop) *stop = true;
                    }
            }
            lock.lock();
        }
        lock.unlock();
        worker.join();
    }
    if (tick && !interrupt) tick();
    if (interrupt) throw *interrupt;  // e.g. KeyboardInterrupt: the run stopped cleanly
    if (failure) std::rethrow_exception(failure);
}

/// Words of a Python value given for a list option: str, int or an iterable of them.
std::vector<std::string> words_of(const py::handle& value) {
    std::vector<std::string> out;
    if (value.is_none()) return out;
    if (py::isinstance<py::str>(value) || py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value))
        return {py::str(value).cast<std::string>()};
    for (const auto& item : value) out.push_back(py::str(item).cast<std::string>());
    return out;
}

std::int64_t positive_of(const py::handle& value, const std::string& what, std::int64_t max) {
    return cli::positive(py::str(value).cast<std::string>(), what, max);
}

// ---------------------------------------------------------------------------------------
// memcap.run

std::string run_csv(const py::object& memories, const py::object& tasks, const py::object& budgets, const py::object& n,
                    const py::object& seeds, const py::object& d, const std::string& readout,
                    const py::object& tuning_seeds, bool on_tuning_seeds, const py::object& threads_value, bool progress,
                    const py::object& callback, const py::object& budget_bits) {
    GridRequest request;
    request.budget_bits = words_of(budget_bits);
    request.memories = words_of(memories), request.tasks = words_of(tasks), request.ns = words_of(n);
    for (auto& b : request.budgets = words_of(budgets))
        if (b == "None") b = "natural";  // None in a list: the natural size
    request.seeds = py::str(seeds).cast<std::string>(), request.d = py::str(d).cast<std::string>();
    request.tuning_seeds = py::str(tuning_seeds).cast<std::string>();
    request.readouts = {readout};
    request.on_tuning_seeds = on_tuning_seeds;
    const GridBlock grid = build_grid(request, kPythonKeys);
    const int threads = threads_value.is_none() ? omp_get_max_threads()
                                                : static_cast<int>(positive_of(threads_value, "threads", 4096));

    std::vector<CellSpec> cells = grid.cells();  // counts (and refuses) the grid before expanding it
    const std::size_t count = cells.size();
    std::vector<std::string> rows(count);
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> done_cells{0};
    const bool bar = progress && callback.is_none();
    auto work = [&] {
        Pipeline pipeline(std::move(cells));
        pipeline.tune(threads, bar);
        const std::vector<std::size_t> order = every_cell(count);
        CellProgress meter = pipeline.progress(order, "memcap", bar, threads);
        pipeline.run(order, threads, stop, [&](std::size_t i, const std::string& text, double seconds) {
            rows[i] = text;
            meter.tick(i, seconds);
            ++done_cells;
        });
        meter.finish();
    };
    std::int64_t reported = -1;
    std::function<void()> tick;
    if (!callback.is_none())
        tick = [&] {
            const std::int64_t now = done_cells.load();
            if (now != reported) callback(now, static_cast<std::int64_t>(count));
            reported = now;
        };
    run_interruptible(work, &stop, tick);

    std::size_t size = cell_header().size();
    for (const auto& r : rows) size += r.size();
    std::string csv;
    csv.reserve(size);
    csv += cell_header();
    for (const auto& r : rows) csv += r;
    return csv;
}

// ---------------------------------------------------------------------------------------
// memcap.Memory: one backend from numpy.

std::string describe_array(const py::array& a) {
    std::string shape = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i) shape += (i ? ", " : "") + std::to_string(a.shape(i));
    shape += a.ndim() == 1 ? ",)" : ")";
    return py::str(a.dtype()).cast<std::string>() + " array of shape " + shape;
}

/// A float32 batch of rows of `width` floats (or one vector of `width`), C-contiguous: the
/// array itself when it is already laid out so (no copy), else a C-contiguous copy.
/// ValueError naming the expected shape and dtype otherwise.
py::array_t<float, py::array::c_style> rows_of(const py::handle& value, int width, const char* what, const char* call) {
    if (!py::isinstance<py::array>(value))
        throw py::value_error(std::string(call) + ": " + what + " must be a numpy float32 array of shape (n, " +
                              std::to_string(width) + "), got " + py::str(py::type::of(value)).cast<std::string>());
    auto a = py::reinterpret_borrow<py::array>(value);
    const std::string expected = std::string(call) + ": " + what + " must be a float32 array of shape (n, " +
                                 std::to_string(width) + ") or (" + std::to_string(width) + ",), row-major; got " +
                                 describe_array(a);
    if (!a.dtype().is(py::dtype::of<float>())) throw py::value_error(expected);
    if (a.ndim() == 1 ? a.shape(0) != width : (a.ndim() != 2 || a.shape(1) != width)) throw py::value_error(expected);
    return py::array_t<float, py::array::c_style>::ensure(a);  // a itself when already C-contiguous
}

/// memcap.FeatureMap: one built-in feature map (proj, dpfp or taylor) of d_in-wide rows, drawn from its own
/// stream (kind, d_in, max_dim, nu, seed), so the same arguments give the same map everywhere.
struct PyFeatureMap {
    static void check(const std::string& kind, int d_in, std::int64_t max_dim, int nu) {
        if (kind != "proj" && kind != "dpfp" && kind != "taylor")
            throw UsageError("FeatureMap: kind '" + kind + "' is not proj, dpfp or taylor");
        if (d_in < 1 || nu < 1 || max_dim < FeatureMap::min_dim(kind, nu))
            throw UsageError("FeatureMap: d_in and nu must be at least 1 and max_dim at least " +
                             std::to_string(FeatureMap::min_dim(kind, nu)) + "; got d_in=" + std::to_string(d_in) +
                             ", max_dim=" + std::to_string(max_dim) + ", nu=" + std::to_string(nu));
    }
    static FeatureMap make(const std::string& kind, int d_in, std::int64_t max_dim, int nu, std::uint64_t seed) {
        check(kind, d_in, max_dim, nu);
        Rng rng = Rng::stream("python feature map", kind, d_in, max_dim, nu, seed);
        return FeatureMap(kind, d_in, max_dim, nu, rng);
    }
    PyFeatureMap(const std::string& kind, int d_in_, std::int64_t max_dim, int nu, std::uint64_t seed)
        : map(make(kind, d_in_, max_dim, nu, seed)), d_in(d_in_), dims(FeatureMap::size(kind, d_in_, max_dim, nu)) {}

    /// phi(x) for the rows of x (n x d_in float32): an n x dim float32 array.
    py::array_t<float> apply(const py::object& x) const {
        auto a = rows_of(x, d_in, "x", "FeatureMap.apply");
        const py::ssize_t n = a.ndim() == 1 ? 1 : a.shape(0);
        Eigen::Map<const RowMat> X(a.data(), n, d_in);
        py::array_t<float> out(std::vector<py::ssize_t>{n, py::ssize_t(map.dim())});
        Eigen::Map<RowMat> Y(out.mutable_data(), n, map.dim());
        map.apply(X, Y);
        return out;
    }

    FeatureMap map;
    int d_in;
    FeatureMap::Dims dims;  // what FeatureMap.size gives for its arguments
};

class PyMemoryHandle {
public:
    PyMemoryHandle(const std::string& spec_text, int d, const py::object& budget, std::uint64_t seed,
                   const py::object& d_value, bool positional_keys)
        : spec_(parse_memory_spec(spec_text)) {
        if (d < 1) throw UsageError("d: '" + std::to_string(d) + "' must be at least 1");
        shape_.d_key = d;
        shape_.d_value = d_value.is_none() ? d : d_value.cast<int>();
        if (shape_.d_value < 1) throw UsageError("d_value: '" + std::to_string(shape_.d_value) + "' must be at least 1");
        shape_.positional_keys = positional_keys;
        const std::string b = py::str(budget).cast<std::string>();
        if (!budget.is_none() && b != "natural") shape_.budget_floats = cli::positive(b, "budget", kMaxBudgetFloats);
        // Refused up front, as the command line refuses a cell that cannot fit: the memory's
        // state, parameters and a batch's temporaries against 80% of this machine's memory
        // (or of the address-space limit, when one is set).
        const double need = static_cast<double>(memory_peak_bytes(spec_, shape_, 1, 1));
        double have = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
        if (rlimit lim{}; ::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
            have = std::min(have, static_cast<double>(lim.rlim_cur));
        char gb[96];
        std::snprintf(gb, sizeof gb, "about %.3g GB, more than 80%% of the %.3g GB available", need / 1e9, have / 1e9);
        if (have > 0 && need > 0.8 * have)
            throw UsageError("Memory(" + repr() + ") needs " + gb + "; lower d or the budget");
        try {
            memory_ = make_memory(spec_, shape_, seed);
        } catch (const std::bad_alloc&) {
            std::snprintf(gb, sizeof gb, "about %.3g GB", need / 1e9);
            PyErr_SetString(PyExc_MemoryError, ("Memory(" + repr() + "): cannot allocate " + gb + "; lower d or the budget").c_str());
            throw py::error_already_set();
        }
    }

    /// The constructor's arguments that made this memory: 'delta:beta=0.5,...', d=64, budget=4096.
    std::string repr() const {
        std::string out = "'" + spec_.canonical() + "', d=" + std::to_string(shape_.d_key);
        if (shape_.d_value != shape_.d_key) out += ", d_value=" + std::to_string(shape_.d_value);
        out += ", budget=" + (shape_.budget_floats ? std::to_string(*shape_.budget_floats) : std::string("None"));
        return out;
    }

    // Each call releases the GIL before it takes the handle's lock (a backend written in
    // Python takes the GIL back inside), so two Python threads sharing a Memory cannot deadlock.
    void reset() {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        memory_->reset();
    }

    /// ValueError naming the first NaN or infinity in `a` (a write of one would poison the state).
    static void check_finite(const py::array_t<float>& a, const char* what, const char* method) {
        const py::ssize_t size = a.size(), width = a.ndim() == 1 ? size : a.shape(1);
        const float* p = a.data();
        for (py::ssize_t i = 0; i < size; ++i)
            if (!std::isfinite(p[i]))
                throw py::value_error(std::string(method) + ": " + what + " hold " + (std::isnan(p[i]) ? "NaN" : "an infinity") +
                                      " at row " + std::to_string(width ? i / width : 0) + ", column " +
                                      std::to_string(width ? i % width : 0) + "; give finite numbers");
    }

    void write(const py::object& keys, const py::object& values) {
        auto k = rows_of(keys, shape_.d_key, "keys", "write");
        auto v = rows_of(values, shape_.d_value, "values", "write");
        check_finite(k, "keys", "write");
        check_finite(v, "values", "write");
        const py::ssize_t n = k.ndim() == 1 ? 1 : k.shape(0);
        if (k.ndim() != v.ndim() || (v.ndim() == 1 ? 1 : v.shape(0)) != n)
            throw py::value_error("write: keys and values must have the same number of rows; got " +
                                  describe_array(k) + " and " + describe_array(v));
        Eigen::Map<const RowMat> K(k.data(), n, shape_.d_key), V(v.data(), n, shape_.d_value);
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        memory_->write_batch(K, V);
    }

    py::array_t<float> read(const py::object& queries) {
        auto q = rows_of(queries, shape_.d_key, "queries", "read");
        check_finite(q, "queries", "read");
        const py::ssize_t n = q.ndim() == 1 ? 1 : q.shape(0);
        std::vector<py::ssize_t> dims = {n, py::ssize_t(shape_.d_value)};
        if (q.ndim() == 1) dims.erase(dims.begin());
        py::array_t<float> out(dims);
        Eigen::Map<const RowMat> Q(q.data(), n, shape_.d_key);
        Eigen::Map<RowMat> R(out.mutable_data(), n, shape_.d_value);
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        memory_->read_batch(Q, R);
        return out;
    }

    py::array_t<float> state() {
        std::vector<float> copy;
        {
            py::gil_scoped_release release;
            std::lock_guard<std::mutex> lock(mutex_);
            const ConstStateView s = memory_->state();
            copy.assign(s.data(), s.data() + s.size());
        }
        py::array_t<float> out(static_cast<py::ssize_t>(copy.size()));
        std::copy(copy.begin(), copy.end(), out.mutable_data());
        return out;
    }

    std::int64_t state_floats() {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        return memory_->state_floats();
    }
    std::int64_t param_floats() {
        py::gil_scoped_release release;
        std::lock_guard<std::mutex> lock(mutex_);
        return memory_->param_floats();
    }
    std::string spec() const { return spec_.canonical(); }
    int d_key() const { return shape_.d_key; }
    int d_value() const { return shape_.d_value; }
    py::object budget() const { return shape_.budget_floats ? py::object(py::int_(*shape_.budget_floats)) : py::none(); }

private:
    Spec spec_;
    MemoryShape shape_;
    std::unique_ptr<Memory> memory_;
    std::mutex mutex_;
};

// ---------------------------------------------------------------------------------------
// Backends written in Python.

/// Wraps an instance of a Python backend class (reset / write / read / state on numpy
/// arrays) as a Memory. Every call takes the GIL. Batches are passed as fresh float32
/// arrays (copies: the backend may keep them); reads and the state are converted to
/// float32 and checked for shape.
class PyBackend final : public Memory {
public:
    PyBackend(std::string name, py::object instance, const MemoryShape& shape, std::int64_t param_floats)
        : name_(std::move(name)), obj_(std::move(instance)), d_key_(shape.d_key), d_value_(shape.d_value),
          params_(param_floats) {}
    ~PyBackend() override {
        py::gil_scoped_acquire gil;
        obj_ = py::object();
        state_ = py::array_t<float>();
    }

    void reset() override {
        call("reset", [&] { obj_.attr("reset")(); });
    }
    void write(ConstVecRef key, ConstVecRef value) override {
        write_batch(key.transpose(), value.transpose());
    }
    void read(ConstVecRef query, VecRef out) const override {
        RowMat r(1, d_value_);
        read_batch(query.transpose(), r);
        out = r.row(0).transpose();
    }
    void write_batch(ConstMatRef keys, ConstMatRef values) override {
        call("write", [&] { obj_.attr("write")(copy(keys), copy(values)); });
    }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        require_no_hidden(options);
        call("read", [&] {
            py::object r = obj_.attr("read")(copy(queries));
            auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(r);
            if (!a || a.ndim() != 2 || a.shape(0) != out.rows() || a.shape(1) != out.cols())
                throw std::runtime_error("read returned " +
                                         (a ? describe_array(a) : py::str(py::type::of(r)).cast<std::string>()) +
                                         ", expected an array of shape (" + std::to_string(out.rows()) + ", " +
                                         std::to_string(out.cols()) + ")");
            out = Eigen::Map<const RowMat>(a.data(), out.rows(), out.cols());
        });
    }
    std::int64_t state_floats() const override {
        refresh_state();
        return state_.size();
    }
    ConstStateView state() const override {
        refresh_state();
        return ConstStateView(state_.data(), state_.size());
    }
    std::int64_t param_floats() const override { return params_; }

private:
    template <class F>
    void call(const char* what, F&& f) const {
        py::gil_scoped_acquire gil;
        try {
            f();
        } catch (py::error_already_set& e) {
            throw std::runtime_error("python backend '" + name_ + "', " + what + ": " + e.what());
        }
    }
    static py::array_t<float> copy(ConstMatRef m) {
        py::array_t<float> a({py::ssize_t(m.rows()), py::ssize_t(m.cols())});
        Eigen::Map<RowMat>(a.mutable_data(), m.rows(), m.cols()) = m;
        return a;
    }
    void refresh_state() const {
        call("state", [&] {
            py::object s = obj_.attr("state")();
            auto a = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(s);
            if (!a) throw std::runtime_error("state returned " + py::str(py::type::of(s)).cast<std::string>() +
                                             ", expected a float32 array");
            state_ = a;  // flat view of any shape: its floats in C order
        });
    }

    std::string name_;
    py::object obj_;
    int d_key_, d_value_;
    std::int64_t params_;  // declared at registration (param_floats), not state
    mutable py::array_t<float> state_;
};

/// Calls a user function `f(d_key, d_value, budget, **params)` for a size.
std::int64_t size_call(const py::object& f, const Spec& spec, const std::vector<ParamInfo>& params,
                       const MemoryShape& shape, const std::string& name, const char* what);

py::dict param_values(const Spec& spec, const std::vector<ParamInfo>& params) {
    py::dict kw;
    for (const auto& p : params) {
        const char* k = p.key.c_str();
        if (p.type == ParamType::Real) kw[k] = spec.real(p.key);
        else if (p.type == ParamType::Int) kw[k] = spec.integer(p.key);
        else kw[k] = spec.text(p.key);
    }
    return kw;
}

py::object budget_object(const MemoryShape& shape) {
    return shape.budget_floats ? py::object(py::int_(*shape.budget_floats)) : py::none();
}

std::int64_t size_call(const py::object& f, const Spec& spec, const std::vector<ParamInfo>& params,
                       const MemoryShape& shape, const std::string& name, const char* what) {
    py::gil_scoped_acquire gil;
    try {
        if (!PyCallable_Check(f.ptr())) return f.cast<std::int64_t>();
        return f(shape.d_key, shape.d_value, budget_object(shape), **param_values(spec, params)).cast<std::int64_t>();
    } catch (py::error_already_set& e) {
        throw std::runtime_error("python backend '" + name + "', " + what + ": " + e.what());
    } catch (py::cast_error& e) {
        throw std::runtime_error("python backend '" + name + "', " + what + ": did not return an integer");
    }
}

void register_python_memory(const std::string& name, const py::object& cls, const py::dict& params,
                            const py::object& state_floats, const py::object& min_budget,
                            const py::object& param_floats, const py::object& floats_per_write, std::string description,
                            std::string state_formula, std::string paper, bool native_read, bool order_free,
                            const py::dict& candidates) {
    refuse_while_running("register_memory");
    if (!PyCallable_Check(cls.ptr())) throw py::type_error("register_memory: cls must be a class (or a callable)");
    if (PyType_Check(cls.ptr())) {  // a class: its instances need the four methods (a factory is checked when called)
        std::string missing;
        for (const char* method : {"reset", "write", "read", "state"})
            if (!py::hasattr(cls, method) || !PyCallable_Check(cls.attr(method).ptr()))
                missing += (missing.empty() ? "" : ", ") + std::string(method);
        if (!missing.empty())
            throw UsageError("register_memory: class " + py::str(cls.attr("__name__")).cast<std::string>() +
                             " lacks the method(s) " + missing + " (a backend needs reset, write, read and state)");
    }
    MemoryEntry e;
    e.name = name;
    for (const auto& [key_obj, value] : params) {
        const std::string key = py::str(key_obj).cast<std::string>();
        if (py::isinstance<py::bool_>(value))
            throw UsageError("register_memory: parameter '" + key + "': give a float, an int or a list of choices");
        if (py::isinstance<py::float_>(value))
            e.params.push_back(real_param(key, format_real(value.cast<double>()), "(python backend)",
                                          -std::numeric_limits<double>::infinity()));
        else if (py::isinstance<py::int_>(value))
            e.params.push_back(int_param(key, std::to_string(value.cast<std::int64_t>()), "(python backend)",
                                         -std::numeric_limits<double>::infinity()));
        else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
            std::vector<std::string> choices;
            for (const auto& c : value) choices.push_back(py::str(c).cast<std::string>());
            if (choices.empty()) throw UsageError("register_memory: parameter '" + key + "' has no choices");
            e.params.push_back(choice_param(key, choices, "(python backend; default: the first)"));
        } else {
            throw UsageError("register_memory: parameter '" + key + "': give a float, an int or a list of choices, not " +
                             py::str(py::type::of(value)).cast<std::string>());
        }
    }
    // Candidates for `key=best`: raced on tuning seeds like a built-in's (harness/exec/tuning.hpp),
    // in order of preference on ties (a value the parameter refuses is named when a race binds it).
    for (const auto& [key_obj, values] : candidates) {
        const std::string key = py::str(key_obj).cast<std::string>();
        auto it = std::find_if(e.params.begin(), e.params.end(), [&](const ParamInfo& p) { return p.key == key; });
        if (it == e.params.end()) {
            std::string known;
            for (const auto& p : e.params) known += (known.empty() ? "" : ", ") + p.key;
            throw UsageError("register_memory: candidates for '" + key + "', which is not a parameter (parameters: " +
                             (known.empty() ? "none" : known) + ")");
        }
        if (py::isinstance<py::str>(values) || !py::hasattr(values, "__iter__"))
            throw UsageError("register_memory: candidates for '" + key + "': give a list of values");
        std::vector<std::string> texts;
        for (const auto& v : values) {
            const std::string text = py::isinstance<py::float_>(v) ? format_real(v.cast<double>()) : py::str(v).cast<std::string>();
            texts.push_back(text);
        }
        if (texts.empty()) throw UsageError("register_memory: candidates for '" + key + "': the list is empty");
        it->best = texts;
    }
    if (state_floats.is_none()) throw UsageError("register_memory: state_floats is required (an int, or f(d_key, d_value, budget, **params))");
    e.description = description.empty() ? "backend written in Python" : std::move(description);
    e.state_formula = state_formula.empty() ? "given by the Python backend" : std::move(state_formula);
    e.paper = paper.empty() ? "(python backend)" : std::move(paper);
    // The class and functions live as long as the process: the registry is never emptied,
    // and must not drop Python references after the interpreter has finished.
    const auto* keep_cls = new py::object(cls);
    const auto* keep_size = new py::object(state_floats);
    const auto* keep_min = new py::object(min_budget);
    const auto* keep_params = new py::object(param_floats);
    const auto* keep_growth = new py::object(floats_per_write);
    const std::vector<ParamInfo> declared = e.params;
    e.size = [name, declared, keep_size, keep_min, keep_params, keep_growth](const Spec& spec, const MemoryShape& shape) {
        MemorySize s;
        s.state_floats = size_call(*keep_size, spec, declared, shape, name, "state_floats");
        s.param_floats = size_call(*keep_params, spec, declared, shape, name, "param_floats");
        s.floats_per_write = size_call(*keep_growth, spec, declared, shape, name, "floats_per_write");
        s.dims = {{"state", s.state_floats}};
        if (!keep_min->is_none()) {
            s.min_budget = size_call(*keep_min, spec, declared, shape, name, "min_budget");
        } else {
            // By default the natural size is the minimum: a backend that does not size itself
            // to a budget is refused below the floats it holds.
            MemoryShape natural = shape;
            natural.budget_floats.reset();
            const std::int64_t at_natural = size_call(*keep_size, spec, declared, natural, name, "state_floats");
            s.min_budget = at_natural > 0 ? at_natural : 1;
        }
        return s;
    };
    e.make = [name, declared, keep_cls, keep_params](const Spec& spec, const MemoryShape& shape, Rng& rng) -> std::unique_ptr<Memory> {
        // The backend's own random parameters: a seed from the stream (memory spec, d, budget,
        // seed), so they follow the same rule as the C++ backends'.
        const std::uint64_t seed = static_cast<std::uint64_t>(rng.below(std::int64_t{1} << 62));
        py::gil_scoped_acquire gil;
        try {
            py::object instance = (*keep_cls)(py::arg("d_key") = shape.d_key, py::arg("d_value") = shape.d_value,
                                               py::arg("budget") = budget_object(shape), py::arg("seed") = seed,
                                               **param_values(spec, declared));
            const std::int64_t params = size_call(*keep_params, spec, declared, shape, name, "param_floats");
            return std::make_unique<PyBackend>(name, std::move(instance), shape, params);
        } catch (py::error_already_set& err) {
            throw std::runtime_error("python backend '" + name + "', constructor: " + err.what());
        }
    };
    e.native_read = native_read;
    e.order_free = order_free;
    e.can_hide_pairs = false;
    register_memory(std::move(e));
}

// ---------------------------------------------------------------------------------------

py::dict describe_params(const std::vector<ParamInfo>& params) {
    py::dict out;
    for (const auto& p : params) out[p.key.c_str()] = p.describe();
    return out;
}

py::dict list_entries() {
    py::list memories, tasks, readouts;
    for (const auto& m : memory_registry()) {
        py::dict e;
        e["name"] = m.name;
        e["description"] = m.description;
        e["params"] = describe_params(m.params);
        e["state_formula"] = m.state_formula;
        e["source"] = m.paper;
        e["native_read"] = m.native_read;
        e["backward"] = m.backward;  // keys=learned can train keys through it
        memories.append(e);
    }
    for (const auto& t : task_registry()) {
        py::dict e;
        e["name"] = t.name;
        e["description"] = t.description;
        e["n"] = t.n_meaning;
        e["params"] = describe_params(t.params);
        e["source"] = t.source;
        tasks.append(e);
    }
    for (const auto& r : readout_registry()) {
        py::dict e;
        e["name"] = r.name;
        e["description"] = r.description;
        e["params"] = describe_params(r.params);
        readouts.append(e);
    }
    py::dict out;
    out["memories"] = memories;
    out["tasks"] = tasks;
    out["readouts"] = readouts;
    return out;
}

py::list columns(const std::vector<Column>& cols) {
    py::list out;
    for (const auto& c : cols) out.append(py::make_tuple(c.name, c.meaning));
    return out;
}

/// Python loads extension modules with RTLD_LOCAL, so a plugin could not bind to the
/// memcap symbols in this module; before a plugin may be loaded (load_plugin, a sweep
/// whose config lists plugins) the module's symbols are made global. Done only then: a
/// global memcap could otherwise bind symbols of unrelated modules loaded later.
void expose_symbols_for_plugins() {
    static std::once_flag once;
    std::call_once(once, [] {
        Dl_info info;
        if (dladdr(reinterpret_cast<void*>(&expose_symbols_for_plugins), &info) && info.dli_fname)
            dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
    });
}

int sweep(const std::string& config, const std::string& out, const py::object& threads, bool resume, bool force,
          bool dry_run, bool progress, const std::string& command) {
    SweepOptions o;
    o.config_path = config;
    o.out_dir = out;
    if (!threads.is_none()) o.threads = static_cast<int>(positive_of(threads, "threads", 4096));
    o.resume = resume;
    o.force = force;
    if (resume && force) throw UsageError("sweep: resume=True continues a sweep and force=True starts it afresh; give one");
    o.dry_run = dry_run;
    o.progress = progress;
    o.command = command;
    expose_symbols_for_plugins();  // the config may list plugins
    int status = 0;
    // run_sweep handles SIGINT itself (harness/exec/signals.hpp): the first Ctrl-C stops
    // handing out cells and returns 130; the caller raises KeyboardInterrupt.
    run_interruptible([&] { status = run_sweep(o); }, nullptr, {});
    return status;
}

void load_plugin_py(const std::string& path) {
    refuse_while_running("load_plugin");
    expose_symbols_for_plugins();
    load_plugin(path);
}

}  // namespace

PYBIND11_MODULE(_memcap, m) {
    m.doc() = "memcap's harness (compiled part); use the package `memcap`";
    static py::exception<UsageError> usage_error(m, "UsageError", PyExc_ValueError);
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const UsageError& e) {
            usage_error(e.what());
        }
    });

    m.attr("__version__") = MEMCAP_VERSION;
    m.def("list_entries", &list_entries);
    m.def("cell_columns", [] { return columns(cell_columns()); });
    m.def("summary_columns", [] { return columns(summary_columns()); });
    m.def("run_csv", &run_csv, py::arg("memories"), py::arg("tasks"), py::arg("budgets"), py::arg("n"),
          py::arg("seeds"), py::arg("d"), py::arg("readout"), py::arg("tuning_seeds"), py::arg("on_tuning_seeds"), py::arg("threads"),
          py::arg("progress"), py::arg("callback"), py::arg("budget_bits"));
    m.def("sweep", &sweep, py::arg("config"), py::arg("out"), py::arg("threads"), py::arg("resume"),
          py::arg("force"), py::arg("dry_run"), py::arg("progress"), py::arg("command"));
    m.def("aggregate_csv", [](const std::string& path) {
        std::vector<GroupSummary> groups;
        std::string note;  // rows that repeated an earlier row exactly, counted once: a UserWarning
        {
            py::gil_scoped_release release;
            groups = summarise_csv(path, &note);
        }
        if (!note.empty() && PyErr_WarnEx(PyExc_UserWarning, note.c_str(), 1) != 0) throw py::error_already_set();
        return summary_csv(groups);
    });
    m.def("register_memory", &register_python_memory, py::arg("name"), py::arg("cls"), py::arg("params"),
          py::arg("state_floats"), py::arg("min_budget"), py::arg("param_floats"), py::arg("floats_per_write"),
          py::arg("description"), py::arg("state_formula"),
          py::arg("paper"), py::arg("native_read"), py::arg("order_free"), py::arg("candidates"));
    m.def("load_plugin", &load_plugin_py, py::arg("path"));
    m.def("loaded_plugins", &loaded_plugins);

    // memcap.FeatureMap: the built-in grids' fixed feature maps (memories/grid/feature_map.hpp), for a
    // Python backend that fits a d_value x d_phi state below d_value x d_key (a budget below d^2).
    // One shape: FeatureMap.size(...) gives a FeatureMap.Size with the attributes an instance has
    // (dim, param_floats, identity), without drawing the map.
    py::class_<PyFeatureMap> feature_map(m, "FeatureMap");
    py::class_<FeatureMap::Dims>(feature_map, "Size")
        .def_readonly("dim", &FeatureMap::Dims::dim)
        .def_readonly("param_floats", &FeatureMap::Dims::param_floats)
        .def_readonly("identity", &FeatureMap::Dims::identity)
        .def("__eq__", [](const FeatureMap::Dims& a, const FeatureMap::Dims& b) {
            return a.dim == b.dim && a.param_floats == b.param_floats && a.identity == b.identity;
        }, py::is_operator())
        .def("__repr__", [](const FeatureMap::Dims& s) {
            return "memcap.FeatureMap.Size(dim=" + std::to_string(s.dim) + ", param_floats=" +
                   std::to_string(s.param_floats) + ", identity=" + (s.identity ? "True" : "False") + ")";
        });
    feature_map
        .def(py::init<const std::string&, int, std::int64_t, int, std::uint64_t>(), py::arg("kind"), py::arg("d_in"),
             py::arg("max_dim"), py::arg("nu") = 1, py::arg("seed") = 0)
        .def_property_readonly("dim", [](const PyFeatureMap& f) { return f.map.dim(); })
        .def_property_readonly("param_floats", [](const PyFeatureMap& f) { return f.map.param_floats(); })
        .def_property_readonly("identity", [](const PyFeatureMap& f) { return f.dims.identity; })
        .def_static("size", [](const std::string& kind, int d_in, std::int64_t max_dim, int nu) {
                PyFeatureMap::check(kind, d_in, max_dim, nu);
                return FeatureMap::size(kind, d_in, max_dim, nu);
            }, py::arg("kind"), py::arg("d_in"), py::arg("max_dim"), py::arg("nu") = 1)
        .def("apply", &PyFeatureMap::apply, py::arg("x"));

    py::class_<PyMemoryHandle>(m, "Memory")
        .def(py::init<const std::string&, int, const py::object&, std::uint64_t, const py::object&, bool>(),
             py::arg("spec"), py::arg("d") = 64, py::arg("budget") = py::none(), py::arg("seed") = 0,
             py::arg("d_value") = py::none(), py::arg("positional_keys") = false)
        .def("reset", &PyMemoryHandle::reset)
        .def("write", &PyMemoryHandle::write, py::arg("keys"), py::arg("values"))
        .def("read", &PyMemoryHandle::read, py::arg("queries"))
        .def("state", &PyMemoryHandle::state)
        .def_property_readonly("state_floats", &PyMemoryHandle::state_floats)
        .def_property_readonly("param_floats", &PyMemoryHandle::param_floats)
        .def_property_readonly("spec", &PyMemoryHandle::spec)
        .def_property_readonly("d_key", &PyMemoryHandle::d_key)
        .def_property_readonly("d_value", &PyMemoryHandle::d_value)
        .def_property_readonly("budget", &PyMemoryHandle::budget)
        .def("__repr__", [](const PyMemoryHandle& h) {
            return "memcap.Memory(" + h.repr() + ")";
        });
}
