// memcap/harness/cli/commands.cpp — the `memcap` command line: one function per command.
//
//   memcap list [--plugin PATH.so]       every backend, task and readout, with parameters
//   memcap run --memory SPEC --task SPEC --n N... [--budget B...] [--seeds S] [--d D] [--out FILE]
//   memcap sweep CONFIG [--out DIR] [--threads T] [--resume] [--dry-run | --check]
//   (run and sweep take --plugin PATH.so too: backends built outside this tree, exec/plugins.hpp)
//   memcap reproduce [--out DIR] [--timings]
//   memcap aggregate RESULTS.csv [--out FILE] [--markdown FILE]
//   memcap theory SUMMARY.csv [--out FILE] [--capacity FILE] [--max-budget B] [--threads T]
//   memcap cost SUMMARY.csv... [--out FILE]
//
// Bad input of any kind is one line on stderr, `memcap: error: ...`, exit 2,
// and no output file is created or changed; every cell of a grid is checked
// before any is computed. Results are never overwritten silently: `run --out`
// refuses an existing file and `sweep` an existing sweep unless given --force
// (a sweep continues with --resume). `aggregate` and `theory` derive their
// files from results, and replace them.
#include "harness/cli/commands.hpp"

#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/cli/options.hpp"
#include "harness/build_stamp.hpp"
#include "harness/eval/readout.hpp"
#include "harness/exec/grid.hpp"
#include "harness/exec/pipeline.hpp"
#include "harness/exec/placement.hpp"
#include "harness/exec/plugins.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/signals.hpp"
#include "harness/exec/sweep.hpp"
#include "harness/train/trainer.hpp"
#include "harness/exec/tuning.hpp"
#include "harness/experiments/reproduce.hpp"
#include "harness/results/aggregate.hpp"
#include "harness/results/atomic_file.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/manifest.hpp"
#include "harness/results/theory_table.hpp"
#include "harness/results/cost_table.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <nlohmann/json.hpp>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <iostream>
#include <memory>
#include <new>
#include <optional>
#include <thread>

#include <unistd.h>

#ifndef MEMCAP_VERSION
#define MEMCAP_VERSION "0.0.0"
#endif

