// memcap/harness/cli/main.cpp — the `memcap` command line.
//
//   memcap list                          every backend and task, with parameters
//   memcap run --memory SPEC --task SPEC --n N... [--budget B...] [--seeds S] [--out FILE]
//   memcap sweep CONFIG [--out DIR] [--threads T] [--resume] [--dry-run]
//   memcap aggregate RESULTS.csv [--out FILE] [--markdown FILE]
//
// Bad input of any kind is one line on stderr, `memcap: error: ...`, exit 2,
// and no output file is created or changed.
#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/results/aggregate.hpp"
#include "harness/results/atomic_file.hpp"
#include "harness/exec/runner.hpp"
#include "harness/experiments/reproduce.hpp"
#include "harness/exec/sweep.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <omp.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>

#ifndef MEMCAP_VERSION
#define MEMCAP_VERSION "0.0.0"
#endif

namespace po = boost::program_options;
using namespace memcap;

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
    "\n"
    "`memcap <command> --help` describes a command's options.\n";

std::string command_line(int argc, char** argv) {
    std::string out;
    // argv[0] as its file name only: manifests carry no machine paths
    out = std::filesystem::path(argv[0]).filename().string();
    for (int i = 1; i < argc; ++i) out += " " + std::string(argv[i]);
    return out;
}

std::int64_t positive(const std::string& text, const std::string& option, std::int64_t max) {
    const std::int64_t v = parse_int(text, option);
    if (v < 1) throw UsageError(option + ": '" + text + "' must be at least 1");
    if (v > max) throw UsageError(option + ": '" + text + "' exceeds the limit of " + std::to_string(max));
    return v;
}

po::variables_map parse(const po::options_description& desc, const std::vector<std::string>& args,
                        const po::positional_options_description* positional = nullptr) {
    po::variables_map vm;
    try {
        po::command_line_parser parser(args);
        parser.options(desc).style(po::command_line_style::unix_style ^ po::command_line_style::allow_guessing);
        po::parsed_options parsed = parser.run();
        // Words that are no option's value: the command's positional arguments take
        // theirs (aggregate's input, sweep's config); any other is named as an error
        // (Boost would drop it silently, e.g. the 64 of `--d 32 64`).
        unsigned taken = 0;
        for (auto& o : parsed.options) {
            if (o.position_key < 0) continue;
            if (positional && taken < positional->max_total_count()) {
                o.string_key = positional->name_for_position(taken++);
                continue;
            }
            const std::string word = o.value.empty() ? std::string() : o.value.front();
            throw UsageError("unexpected argument '" + word + "': not the value of any option (see --help)");
        }
        po::store(parsed, vm);
        po::notify(vm);
    } catch (const po::unknown_option& e) {
        std::string accepted;
        for (const auto& o : desc.options())
            if (o->long_name() != "input" && o->long_name() != "config")
                accepted += (accepted.empty() ? "--" : ", --") + o->long_name();
        throw UsageError(std::string(e.what()) + " (accepted: " + accepted + ")");
    } catch (const po::error& e) {
        throw UsageError(e.what());
    }
    return vm;
}

template <class T>
std::vector<T> many(const po::variables_map& vm, const std::string& key) {
    return vm.count(key) ? vm[key].as<std::vector<T>>() : std::vector<T>{};
}