namespace memcap::cli {
namespace {

const char* const kUsage =
    "usage: memcap <command> [options]\n"
    "\n"
    "commands:\n"
    "  list        every memory backend and task, with parameters, defaults and state formula\n"
    "  run         run a grid of cells (memories x tasks x budgets x n x seeds) and write CSV\n"
    "  sweep       run the sweep a config file describes; resumable, MPI-aware (scripts/sweeps/)\n"
    "  reproduce   every experiment of essays 000 and 004, with a table of essay vs measured numbers\n"
    "  aggregate   summarise a results CSV over seeds (mean, sd, 95% interval)\n"
    "  theory      the models of memories/theory.hpp beside a summary: predictions and capacity lines\n"
    "  cost        the cost model beside a summary: FLOPs per write and per read of each row's memory\n"
    "  report      capacities, figures and an HTML page from any sweep directory, results or summary CSV\n"
    "\n"
    "`memcap <command> --help` describes a command's options.\n";

/// The --plugin option: shared libraries holding more backends, loaded before any spec is read.
void add_plugin_option(po::options_description& desc) {
    desc.add_options()("plugin", po::value<std::vector<std::string>>()->composing(),
                       "shared library with more backends (extern \"C\" memcap_register_plugin; repeatable)");
}

int cmd_list(const std::vector<std::string>& args) {
    po::options_description desc("memcap list: every memory backend and task");
    desc.add_options()("help,h", "show this help")(
        "json", "the catalog as JSON: each memory's names (published, the tables', the sentences', the backend "
                "that is the same memory, the special case it reduces to), each task's capacity axis and slots, "
                "the budget's unit (the reports read it: scripts/reports.sh writes reports/catalog.json)");
    add_plugin_option(desc);
    const auto vm = parse(desc, args);
    if (vm.count("help")) return std::cout << desc, 0;
    load_plugins(many(vm, "plugin"));
    if (vm.count("json")) {
        using nlohmann::ordered_json;
        ordered_json memories = ordered_json::array(), tasks = ordered_json::array(), readouts = ordered_json::array();
        for (const auto& m : memory_registry()) {
            ordered_json params = ordered_json::object();
            for (const auto& p : m.params) params[p.key] = {{"default", p.default_value}, {"best", p.best}};
            memories.push_back({{"name", m.name}, {"description", m.description}, {"published", m.published},
                                {"table_name", m.table_name}, {"plain_name", m.plain_name}, {"article", m.article},
                                {"same_as", m.same_as}, {"cache", m.cache}, {"network_layers", m.network_layers}, {"reduces_to", m.reduces_to},
                                {"reduces_when", m.reduces_when}, {"cost_growth", m.cost_growth}, {"params", params},
                                {"source", m.paper}});
        }
        for (const auto& t : task_registry()) {
            ordered_json parts = ordered_json::object(), params = ordered_json::object();
            for (const auto& [slot, part] : t.slot_parts) parts[slot] = part;
            for (const auto& p : t.params) params[p.key] = {{"default", p.default_value}};
            tasks.push_back({{"name", t.name}, {"description", t.description}, {"n", t.n_meaning},
                             {"capacity_axis", t.capacity_axis}, {"slot", t.slot_meaning}, {"slot_parts", parts},
                             {"pairs_limit", t.pairs_limit}, {"params", params}, {"source", t.source}});
        }
        for (const auto& r : readout_registry()) readouts.push_back(r.name);
        // A budget is counted in floats of state (budget_floats), each of 32 bits at fp32 (state_bits
        // counts the state at its storage precision).
        const ordered_json catalog = {{"budget", {{"unit", "floats"}, {"bits_per_unit", 32}}},
                                      {"memories", memories}, {"tasks", tasks}, {"readouts", readouts}};
        std::cout << catalog.dump(1) << "\n";
        return 0;
    }

    std::cout << "memories (spec: name[:key=value,...]):\n";
    for (const auto& m : memory_registry()) {
        std::cout << "\n  " << m.name << " — " << m.description << "\n";
        for (const auto& p : m.params) std::cout << "      " << p.describe() << "\n";
        std::cout << "      state_floats = " << m.state_formula << "\n";
        if (m.zoology) std::cout << "      zoology counts: " << describe_zoology(m) << "\n";
        const Spec def = parse_memory_spec(m.name);
        std::cout << "      minimum budget at d=64: " << m.min_budget(def, MemoryShape{}) << (m.min_budget(def, MemoryShape{}) == 1 ? " float\n" : " floats\n");
        // The sizing function at two shapes (memories/registry.hpp, describe_size).
        for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>{}, std::optional<std::int64_t>{1024}}) {
            MemoryShape shape;
            shape.budget_floats = budget;
            std::cout << "      at d=64, " << (budget ? "B=1024" : "natural") << ": ";
            try {
                std::cout << describe_size(memory_size(def, shape)) << "\n";
            } catch (const UsageError& e) {
                std::cout << e.what() << "\n";
            }
        }
        if (m.backward) std::cout << "      backward pass: yes (assoc_recall:keys=learned trains keys through it)\n";
        if (m.causal_backward) std::cout << "      causal backward: yes (the trained frame trains a layer around it)\n";
        {  // the trained frame (harness/train/): the layer around it, and its parameters at one shape
            const train::LayerRecipe recipe = train::LayerRecipe::for_memory(m);
            std::cout << "      train=layer: " << (m.causal_backward ? "" : "(not trainable: no causal backward) ") << recipe.describe() << "\n";
            try {
                const auto task = make_task(parse_task_spec("mqar:vocab=256,length=128"));
                const MemoryShape shape(32, 32, 1024);
                const train::LayerPlan plan = train::plan_layer(m, def, memory_size(def, shape), shape, *task);
                std::cout << "      layer parameters at d=32, B=1024 on mqar:vocab=256,length=128: "
                          << train::Layer::count(plan.shape, plan.recipe) << " floats\n";
            } catch (const UsageError& e) {
                std::cout << "      layer parameters at d=32, B=1024: " << e.what() << "\n";
            }
        }
        std::cout << "      source: " << m.paper << "\n";
    }
    std::cout << "\ntasks (spec: name[:key=value,...]):\n";
    for (const auto& t : task_registry()) {
        std::cout << "\n  " << t.name << " — " << t.description << "\n";
        std::cout << "      n = " << t.n_meaning << "\n";
        for (const auto& p : t.params) std::cout << "      " << p.describe() << "\n";
        std::cout << "      source: " << t.source << "\n";
    }
    std::cout << "\nreadouts (--readout spec):\n";
    for (const auto& r : readout_registry()) {
        std::cout << "\n  " << r.name << " — " << r.description << "\n";
        for (const auto& p : r.params) std::cout << "      " << p.describe() << "\n";
    }
    return 0;
}

/// Replaces this process with `python -m MODULE ARGS` (Debian's /usr/bin/python3 unless MEMCAP_PYTHON
/// names another), `path` put first on PYTHONPATH and this binary in MEMCAP_BINARY.
[[noreturn]] void exec_python(const std::string& path, const std::string& module, const std::vector<std::string>& args,
                              const std::string& what) {
    const char* py_env = std::getenv("MEMCAP_PYTHON");
    const std::string python = py_env && *py_env ? py_env : "/usr/bin/python3";
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (!ec) ::setenv("MEMCAP_BINARY", exe.c_str(), 1);
    const char* old_path = std::getenv("PYTHONPATH");
    ::setenv("PYTHONPATH", (path + (old_path && *old_path ? ":" + std::string(old_path) : "")).c_str(), 1);
    ::setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    std::vector<std::string> words = {python, "-m", module};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    std::cout.flush();
    ::execv(python.c_str(), argv.data());
    throw UsageError(what + ": cannot run '" + python + "': " + std::strerror(errno) + " (MEMCAP_PYTHON names another)");
}

/// `memcap run --python-backend FILE.py:NAME ...`: the Python module's `python3 -m memcap run`
/// (python/memcap/__main__.py), which registers the backend and runs the grid through memcap.run.
[[noreturn]] void run_with_python_backends(const std::vector<std::string>& args) {
    namespace fs = std::filesystem;
    std::error_code ec;
    std::string path;
    if (const char* env = std::getenv("MEMCAP_PYTHONPATH")) path = env;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (path.empty() && !ec && fs::exists(exe.parent_path() / "python" / "memcap" / "__main__.py", ec))
        path = (exe.parent_path() / "python").string();  // the build tree's module
    // A memcap package without its compiled half (only the `memcap` target built: CMake copies
    // the .py files when it configures) fails in Python with a confusing circular-import error:
    // named here instead, with what to build or set.
    for (std::size_t start = 0; !path.empty() && start <= path.size();) {  // PYTHONPATH's order
        std::size_t end = path.find(':', start);
        if (end == std::string::npos) end = path.size();
        const fs::path package = fs::path(path.substr(start, end - start)) / "memcap";
        start = end + 1;
        if (!fs::exists(package / "__init__.py", ec)) continue;
        bool built = false;
        for (const auto& f : fs::directory_iterator(package, ec))
            built = built || f.path().filename().string().rfind("_memcap", 0) == 0;
        if (built) break;
        throw UsageError("run --python-backend: the Python module in '" + package.string() +
                         "' is not built (no _memcap extension): build the target memcap_python (cmake --build build "
                         "--target memcap_python), or set MEMCAP_PYTHONPATH to the directory holding a built memcap "
                         "package and MEMCAP_PYTHON to its interpreter (docs/python.md)");
    }
    std::vector<std::string> words = {"run"};
    words.insert(words.end(), args.begin(), args.end());
    exec_python(path, "memcap", words, "run --python-backend");
}