int cmd_list(const std::vector<std::string>& args) {
    po::options_description desc("memcap list: every memory backend and task");
    desc.add_options()("help,h", "show this help");
    const auto vm = parse(desc, args);
    if (vm.count("help")) return std::cout << desc, 0;

    std::cout << "memories (spec: name[:key=value,...]):\n";
    for (const auto& m : memory_registry()) {
        std::cout << "\n  " << m.name << " — " << m.description << "\n";
        for (const auto& p : m.params) std::cout << "      " << p.describe() << "\n";
        std::cout << "      state_floats = " << m.state_formula << "\n";
        const Spec def = parse_memory_spec(m.name);
        for (const std::optional<std::int64_t> budget : {std::optional<std::int64_t>(), std::optional<std::int64_t>(1024)})
            std::cout << "      at d=64, " << (budget ? "B=1024" : "natural size") << ": "
                      << describe_size(memory_size(def, MemoryShape(64, 64, budget))) << "\n";
        std::cout << "      minimum budget at d=64: " << m.min_budget(def, MemoryShape{}) << (m.min_budget(def, MemoryShape{}) == 1 ? " float\n" : " floats\n");
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
    for (const auto& r : readout_schemas()) {
        std::cout << "\n  " << r.name << "\n";
        for (const auto& p : r.params) std::cout << "      " << p.describe() << "\n";
    }
    return 0;
}

int cmd_run(const std::vector<std::string>& args, const std::string& cmdline) {
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
        ("seeds,s", po::value<std::string>()->default_value("10"), "replicates: seeds 0..S-1")
        ("d", po::value<std::string>()->default_value("64"), "key/value dimension")
        ("readout", po::value<std::string>()->default_value("auto"),
         "auto (native, or the probe for memories without a native read), native, or probe[:train=2000,ridge=1e-06]")
        ("out,o", po::value<std::string>(), "CSV file (default: stdout); a manifest goes to FILE.manifest.json")
        ("threads", po::value<std::string>(), "threads (default: all cores)")
        ("quiet,q", "no progress bar");
    const auto vm = parse(desc, args);
    if (vm.count("help")) return std::cout << desc, 0;

    std::vector<Spec> memories, tasks;
    for (const auto& s : many<std::string>(vm, "memory")) memories.push_back(parse_memory_spec(s));
    for (const auto& s : many<std::string>(vm, "task")) tasks.push_back(parse_task_spec(s));
    if (memories.empty()) throw UsageError("--memory is required (known: " + [] {
        std::string k;
        for (const auto& n : memory_names()) k += (k.empty() ? "" : ", ") + n;
        return k;
    }() + ")");
    if (tasks.empty()) throw UsageError("--task is required (see `memcap list`)");
    std::vector<std::int64_t> ns;
    for (const auto& s : many<std::string>(vm, "n")) ns.push_back(positive(s, "--n", 100000000));
    if (ns.empty()) throw UsageError("--n is required (one or more task sizes)");
    std::vector<std::optional<std::int64_t>> budgets;
    for (const auto& s : many<std::string>(vm, "budget"))
        budgets.push_back(s == "natural" ? std::nullopt
                                         : std::optional<std::int64_t>(positive(s, "--budget", 4000000000LL)));
    if (budgets.empty()) budgets.push_back(std::nullopt);
    const auto seeds = positive(vm["seeds"].as<std::string>(), "--seeds", 1000000);
    const auto d = static_cast<int>(positive(vm["d"].as<std::string>(), "--d", 1 << 20));
    const Spec readout = parse_readout_spec(vm["readout"].as<std::string>());
    const int threads = vm.count("threads")
                            ? static_cast<int>(positive(vm["threads"].as<std::string>(), "--threads", 4096))
                            : omp_get_max_threads();

    const auto cells = expand_grid(memories, tasks, budgets, ns, seeds, d, readout);
    check_buildable(cells);

    std::optional<AtomicFile> file;
    if (vm.count("out")) file.emplace(vm["out"].as<std::string>());
    auto sink = [&](const std::string& text) {
        if (file) file->write(text);
        else std::fwrite(text.data(), 1, text.size(), stdout);
    };
    sink(kCsvHeader);
    run_cells(cells, threads, !vm.count("quiet"), [&](std::size_t, const std::string& rows) { sink(rows); });
    if (!file) {
        if (std::fflush(stdout) != 0) throw UsageError("stdout: write failed");
        return 0;
    }

    nlohmann::ordered_json manifest;
    manifest["tool"] = "memcap";
    manifest["version"] = MEMCAP_VERSION;
    manifest["command"] = cmdline;
    manifest["compiler"] = std::string("g++ ") + __VERSION__;
    manifest["config"] = {{"memories", nlohmann::ordered_json::array()}, {"tasks", nlohmann::ordered_json::array()},
                          {"budgets_floats", nlohmann::ordered_json::array()}, {"n", ns},
                          {"seeds", seeds}, {"d", d}, {"readout", readout.canonical()}};
    for (const auto& m : memories) manifest["config"]["memories"].push_back(m.canonical());
    for (const auto& t : tasks) manifest["config"]["tasks"].push_back(t.canonical());
    for (const auto& b : budgets) manifest["config"]["budgets_floats"].push_back(b ? nlohmann::ordered_json(*b) : nlohmann::ordered_json());
    manifest["cells"] = cells.size();
    manifest["csv_header"] = std::string(kCsvHeader, std::strlen(kCsvHeader) - 1);
    AtomicFile mf(file->path() + ".manifest.json");
    mf.write(manifest.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");  // any bytes in paths
    file->commit();
    mf.commit();
    return 0;
}

int cmd_sweep(const std::vector<std::string>& args, const std::string& cmdline) {
    po::options_description desc(
        "memcap sweep CONFIG: every cell the config describes (see scripts/sweeps/ and the README);\n"
        "writes DIR/NAME.csv for CONFIG NAME.ini, journaling each cell as it finishes");
    desc.add_options()("help,h", "show this help")
        ("config", po::value<std::string>(), "the sweep config (INI)")
        ("out,o", po::value<std::string>()->default_value("."), "directory for NAME.csv, its manifest and journal")
        ("threads", po::value<std::string>(), "threads (per MPI rank; default: all cores)")
        ("resume", "finish an interrupted sweep in DIR (a complete one is left as it is)")
        ("dry-run", "print the cells and an estimate of the work; compute and write nothing")
        ("quiet,q", "no progress bar");
    po::positional_options_description pos;
    pos.add("config", 1);
    const auto vm = parse(desc, args, &pos);
    if (vm.count("help")) return std::cout << desc, 0;
    if (!vm.count("config")) throw UsageError("sweep: give the config file, e.g. scripts/sweeps/smoke.ini");
    SweepOptions o;
    o.config_path = vm["config"].as<std::string>();
    o.out_dir = vm["out"].as<std::string>();
    if (vm.count("threads")) o.threads = static_cast<int>(positive(vm["threads"].as<std::string>(), "--threads", 4096));
    o.resume = vm.count("resume") > 0;
    o.dry_run = vm.count("dry-run") > 0;
    o.progress = !vm.count("quiet");
    o.command = cmdline;
    return run_sweep(o);
}

int cmd_aggregate(const std::vector<std::string>& args) {
    po::options_description desc(
        "memcap aggregate RESULTS.csv: one row per (memory, task, readout, budget, d, n, slot)\n"
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
    const auto groups = summarise_csv(input);
    std::optional<AtomicFile> out, md;
    if (vm.count("out")) out.emplace(vm["out"].as<std::string>());
    if (vm.count("markdown")) md.emplace(vm["markdown"].as<std::string>());
    const std::string csv = summary_csv(groups);
    if (out) out->write(csv);
    else std::cout << csv;
    if (md) md->write(summary_markdown(groups));
    if (out) out->commit();
    if (md) md->commit();
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
    const int threads = vm.count("threads")
                            ? static_cast<int>(positive(vm["threads"].as<std::string>(), "--threads", 4096))
                            : omp_get_max_threads();
    const int differ = reproduce(vm["out"].as<std::string>(), threads, !vm.count("quiet"), cmdline, vm.count("timings") > 0);
    std::cerr << "memcap reproduce: " << (differ ? std::to_string(differ) + " published number(s) differ"
                                                 : std::string("every published number agrees"))
              << "; see " << vm["out"].as<std::string>() << "/REPRODUCTION.md\n";
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
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
        throw UsageError("unknown command '" + cmd + "' (known: list, run, sweep, aggregate, reproduce)");
    } catch (const UsageError& e) {
        std::cerr << "memcap: error: " << e.what() << "\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "memcap: internal error: " << e.what() << "\n";
        return 1;
    }
}