/// `memcap run`'s options.
po::options_description run_options() {
    po::options_description desc(
        "memcap run: every combination of the given memories, tasks, budgets, n and seeds;\n"
        "tidy CSV (one row per cell and seed, per slot where the task has slots)");
    desc.add_options()("help,h", "show this help")
        ("memory,m", po::value<std::vector<std::string>>()->multitoken()->composing(),
         "memory spec(s), e.g. softmax:beta=16 linear (required; see `memcap list`)")
        ("task,t", po::value<std::vector<std::string>>()->multitoken()->composing(),
         "task spec(s), e.g. assoc_recall:queries=32 (required)")
        ("n", po::value<std::vector<std::string>>()->multitoken()->composing(), "task size(s) n (required)")
        ("budget,b", po::value<std::vector<std::string>>()->multitoken()->composing(),
         "state budget(s) in floats; 'natural' = the backend's natural size at d (default)")
        ("budget-bits", po::value<std::vector<std::string>>()->multitoken()->composing(),
         "state budget(s) in bits instead (multiples of 32; a float is 32 bits): each memory given without\n"
         "precision= also chooses its storage precision (fp32 bf16 fp16 int8 int4) on tuning seeds")
        ("seeds,s", po::value<std::string>()->default_value("10"), "replicates: seeds 0..S-1")
        ("d", po::value<std::string>()->default_value("64"),
         "code width (key/value dimension); 'best' chooses it per memory, budget and n on tuning seeds\n"
         "(powers of two from 2 up to the budget that the memory can be built with), 'best:8..512*2' from a list,\n"
         "and with it every real setting with candidates the memory spec leaves out (-m delta races beta as\n"
         "delta:beta=best; -m delta:beta=1 keeps 1; integer, choice and optional settings only when given as best)")
        ("tuning-seeds", po::value<std::string>()->default_value("3"),
         "seeds each choice (d=best, key=best) starts on, disjoint from the scored seeds: every candidate\n"
         "on the first; those within 2 standard errors of the leader on more, up to 8x this many; those\n"
         "still indistinguishable go to the cheapest by the cost model of those about as likely to reach\n"
         "the capacity threshold (0.9) as the likeliest (docs/frontier.md)")
        ("readout", po::value<std::string>()->default_value("auto"),
         "auto (native, or the probe for memories without a native read), native, magnitude[:radius=0.5] (native, right only "
         "within radius x |target| of the target), or probe[:train=2000,ridge=1e-06]")
        ("on-tuning-seeds",
         "score the cells on the tuning seeds 2^40 + 0..S-1 (the seeds choices are made on, which no scored\n"
         "cell has) instead of 0..S-1: for choosing a default by hand; not with d=best or key=best")
        ("out,o", po::value<std::string>(), "CSV file (default: stdout); a manifest goes to FILE.manifest.json")
        ("force", "replace an existing --out file (otherwise refused)")
        ("train-curves", po::value<std::string>(),
         "FILE: the training curve of every model trained (memories given train=layer) as CSV: step, training\n"
         "loss, held-out loss and accuracy per learning rate tried (docs/training.md)")
        ("threads", po::value<std::string>(), "threads (default: all cores)")
        ("quiet,q", "no progress bar")
        ("python-backend", po::value<std::vector<std::string>>()->composing(),
         "FILE.py:NAME: a backend written in Python (FILE's register(NAME) registers it); the run goes "
         "through `python3 -m memcap run` with these options");
    add_plugin_option(desc);
    return desc;
}

int cmd_run(const std::vector<std::string>& args, const std::string& cmdline) {
    for (const auto& a : args)
        if (a == "--python-backend" || a.rfind("--python-backend=", 0) == 0) run_with_python_backends(args);
    const po::options_description desc = run_options();
    const auto vm = parse(desc, args);
    if (vm.count("help")) return std::cout << desc, 0;
    load_plugins(many(vm, "plugin"));
    // A device or pipe (/dev/stdout, a FIFO) is written through, with no manifest beside it.
    const bool to_device = vm.count("out") && writes_through(vm["out"].as<std::string>());
    if (vm.count("out") && !to_device && !vm.count("force")) {  // before any work: results are never replaced silently
        const std::string out = vm["out"].as<std::string>();
        for (const std::string& path : {out, out + ".manifest.json"}) {
            std::error_code ec;
            if (std::filesystem::is_regular_file(path, ec))
                throw UsageError("--out: '" + path + "' already exists; pass --force to replace it, or choose another file");
        }
    }

    if (vm.count("train-curves")) {
        const std::string path = vm["train-curves"].as<std::string>();
        std::error_code ec;
        if (!vm.count("force") && std::filesystem::is_regular_file(path, ec))
            throw UsageError("--train-curves: '" + path + "' already exists; pass --force to replace it, or choose another file");
        check_writable(path);
    }

    GridRequest request;
    request.memories = many(vm, "memory"), request.tasks = many(vm, "task");
    request.ns = many(vm, "n"), request.budgets = many(vm, "budget");
    request.budget_bits = many(vm, "budget-bits");
    request.seeds = vm["seeds"].as<std::string>(), request.d = vm["d"].as<std::string>();
    request.tuning_seeds = vm["tuning-seeds"].as<std::string>();
    request.readouts = {vm["readout"].as<std::string>()};
    request.on_tuning_seeds = vm.count("on-tuning-seeds") > 0;
    const GridBlock grid = build_grid(request, kRunKeys);
    const int threads = threads_option(vm);

    Pipeline pipeline(grid.cells());  // grid.cells() counts (and refuses) the grid before expanding it
    pipeline.tune(threads, !vm.count("quiet"));
    const std::vector<CellSpec>& cells = pipeline.cells();

    // From here the first Ctrl-C or SIGTERM stops the run cleanly: no new cell starts,
    // cells in flight finish, the temporary file is removed and the exit status is
    // 128 + the signal (a second one kills at once). During the choices on tuning seeds
    // (above) no file exists yet, and a signal ends the process as usual.
    StopSignals signals;
    std::optional<AtomicFile> file;
    if (vm.count("out")) file.emplace(vm["out"].as<std::string>());
    auto sink = [&](const std::string& text) {
        if (file) file->write(text);
        else std::fwrite(text.data(), 1, text.size(), stdout);
    };
    sink(cell_header());
    std::size_t emitted = 0;
    pipeline.run_in_order(threads, !vm.count("quiet"), [&](std::size_t, const std::string& rows) { sink(rows), ++emitted; },
                          &stop_requested());
    if (const int sig = stop_signal(); sig != 0 && emitted < cells.size()) {
        std::fflush(stdout);
        std::cerr << "memcap: " << (sig == SIGTERM ? "terminated" : "interrupted") << " after " << emitted << " of "
                  << cells.size() << " cells; "
                  << (file ? "nothing written to '" + file->path() + "'" : std::string("the CSV on stdout is incomplete"))
                  << "\n";
        return 128 + sig;
    }
    if (vm.count("train-curves")) {  // every model trained in this run, in the order of their keys
        AtomicFile curves(vm["train-curves"].as<std::string>());
        curves.write(train::curves_csv());
        curves.commit();
    }
    if (!file) {
        if (std::fflush(stdout) != 0) throw UsageError("stdout: write failed");
        return 0;
    }
    if (to_device) return file->commit(), 0;
    // The CSV's fsync (a wait for the disk) runs beside the manifest's making and writing.
    auto csv_synced = std::async(std::launch::async, [&file] { file->sync(); });
    std::this_thread::yield();  // a new thread waits on its creator's core (exec/placement.hpp): let it start its wait
    using J = nlohmann::ordered_json;
    J config = grid.manifest(false);
    if (vm.count("plugin")) config["plugins"] = many(vm, "plugin");
    std::optional<AtomicFile> manifest;
    try {
        manifest.emplace(file->path() + ".manifest.json");
        manifest->write(manifest_text(make_manifest(cmdline, config, cells.size(), ManifestRun{threads, 1})));
        manifest->sync();
    } catch (...) {
        csv_synced.get();  // the CSV's own error (a full disk fails it first) is the one to report
        throw;
    }
    csv_synced.get();  // rethrows the CSV's write error, if any
    file->commit();
    manifest->commit();
    return 0;
}

int cmd_sweep(const std::vector<std::string>& args, const std::string& cmdline) {
    po::options_description desc(
        "memcap sweep CONFIG: every cell the config describes (see scripts/sweeps/ and docs/sweeps.md);\n"
        "writes DIR/NAME.csv for CONFIG NAME.ini, journaling each cell as it finishes; a block's d = best\n"
        "races the width and each memory's settings as `memcap run --d best` does (memcap run --help),\n"
        "and DIR/NAME_race.csv says why each choice won (its runner-up and margin; docs/sweeps.md)");
    desc.add_options()("help,h", "show this help")
        ("config", po::value<std::string>(), "the sweep config (INI)")
        ("out,o", po::value<std::string>()->default_value("."), "directory for NAME.csv, its manifest and journal")
        ("threads", po::value<std::string>(), "threads (per MPI rank; default: all cores)")
        ("resume", "finish an interrupted sweep in DIR (a complete one is left as it is)")
        ("force", "start the sweep afresh, replacing an existing NAME.csv, journal, manifest and race file in DIR")
        ("dry-run", "print the cells and an estimate of the work; compute and write nothing")
        ("check", "check the config only: every cell can be built and every choice has a candidate that can run; "
                  "compute, time and write nothing (exit 2 with the error when not)")
        ("quiet,q", "no progress bar");
    add_plugin_option(desc);
    po::positional_options_description pos;
    pos.add("config", 1);
    const auto vm = parse(desc, args, &pos);
    if (vm.count("help")) return std::cout << desc, 0;
    if (!vm.count("config")) throw UsageError("sweep: give the config file, e.g. scripts/sweeps/smoke.ini");
    load_plugins(many(vm, "plugin"));  // the config's own `plugins =` key is read with the config
    SweepOptions o;
    o.config_path = vm["config"].as<std::string>();
    o.out_dir = vm["out"].as<std::string>();
    if (vm.count("threads")) o.threads = threads_option(vm);
    o.resume = vm.count("resume") > 0;
    o.force = vm.count("force") > 0;
    if (o.resume && o.force) throw UsageError("sweep: --resume continues a sweep and --force starts it afresh; give one");
    o.dry_run = vm.count("dry-run") > 0;
    o.check = vm.count("check") > 0;
    if (o.check && (o.dry_run || o.resume || o.force))
        throw UsageError("sweep: --check only checks the config; give it without --dry-run, --resume or --force");
    o.progress = !vm.count("quiet");
    o.command = cmdline;
    return run_sweep(o);
}

int cmd_aggregate(const std::vector<std::string>& args) {
    po::options_description desc(
        "memcap aggregate RESULTS.csv: one row per (memory, task, readout, budget, d, n, slot, tuned)\n"
        "with the mean accuracy over seeds, its sd across seeds and a 95% t interval");
    desc.add_options()("help,h", "show this help")
        ("input", po::value<std::string>(), "results CSV written by `memcap run` (- for standard input)")
        ("out,o", po::value<std::string>(), "summary CSV (default: stdout)")
        ("markdown", po::value<std::string>(), "also write a Markdown table of mean accuracy vs n");
    po::positional_options_description pos;
    pos.add("input", 1);
    const auto vm = parse(desc, args, &pos);
    if (vm.count("help")) return std::cout << desc, 0;
    if (!vm.count("input")) throw UsageError("aggregate: give the results CSV to summarise (- reads standard input)");
    const std::string input = vm["input"].as<std::string>() == "-" ? "/dev/stdin" : vm["input"].as<std::string>();
    std::string note;  // rows that repeated an earlier row exactly, counted once
    const auto groups = summarise_csv(input, &note);
    std::optional<AtomicFile> out, md;
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
    if (vm.count("markdown")) md.emplace(vm["markdown"].as<std::string>());
    const std::string csv = summary_csv(groups);
    if (out) out->write(csv);
    else std::cout << csv;
    if (md) md->write(summary_markdown(groups));
    if (out) out->commit();
    if (md) md->commit();
    if (!note.empty()) std::cerr << "memcap: note: " << note << "\n";
    return 0;
}

int cmd_theory(const std::vector<std::string>& args) {
    po::options_description desc(
        "memcap theory SUMMARY.csv...: the associative-recall models of memories/theory.hpp beside\n"
        "`memcap aggregate`'s summary. --out: per summary row of the cache, grid or HRR, the model's\n"
        "accuracy at that row's width, beta and noise, whether the model applies there (exact,\n"
        "equivalent, approx, no), the measured mean, its SE and the residual. --capacity: per model,\n"
        "noise setting and budget, n* (capacity_nstar): the real n where the model's accuracy at its\n"
        "best width (and the cache's beta) crosses 0.9, by root-finding in log n (HRR and grid also at\n"
        "budgets beyond the summary's, to --max-budget). Several summaries: one --out each, in their\n"
        "order; the model calls they share are made once, and --capacity holds the lines of all their\n"
        "budgets and noise settings");
    desc.add_options()("help,h", "show this help")
        ("input", po::value<std::vector<std::string>>(), "summary CSVs written by `memcap aggregate` (one or more)")
        ("out,o", po::value<std::vector<std::string>>(),
         "predictions CSV, one per summary in their order (default with one summary: stdout)")
        ("capacity", po::value<std::string>(), "capacity-lines CSV (without it the lines, most of the time, are not searched)")
        ("max-budget", po::value<std::string>()->default_value("1048576"),
         "HRR and grid capacity lines at every power of two above the summaries' budgets up to this")
        ("threads", po::value<std::string>(), "threads for the per-row model calls (default: all cores)");
    po::positional_options_description pos;
    pos.add("input", -1);
    const auto vm = parse(desc, args, &pos);
    if (vm.count("help")) return std::cout << desc, 0;
    if (!vm.count("input")) throw UsageError("theory: give the summary CSV (`memcap aggregate` output)");
    TheoryOptions o;
    o.summary_paths = vm["input"].as<std::vector<std::string>>();
    const std::vector<std::string> outs = vm.count("out") ? vm["out"].as<std::vector<std::string>>() : std::vector<std::string>{};
    if (o.summary_paths.size() > 1 || !outs.empty()) {
        if (outs.size() != o.summary_paths.size())
            throw UsageError("theory: " + std::to_string(o.summary_paths.size()) + " summar" +
                             (o.summary_paths.size() == 1 ? "y" : "ies") + " but " + std::to_string(outs.size()) +
                             " --out; give one --out per summary, in the same order");
    }
    o.max_budget = positive(vm["max-budget"].as<std::string>(), "--max-budget", std::int64_t{1} << 24);
    o.threads = threads_option(vm);
    o.lines = vm.count("capacity") > 0;  // the searches are most of the time: only when written
    // no file empty, named twice (one would overwrite the other) or an input (read, then replaced)
    const std::string capacity_path = vm.count("capacity") ? vm["capacity"].as<std::string>() : std::string();
    if (vm.count("capacity") && capacity_path.empty()) throw UsageError("theory: --capacity is empty; give a file");
    for (const std::string& path : outs)
        if (path.empty()) throw UsageError("theory: an --out is empty; give a file per summary");
    const auto same = [](const std::string& a, const std::string& b) {
        return std::filesystem::absolute(a).lexically_normal() == std::filesystem::absolute(b).lexically_normal();
    };
    std::vector<std::pair<std::string, std::string>> written;  // (option, path)
    for (const std::string& path : outs) written.emplace_back("--out", path);
    if (vm.count("capacity")) written.emplace_back("--capacity", capacity_path);
    for (std::size_t i = 0; i < written.size(); ++i) {
        for (std::size_t j = 0; j < i; ++j)
            if (same(written[i].second, written[j].second))
                throw UsageError("theory: " +
                                 (written[i].first == written[j].first ? "two " + written[i].first
                                                                        : written[j].first + " and " + written[i].first) +
                                 " name the same file '" + written[i].second + "'; give each its own file");
        for (const std::string& input : o.summary_paths)
            if (same(written[i].second, input))
                throw UsageError("theory: " + written[i].first + " '" + written[i].second +
                                 "' is a summary read; write elsewhere");
    }
    std::vector<std::unique_ptr<AtomicFile>> out;  // opened first: an unwritable path fails before the work
    std::optional<AtomicFile> capacity;
    for (const std::string& path : outs) out.push_back(std::make_unique<AtomicFile>(path));
    if (vm.count("capacity")) capacity.emplace(capacity_path);
    const TheoryTables t = theory_tables(o);
    if (capacity && t.capacity_lines == 0) {  // a header-only file would look like a result
        std::vector<std::string> modelled;  // the backends whose table entry declares a recall model
        for (const auto& e : memory_registry())
            if (e.recall_model) modelled.push_back(e.name);
        std::string names;
        for (std::size_t i = 0; i < modelled.size(); ++i)
            names += (i == 0 ? "" : i + 1 == modelled.size() ? " or " : ", ") + modelled[i];
        std::string inputs;
        for (std::size_t i = 0; i < o.summary_paths.size(); ++i) inputs += (i == 0 ? "'" : ", '") + o.summary_paths[i] + "'";
        throw UsageError("theory: --capacity: " + inputs + (o.summary_paths.size() == 1 ? " has" : " have") +
                         " no associative-recall row of " + names +
                         " (the memories with a recall model) at a budget (natural-size rows have none), so there "
                         "are no capacity lines; run with --budget, or drop --capacity");
    }
    if (out.empty()) std::cout << t.predictions_csv.front();
    for (std::size_t i = 0; i < out.size(); ++i) out[i]->write(t.predictions_csv[i]);
    if (capacity) capacity->write(t.capacity_csv);
    for (const auto& f : out) f->sync();  // every file on disk before the first is renamed into place
    if (capacity) capacity->sync();
    for (const auto& f : out) f->commit();
    if (capacity) capacity->commit();
    return 0;
}

int cmd_cost(const std::vector<std::string>& args) {
    po::options_description desc(
        "memcap cost SUMMARY.csv...: the cost model of each memory (its table entry's FLOP model, the one\n"
        "that prices the width race) beside `memcap aggregate`'s summary: per memory, task, budget, d\n"
        "and n, the state floats, the pairs written per episode, FLOPs per written pair and per query");
    desc.add_options()("help,h", "show this help")
        ("input", po::value<std::vector<std::string>>(), "summary CSVs written by `memcap aggregate` (one or more)")
        ("out,o", po::value<std::string>(), "cost CSV (default: stdout)");
    po::positional_options_description pos;
    pos.add("input", -1);
    const auto vm = parse(desc, args, &pos);
    if (vm.count("help")) return std::cout << desc, 0;
    if (!vm.count("input")) throw UsageError("cost: give the summary CSV (`memcap aggregate` output)");
    std::optional<AtomicFile> out;  // opened first: an unwritable path fails before the work
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
    const std::string csv = cost_table(vm["input"].as<std::vector<std::string>>());
    if (out) out->write(csv), out->commit();
    else std::cout << csv;
    return 0;
}

int cmd_reproduce(const std::vector<std::string>& args, const std::string& cmdline) {
    po::options_description desc(
        "memcap reproduce: every experiment of essay 004 (Parts 1-4) and essay 000's laboratory at the\n"
        "essays' protocols; writes reproduce_cells.csv, reproduction.csv, REPRODUCTION.md and order_checks.csv.\n"
        "A number that differs is a result, reported in the table (exit status 0)");
    desc.add_options()("help,h", "show this help")
        ("out,o", po::value<std::string>()->default_value("reproduce"), "output directory")
        ("threads", po::value<std::string>(), "threads (default: all cores)")
        ("quiet,q", "no progress bar")
        ("timings", "print CPU seconds per experiment and wall seconds per phase to stderr");
    const auto vm = parse(desc, args);
    if (vm.count("help")) return std::cout << desc, 0;
    const int threads = threads_option(vm);
    const int differ = reproduce(vm["out"].as<std::string>(), threads, !vm.count("quiet"), cmdline, vm.count("timings") > 0);
    std::cerr << "memcap reproduce: " << (differ ? std::to_string(differ) + " published number(s) differ"
                                                 : std::string("every published number agrees"))
              << "; see " << vm["out"].as<std::string>() << "/REPRODUCTION.md\n";
    return 0;
}

/// The directory holding the report package (memcap_report/): MEMCAP_REPORT_PATH, else the
/// source tree's scripts/ beside the build directory the binary is in, else the one it was built from.
std::string report_package_dir() {
    namespace fs = std::filesystem;
    std::vector<fs::path> candidates;
    if (const char* env = std::getenv("MEMCAP_REPORT_PATH")) candidates.emplace_back(env);
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) candidates.push_back(exe.parent_path().parent_path() / "scripts");
    if (*build_source_dir() != '\0') candidates.push_back(fs::path(build_source_dir()) / "scripts");
    for (const auto& c : candidates)
        if (fs::exists(c / "memcap_report" / "sweep.py", ec)) return c.string();
    throw UsageError("report: cannot find the report package (scripts/memcap_report of memcap's source tree); "
                     "set MEMCAP_REPORT_PATH to the directory that holds memcap_report/");
}

/// `memcap report`: runs the report package (scripts/memcap_report/sweep.py) with Debian's
/// /usr/bin/python3 (MEMCAP_PYTHON overrides), with this binary for its aggregate and theory.
int cmd_report(const std::vector<std::string>& args) {
    exec_python(report_package_dir(), "memcap_report.sweep", args, "report");
}

}  // namespace

int memcap_main(int argc, char** argv) {
    allow_thread_placement(true);  // the binary's own threads (exec/placement.hpp)
    try {
        if (argc < 2) return std::cerr << kUsage, 2;
        const std::string cmd = argv[1];
        const std::vector<std::string> args(argv + 2, argv + argc);
        if (cmd == "--help" || cmd == "-h" || cmd == "help") return std::cout << kUsage, 0;
        if (cmd == "--version") return std::cout << "memcap " << MEMCAP_VERSION << "\n", 0;
        if (cmd == "list") return cmd_list(args);
        if (cmd == "run") return cmd_run(args, command_line(argc, argv));
        if (cmd == "sweep") return cmd_sweep(args, command_line(argc, argv));
        if (cmd == "aggregate") return cmd_aggregate(args);
        if (cmd == "reproduce") return cmd_reproduce(args, command_line(argc, argv));
        if (cmd == "theory") return cmd_theory(args);
        if (cmd == "cost") return cmd_cost(args);
        if (cmd == "report") return cmd_report(args);
        throw UsageError("unknown command '" + cmd + "' (known: list, run, sweep, aggregate, reproduce, theory, cost, report)");
    } catch (const UsageError& e) {
        std::cerr << "memcap: error: " << e.what() << "\n";
        return 2;
    } catch (const std::bad_alloc&) {  // outside a cell (a cell's own says which and how much)
        std::cerr << "memcap: error: out of memory; lower --threads (cells run at once), the budget, n or d\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "memcap: internal error: " << e.what() << "\n";
        return 1;
    }
}

}  // namespace memcap::cli
