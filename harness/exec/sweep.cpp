// memcap/harness/exec/sweep.cpp — see sweep.hpp.
//
// run_sweep in four stages: plan (config → cells, every cell checked, paths and
// manifest; on every rank), open outputs (rank 0: directory, manifest, journal,
// what is left to do), compute (this process's threads, or every MPI rank), and
// assemble (rank 0: the CSV from the journal in cell order).
#include "harness/exec/sweep.hpp"

#include "core/error.hpp"
#include "harness/exec/crossing.hpp"
#include "harness/exec/journal.hpp"
#include "harness/exec/mpi.hpp"
#include "harness/exec/pipeline.hpp"
#include "harness/exec/progress.hpp"
#include "harness/exec/runner.hpp"
#include "harness/exec/signals.hpp"
#include "harness/exec/sweep_config.hpp"
#include "harness/exec/tuning.hpp"
#include "harness/results/atomic_file.hpp"
#include "harness/results/csv.hpp"
#include "harness/results/manifest.hpp"
#include "harness/train/trainer.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <nlohmann/json.hpp>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

namespace memcap {
namespace {

namespace fs = std::filesystem;

/// What a sweep computes and where it goes: the same on every rank.
struct SweepPlan {
    SweepConfig config;
    Pipeline pipeline;  // the config's cells, checked (each resolved, or its race built), then tuned
    const std::vector<CellSpec>& cells() const { return pipeline.cells(); }
    fs::path dir;
    std::string csv_path, manifest_path, journal_path, tuning_path;  // tuning_path: the tuning cells' journal
    std::string curves_path;  // NAME_curves.csv: the trained frame's training curves, when the sweep trains
    std::string race_path;    // NAME_race.csv: why each choice on tuning seeds won, when the sweep makes one
    nlohmann::ordered_json manifest;
    std::string journal_header;
};

/// What rank 0 found in (or made of) the output directory.
struct SweepOutputs {
    std::unique_ptr<Journal> journal;
    std::vector<std::size_t> todo;  // cells left, biggest n first
    bool complete = false;          // NAME.csv exists: nothing to do
    bool fresh = false;             // this run wrote the manifest and a new journal
};

/// The crossing rounds' journals and tuning journals of this sweep in its directory
/// (NAME.csv.crossing-R, NAME.csv.crossing-R.tuning), in name order.
std::vector<std::string> crossing_files(const SweepPlan& p) {
    std::vector<std::string> out;
    std::error_code ec;
    const std::string prefix = p.config.name + ".csv.crossing-";
    if (!fs::is_directory(p.dir, ec)) return out;
    for (const auto& entry : fs::directory_iterator(p.dir, ec))
        if (entry.path().filename().string().rfind(prefix, 0) == 0) out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

void remove_crossing_files(const SweepPlan& p) {
    std::error_code ec;
    for (const auto& f : crossing_files(p)) fs::remove(f, ec);
}

bool has_crossing(const SweepConfig& config) {
    for (const auto& b : config.blocks)
        if (!b.crossing.empty()) return true;
    return false;
}

/// A block's crossing rule in words ("" without one).
std::string crossing_note(const GridBlock& b) {
    if (b.crossing.empty()) return "";
    std::string ts;
    for (const double t : b.crossing) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%s%g", ts.empty() ? "" : " ", t);
        ts += buf;
    }
    return "; then crossing rounds at accuracy " + ts + " (" + std::to_string(b.crossing_probes) + " probes a bracket, up to " +
           std::to_string(b.crossing_seeds) + " seeds a point)";
}

std::string describe_block(const GridBlock& b) {
    std::size_t n = b.readouts.size() * b.ds.size() * b.tasks.size() * b.memories.size() * b.budgets.size() *
                    b.ns.size() * static_cast<std::size_t>(b.seeds);
    auto part = [](std::size_t k, const char* one, const char* many) {
        return std::to_string(k) + " " + (k == 1 ? one : many);
    };
    return "block " + b.name + ": " + part(b.memories.size(), "memory", "memories") + " x " +
           part(b.tasks.size(), "task", "tasks") + " x " + part(b.budgets.size(), "budget", "budgets") + " x " +
           part(b.ns.size(), "n", "n") + " x " + part(static_cast<std::size_t>(b.seeds), "seed", "seeds") + " x " +
           part(b.ds.size(), "d", "d") + " x " + part(b.readouts.size(), "readout", "readouts") + " = " +
           std::to_string(n) + " cells" + crossing_note(b);
}

/// 0 .. count-1 in a scrambled but fixed order: a time-limited prefix of a sample visited in it
/// is still spread out.
std::vector<std::size_t> scrambled_order(std::size_t count) {
    std::vector<std::size_t> order(count);
    for (std::size_t k = 0; k < count; ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [](std::size_t a, std::size_t b) {
        return fnv1a(reinterpret_cast<const char*>(&a), sizeof a) < fnv1a(reinterpret_cast<const char*>(&b), sizeof b);
    });
    return order;
}

/// Times an evenly spread sample of cells (at most ~2 s) and extrapolates: CPU seconds for
/// all of `todo`; `timed` gets the number of cells timed.
double estimate_seconds(const std::vector<CellSpec>& cells, const std::vector<std::size_t>& todo, std::size_t& timed) {
    timed = 0;
    if (todo.empty()) return 0;
    const std::size_t want = std::min<std::size_t>(todo.size(), 40);
    std::vector<std::size_t> sample;
    for (std::size_t k = 0; k < want; ++k) sample.push_back(todo[k * todo.size() / want]);
    const std::vector<std::size_t> order = scrambled_order(sample.size());
    const auto start = std::chrono::steady_clock::now();
    for (const auto k : order) {
        run_cell(cells[sample[k]]);  // timed only; rows discarded
        ++timed;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) break;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return secs / static_cast<double>(timed) * static_cast<double>(todo.size());
}

/// Steps of the short run that times a training run's step for --dry-run: one held-out
/// evaluation's worth (a run evaluates every 50 steps; the short one twice, at 0 and 50, and
/// builds the held-out set, a few percent more than its share).
constexpr std::int64_t kTimedTrainingSteps = 50;

/// CPU seconds for `runs` training runs, for --dry-run: the first kTimedTrainingSteps steps of
/// one run of each of a sample of `groups` (one trained cell each), timed in a scrambled but
/// fixed order until about 2 s are spent (at least one), scaled to the cap on steps (train_steps;
/// 3000 when left out). A run that converges stops before the cap (the trained study's runs took
/// 94% of it on average), and the timing is as noisy as the machine; `timed` gets the groups timed.
double estimate_training_seconds(const std::vector<CellSpec>& groups, std::size_t runs, std::size_t& timed) {
    timed = 0;
    if (groups.empty() || runs == 0) return 0;
    double per_run = 0;  // the sum of the timed groups' seconds a run
    const auto start = std::chrono::steady_clock::now();
    for (const std::size_t k : scrambled_order(groups.size())) {
        const CellSpec& c = groups[k];
        const auto r = resolve_cell(c);
        const train::TrainSettings settings = train::TrainSettings::of(c.memory);
        const std::int64_t steps = std::min(kTimedTrainingSteps, settings.max_steps);
        // the memory's spec with train_steps = steps, in place of the value it gives
        RawSpec raw{c.memory.name(), {}};
        for (const auto& param : r->memory->params)
            if (param.key != kTrainStepsKey && c.memory.has(param.key)) raw.pairs.emplace_back(param.key, c.memory.text(param.key));
        raw.pairs.emplace_back(kTrainStepsKey, std::to_string(steps));
        const Spec short_run = bind_spec(r->memory->schema(), raw);
        const auto task = make_task(c.task);
        const auto began = std::chrono::steady_clock::now();
        train::train_run(*r->memory, r->size, short_run, r->shape, *task, c.d, kTuningSeedBase, settings.lrs.front());
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
        per_run += secs / static_cast<double>(steps) * static_cast<double>(settings.max_steps);
        ++timed;
        if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) break;
    }
    return per_run / static_cast<double>(timed) * static_cast<double>(runs);
}

/// Where two canonical configs (SweepConfig::canonical) first differ, in the config's own
/// words: "[block NAME] n: 4 8 16 then, 4 8 now", or "" when they are equal.
std::string config_difference(const nlohmann::ordered_json& then, const nlohmann::ordered_json& now) {
    using J = nlohmann::ordered_json;
    const auto text = [](const J& v) {
        std::string out;
        if (v.is_array()) {
            for (const auto& x : v) out += (out.empty() ? "" : " ") + (x.is_string() ? x.get<std::string>() : x.is_null() ? "natural" : x.dump());
        } else {
            out = v.is_string() ? v.get<std::string>() : v.is_null() ? "(none)" : v.dump();
        }
        return out.size() > 60 ? out.substr(0, 57) + "..." : out;
    };
    const auto keys = [&](const J& a, const J& b, const std::string& where) -> std::string {
        std::vector<std::string> names;
        for (const auto& [k, v] : a.items()) names.push_back(k);
        for (const auto& [k, v] : b.items())
            if (!a.contains(k)) names.push_back(k);
        for (const auto& k : names) {
            const J x = a.contains(k) ? a[k] : J(), y = b.contains(k) ? b[k] : J();
            if (x != y) return where + k + ": '" + text(x) + "' then, '" + text(y) + "' now";
        }
        return "";
    };
    if (!then.is_object() || !now.is_object()) return then == now ? "" : "the config";
    const J tb = then.value("blocks", J::array()), nb = now.value("blocks", J::array());
    if (then.value("plugins", J()) != now.value("plugins", J())) return "plugins: '" + text(then.value("plugins", J())) + "' then, '" + text(now.value("plugins", J())) + "' now";
    for (std::size_t i = 0; i < std::min(tb.size(), nb.size()); ++i) {
        const std::string name = nb[i].value("name", std::string());
        if (tb[i].value("name", std::string()) != name)
            return "block " + std::to_string(i + 1) + " is [block " + tb[i].value("name", std::string()) + "] then, [block " + name + "] now";
        if (const auto d = keys(tb[i], nb[i], "[block " + name + "] "); !d.empty()) return d;
    }
    if (tb.size() != nb.size())
        return std::to_string(tb.size()) + " blocks then, " + std::to_string(nb.size()) + " now";
    return then == now ? "" : "the config";
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
    for (const char* key : {"config", "cells", "csv_header", "version", "build"})
        if (!got.contains(key) || got[key] != expect[key]) {
            const std::string k = key;
            if (k == "build")
                throw UsageError("--resume: the sweep in '" + path + "' was started by another build of memcap (commit, ISA, compiler or "
                                 "library versions differ: its cells could differ in the last bits); finish it with that build, or use another --out");
            std::string what = k + " differs";
            if (k == "config" && got.contains(key)) what = config_difference(got[key], expect[key]);
            else if (k == "version") what = "memcap " + got.value("version", std::string("?")) + " then, " + expect.value("version", std::string("?")) + " now";
            else if (k == "csv_header") what = "the CSV columns differ";
            throw UsageError("--resume: config '" + config_path + "' differs from the one the sweep in '" + path +
                             "' was started with (" + what + "); use another --out, or --force to start afresh");
        }
}


/// The config, its cells (checked, choices still open), paths and manifest.
SweepPlan plan_sweep(const SweepOptions& o, int mpi_ranks) {
    SweepPlan p;
    p.config = load_sweep_config(o.config_path);
    try {
        p.pipeline = Pipeline(p.config.cells());
    } catch (const UsageError& e) {
        throw UsageError("config '" + o.config_path + "': " + e.what());
    }
    // `results/` names the directory `results` (its parent is `.`, not `results`).
    p.dir = fs::path(o.out_dir.empty() ? "." : o.out_dir);
    while (!p.dir.has_filename() && p.dir.has_relative_path()) p.dir = p.dir.parent_path();
    p.csv_path = (p.dir / (p.config.name + ".csv")).string();
    p.manifest_path = p.csv_path + ".manifest.json";
    p.journal_path = p.csv_path + ".journal";
    p.tuning_path = p.csv_path + ".tuning";
    p.curves_path = (p.dir / (p.config.name + "_curves.csv")).string();
    p.race_path = (p.dir / (p.config.name + "_race.csv")).string();
    p.manifest = make_manifest(o.command, p.config.canonical(), p.cells().size(),
                               ManifestRun{o.threads.value_or(omp_get_max_threads()), mpi_ranks},
                               {{"config_file", p.config.path}});
    const std::string config = p.manifest["config"].dump();
    const std::string& header = cell_header();
    p.journal_header = "memcap-journal 1 config=" + hex16(fnv1a(config.data(), config.size(), fnv1a(header.data(), header.size()))) +
                       " cells=" + std::to_string(p.cells().size()) + "\n";
    return p;
}

/// `--dry-run`: the cells, the output's state and an estimate of the work; reads and writes nothing.
/// Cells whose choices are open are timed at their first candidate; the tuning is timed on a
/// sample of its first-round cells (every candidate on the first tuning seed), and its later
/// rounds are counted as about three candidates per group on the other tuning seeds, at the
/// first round's mean cost (the race decides how many really go on).
void print_dry_run(const SweepPlan& p, int threads) {
    const std::vector<std::size_t> todo = every_cell(p.cells().size());
    std::vector<CellSpec> timed = p.cells();
    std::size_t tuning_cells = 0, finalist_cells = 0, max_tuning_cells = 0, raced = 0;
    std::vector<CellSpec> first_round;       // every candidate of every group, on the first tuning seed
    const Races& races = p.pipeline.races();
    std::vector<bool> seen(races.size(), false);
    for (auto& c : timed) {
        if (!c.needs_tuning()) continue;
        const std::size_t g = races.group_of(c);
        const Race& race = races[g];
        if (!seen[g] && race.size() >= 2) {  // one candidate: chosen without a race, nothing to time
            ++raced;
            tuning_cells += tuning_cell_min(race.size(), c.tuning_seeds);
            // the race's later rounds, counted as about three candidates going on to the tuning seeds
            finalist_cells += std::min<std::size_t>(race.size(), 3) * static_cast<std::size_t>(c.tuning_seeds - 1);
            max_tuning_cells += tuning_cell_max(race.size(), c.tuning_seeds);
            for (std::size_t k = 0; k < race.size(); ++k) {
                first_round.push_back(race.candidate(k));
                first_round.back().seed = kTuningSeedBase;
            }
        }
        seen[g] = true;
        const std::uint64_t seed = c.seed;
        c = race.candidate(0);  // timed at its group's first candidate
        c.seed = seed;
    }
    std::error_code ec;
    std::cout << "sweep " << p.config.name << " (" << p.config.path << "): " << p.cells().size() << " cells in "
              << p.config.blocks.size() << (p.config.blocks.size() == 1 ? " block\n" : " blocks\n");
    for (const auto& b : p.config.blocks) std::cout << "  " << describe_block(b) << "\n";
    std::cout << "  output: " << p.csv_path;
    if (fs::exists(p.csv_path, ec)) std::cout << " (exists: the sweep is complete)";
    else if (fs::exists(p.journal_path, ec)) std::cout << " (an interrupted sweep's journal exists: --resume finishes it)";
    // The trained frame's cells are not timed (each would train a whole model): they are
    // counted as training runs, and the cells timed are the others.
    std::vector<std::size_t> untrained;
    std::set<std::string> groups, models, timed_groups;
    std::vector<CellSpec> training_groups;  // one trained cell of each (memory, task, d, budget)
    for (const std::size_t i : todo) {
        const CellSpec& c = timed[i];
        if (!train::trained(c.memory)) {
            untrained.push_back(i);
            continue;
        }
        std::string group = c.memory.canonical() + '|' + c.task.canonical() + '|' + std::to_string(c.d) + '|' +
                            (c.budget_floats ? std::to_string(*c.budget_floats) : std::string("natural"));
        models.insert(group + '|' + std::to_string(c.seed));
        if (timed_groups.insert(group).second) training_groups.push_back(c);
        if (train::TrainSettings::of(c.memory).lrs.size() > 1) groups.insert(group);
    }
    const std::size_t training_runs = models.size() + 3 * groups.size();
    std::size_t sampled = 0, sampled_tuning = 0;
    const double cpu = estimate_seconds(timed, untrained, sampled);
    std::size_t sampled_training = 0;
    const double training_cpu = estimate_training_seconds(training_groups, training_runs, sampled_training);
    if (training_runs > 0)
        std::cout << "\n  training: " << training_runs << (training_runs == 1 ? " run (" : " runs (") << groups.size()
                  << (groups.size() == 1 ? " group" : " groups") << " x 3 learning rates on the tuning seed, then " << models.size()
                  << (models.size() == 1 ? " model" : " models")
                  << ", one per seed), each counted at the cap on steps (a run that converges stops sooner); timed on "
                  << sampled_training << " of their " << training_groups.size() << " settings (a run's first " << kTimedTrainingSteps
                  << " steps, or fewer when train_steps caps it lower)";
    double tuning_cpu = 0;
    if (!first_round.empty()) {
        tuning_cpu = estimate_seconds(first_round, every_cell(first_round.size()), sampled_tuning);
        tuning_cpu += tuning_cpu / static_cast<double>(first_round.size()) * static_cast<double>(finalist_cells);
        std::cout << "\n  tuning: " << raced << " groups choose on " << tuning_cells
                  << " tuning cells first, then on more while candidates cannot be told apart (at most "
                  << max_tuning_cells << " in all; shared over the MPI ranks)";
    }
    const auto seconds = [](double s) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.3g s", s);
        return std::string(buf);
    };
    // "X s of CPU time[ for the cells[, Y s for the tuning][ and Z s for the training]]"
    std::vector<std::string> parts{seconds(cpu) + " of CPU time"}, timed_what{std::to_string(sampled) + " sample cells"};
    if (!first_round.empty())
        parts.push_back(seconds(tuning_cpu) + " for the tuning"), timed_what.push_back(std::to_string(sampled_tuning) + " tuning cells");
    if (training_runs > 0)
        parts.push_back(seconds(training_cpu) + " for the training (at the cap on steps)"),
            timed_what.push_back(std::to_string(sampled_training) + (sampled_training == 1 ? " training run's" : " training runs'") +
                                 " first steps");
    if (parts.size() > 1) parts[0] += " for the cells";
    std::string line = "about ";
    for (std::size_t k = 0; k < parts.size(); ++k)
        line += (k == 0 ? "" : k + 1 == parts.size() ? " and " : ", ") + parts[k];
    line += ", " + seconds((cpu + tuning_cpu + training_cpu) / threads) + " wall at " + std::to_string(threads) +
            (threads == 1 ? " thread" : " threads") + " (timed ";
    for (std::size_t k = 0; k < timed_what.size(); ++k) line += (k == 0 ? "" : " and ") + timed_what[k];
    line += parts.size() > 1 ? "; rough where cells differ in cost by orders of magnitude)" : ")";
    std::cout << "\n  estimate: " << line << "\n";
    if (has_crossing(p.config))
        std::cout << "  crossing rounds follow the cells (probes and seeds near each crossing, planned from the results): "
                     "not estimated\n";
}

/// Creates `dir` if missing (its parent must exist); returns true if it made it.
bool make_output_dir(const fs::path& dir, const std::string& given) {
    std::error_code ec;
    if (fs::exists(dir, ec)) {
        if (!fs::is_directory(dir, ec)) throw UsageError("--out '" + given + "' is not a directory");
        return false;
    }
    const fs::path parent = dir.parent_path().empty() ? fs::path(".") : dir.parent_path();
    if (!fs::is_directory(parent, ec))
        throw UsageError("--out '" + given + "': directory '" + parent.string() + "' does not exist");
    check_writable(dir.string());
    if (!fs::create_directory(dir, ec)) throw UsageError("--out '" + given + "': cannot create directory: " + ec.message());
    return true;
}

/// The cells of `journal` not yet done, biggest n first (the long cells start early, so the end of
/// a run is not one straggler).
std::vector<std::size_t> cells_left(const std::vector<CellSpec>& cells, const Journal& journal) {
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < cells.size(); ++i)
        if (!journal.done(i)) todo.push_back(i);
    std::stable_sort(todo.begin(), todo.end(), [&](std::size_t a, std::size_t b) { return cells[a].n > cells[b].n; });
    return todo;
}

/// Rank 0: checks the output directory against --resume, writes the manifest and opens the
/// journal. Nothing is created before every check passed; a failed start leaves nothing behind.
SweepOutputs open_outputs(const SweepOptions& o, const SweepPlan& p) {
    SweepOutputs out;
    bool made_dir = false, fresh = false;  // what this attempt created, to be removed if it fails
    try {
        made_dir = make_output_dir(p.dir, o.out_dir);
        check_writable(p.csv_path);
        std::error_code ec;
        const bool have_csv = fs::exists(p.csv_path, ec), have_journal = fs::exists(p.journal_path, ec),
                   have_manifest = fs::exists(p.manifest_path, ec), have_tuning = fs::exists(p.tuning_path, ec);
        std::vector<std::string> rounds = crossing_files(p);
        if (fs::exists(p.curves_path, ec)) rounds.push_back(p.curves_path);  // an output too: never replaced silently
        if (fs::exists(p.race_path, ec)) rounds.push_back(p.race_path);      // likewise
        const bool have_rounds = !rounds.empty();
        if (!o.resume && !o.force && (have_csv || have_journal || have_manifest || have_tuning || have_rounds))
            throw UsageError("'" + (have_csv ? p.csv_path : have_journal ? p.journal_path : have_manifest ? p.manifest_path : have_tuning ? p.tuning_path : rounds[0]) +
                             "' already exists; pass --resume to finish or keep that sweep, or --force to start it afresh");
        if (o.force && (have_csv || have_journal || have_manifest || have_tuning || have_rounds)) {
            // Every check has passed: the old sweep's files go, and this one starts as new.
            std::vector<std::string> paths{p.csv_path, p.journal_path, p.manifest_path, p.tuning_path};
            paths.insert(paths.end(), rounds.begin(), rounds.end());
            for (const auto& path : paths)
                if (fs::exists(path, ec) && !fs::remove(path, ec))
                    throw UsageError("--force: cannot remove '" + path + "': " + ec.message());
        }
        std::string note;
        if (o.resume && !o.force && (have_csv || have_journal)) {
            check_manifest(p.manifest_path, p.manifest, p.config.path);
            if (have_csv) out.complete = true;
            else out.journal = std::make_unique<Journal>(p.journal_path, p.journal_header, p.cells().size(), note);
        } else {
            fresh = out.fresh = true;
            for (const auto& f : rounds) fs::remove(f, ec);  // a stale round of a sweep that is gone
            write_manifest(p.manifest_path, p.manifest);
            out.journal = std::make_unique<Journal>(p.journal_path, p.journal_header, p.cells().size());
        }
        if (!note.empty()) std::cerr << "memcap: " << note << "\n";
        if (out.journal) {
            out.todo = cells_left(p.cells(), *out.journal);
            if (o.resume && have_journal && o.progress)
                std::cerr << "memcap: resuming " << p.csv_path << ": " << out.journal->done_count() << " of "
                          << p.cells().size() << " cells already done\n";
        }
    } catch (const UsageError&) {
        std::error_code ec;
        if (fresh) fs::remove(p.manifest_path, ec), fs::remove(p.journal_path, ec), fs::remove(p.tuning_path, ec);
        if (made_dir) fs::remove(p.dir, ec);  // only if empty
        throw;
    }
    return out;
}

/// Rank 0: computes the cells `todo` of `pipeline` left (with the other ranks, if any) and journals
/// each as it finishes. Returns the cells computed per rank; rethrows the first failure.
std::vector<std::size_t> compute(const SweepOptions& o, const Pipeline& pipeline, const std::string& label, Journal& journal,
                                 const std::vector<std::size_t>& todo, const MpiSession& mpi, int threads) {
    std::vector<std::size_t> per_rank(static_cast<std::size_t>(mpi.size()), 0);
    // The ETA calibrated per memory on its own cells' seconds in one process; over MPI ranks
    // the seconds are the other ranks'.
    CellProgress bar = pipeline.progress(todo, label, o.progress, threads, mpi.size() == 1);
    std::mutex journal_mutex;
    auto record = [&](std::size_t idx, const std::string& rows, int rank, double seconds) {
        std::lock_guard<std::mutex> lock(journal_mutex);
        journal.append(idx, rows);
        ++per_rank[static_cast<std::size_t>(rank)];
        bar.tick(idx, seconds);
    };
    std::exception_ptr failure;
    try {
        if (mpi.size() == 1)
            pipeline.run(
                todo, threads, stop_requested(),
                [&](std::size_t idx, const std::string& rows, double seconds) { record(idx, rows, 0, seconds); }, o.progress);
        else
            mpi_serve(mpi, pipeline.cells(), todo, threads,
                      [&](std::size_t idx, const std::string& rows, int rank) { record(idx, rows, rank, -1.0); });
    } catch (...) {
        failure = std::current_exception();
    }
    bar.finish();
    journal.sync();
    if (failure) std::rethrow_exception(failure);
    return per_rank;
}

/// One crossing round (crossing.hpp): the cells its plan makes, their pipeline (choices made) and,
/// on rank 0, its journal (NAME.csv.crossing-R: the cells' journal's format and crash safety).
struct CrossingRound {
    std::vector<CrossingCell> plan;
    Pipeline pipeline;
    std::unique_ptr<Journal> journal;
};

/// Rank 0's plan of a round to every rank, as (source round, index, n, seed) numbers summed over
/// the ranks (every other rank holds zeros: the sum is exact); `stop`: no more rounds (an
/// interruption or a failure on rank 0). False when the rounds stop. One process: nothing to send.
bool share_round(const MpiSession& mpi, std::vector<CrossingCell>& cells, bool stop) {
    if (mpi.size() == 1) return !stop;
    const bool root = mpi.rank() == 0;
    std::vector<double> head{root ? (stop ? -1.0 : static_cast<double>(cells.size())) : 0.0};
    mpi.sum(head);
    if (head[0] < 0) return false;
    const auto count = static_cast<std::size_t>(head[0]);
    std::vector<double> body(4 * count, 0.0);
    if (root)
        for (std::size_t k = 0; k < count; ++k) {
            const CrossingCell& c = cells[k];
            body[4 * k] = c.source_round, body[4 * k + 1] = static_cast<double>(c.index);
            body[4 * k + 2] = static_cast<double>(c.n), body[4 * k + 3] = static_cast<double>(c.seed);
        }
    mpi.sum(body);
    if (!root) {
        cells.assign(count, CrossingCell{});
        for (std::size_t k = 0; k < count; ++k) {
            CrossingCell& c = cells[k];
            c.source_round = static_cast<int>(body[4 * k]), c.index = static_cast<std::size_t>(body[4 * k + 1]);
            c.n = static_cast<std::int64_t>(body[4 * k + 2]), c.seed = static_cast<std::uint64_t>(body[4 * k + 3]);
        }
    }
    return true;
}

/// The cells of a round's plan: a probe's from the grid's cell as written (`written`) at its n, more
/// seeds from the cell of that point as it ran (the grid's, `grid`, or an earlier round's).
std::vector<CellSpec> round_cells(const std::vector<CrossingCell>& plan, const std::vector<CellSpec>& written,
                                  const std::vector<CellSpec>& grid, const std::vector<CrossingRound>& rounds) {
    std::vector<CellSpec> out;
    out.reserve(plan.size());
    for (const auto& c : plan) {
        CellSpec cell = c.source_round < 0    ? written[c.index]
                        : c.source_round == 0 ? grid[c.index]
                                              : rounds[static_cast<std::size_t>(c.source_round - 1)].pipeline.cells()[c.index];
        if (c.source_round < 0) cell.n = c.n;
        cell.seed = c.seed;
        out.push_back(std::move(cell));
    }
    return out;
}

/// Makes `pipeline`'s choices on every rank; rank 0 keeps its tuning cells in the journal at
/// `path` (the format of the cells' journal; `journal_header` names what it belongs to), so a
/// resume computes only those not yet done.
void tune_journaled(Pipeline& pipeline, const std::string& path, const std::string& journal_header, bool root, int threads,
                    bool progress, const TuningShare& share) {
    std::unique_ptr<Journal> tuning_journal;
    TuningJournal keeper;
    if (root) {
        const std::size_t count = pipeline.races().index_count();
        std::error_code ec;
        if (count > 0) {
            std::string header = journal_header.substr(journal_header.find("config="));
            header = "memcap-tuning-journal 1 " + header.substr(0, header.size() - 1) + " indices=" + std::to_string(count) + "\n";
            std::string note;
            if (fs::exists(path, ec)) {
                tuning_journal = std::make_unique<Journal>(path, header, count, note);
                if (!note.empty()) std::cerr << "memcap: " << note << "\n";
            } else {
                tuning_journal = std::make_unique<Journal>(path, header, count);
            }
            keeper.find = [&](std::size_t i, double& accuracy, double& reads) {
                if (!tuning_journal->done(i)) return false;
                return std::sscanf(tuning_journal->rows(i).c_str(), "%lf %lf", &accuracy, &reads) == 2;
            };
            keeper.keep = [&](std::size_t i, double accuracy, double reads) {
                char line[64];
                std::snprintf(line, sizeof line, "%.17g %.17g\n", accuracy, reads);
                tuning_journal->append(i, line);
            };
        }
    }
    pipeline.tune(threads, progress && root, share, keeper);
    if (tuning_journal) tuning_journal->sync();
}

/// Rank 0: the cells each rank computed, for the user.
void assemble_note(const std::vector<std::size_t>& per_rank) {
    std::string line = "memcap: cells computed per rank:";
    for (std::size_t r = 0; r < per_rank.size(); ++r) line += " " + std::to_string(r) + ":" + std::to_string(per_rank[r]);
    std::cerr << line << "\n";
}

/// Rank 0's message and exit status for an interruption before every cell of `journal` was done.
int interrupted(const Journal& journal, std::size_t cells) {
    const int sig = stop_signal() ? stop_signal() : SIGINT;
    std::cerr << "memcap: " << (sig == SIGTERM ? "terminated" : "interrupted") << " with " << journal.done_count() << " of "
              << cells << " cells done (kept in " << journal.path() << "); run again with --resume to finish\n";
    return 128 + sig;
}

/// Rank 0: the crossing rounds after the grid (crossing.hpp), each planned from every result
/// before it, shared with the other ranks, tuned, computed and journaled. Returns 0, or 128 +
/// signal when interrupted (the rounds done so far are kept for --resume).
int run_crossing(const SweepOptions& o, const SweepPlan& p, const Journal& grid_journal, const std::vector<CellSpec>& written,
                 const MpiSession& mpi, int threads, const TuningShare& share, std::vector<CrossingRound>& rounds,
                 std::vector<std::size_t>& per_rank) {
    CrossingPlan plan(p.config.blocks, written);
    if (!plan.active()) {
        std::vector<CrossingCell> none;
        share_round(mpi, none, false);
        return 0;
    }
    for (std::size_t i = 0; i < p.cells().size(); ++i) plan.score(0, i, cell_score(grid_journal.rows(i)));
    const auto can_run = [](const CellSpec& cell) {
        try {
            Races races;
            check_cells({cell}, &races);
            return true;
        } catch (const UsageError&) {
            return false;
        }
    };
    bool stopped = false;
    try {
        while (true) {
            std::vector<CrossingCell> next = plan.next_round(can_run);
            share_round(mpi, next, false);
            if (next.empty()) break;
            const std::size_t r = rounds.size() + 1;
            CrossingRound round;
            round.plan = next;
            round.pipeline = Pipeline(round_cells(next, written, p.cells(), rounds));
            const std::size_t count = round.pipeline.cells().size();
            std::string encoded;
            for (const auto& c : next)
                encoded += std::to_string(c.source_round) + " " + std::to_string(c.index) + " " + std::to_string(c.n) + " " +
                           std::to_string(c.seed) + "\n";
            const std::string config = p.manifest["config"].dump();
            const std::string header = "memcap-journal 1 config=" + hex16(fnv1a(config.data(), config.size())) + " cells=" +
                                       std::to_string(count) + " crossing=" + std::to_string(r) +
                                       " plan=" + hex16(fnv1a(encoded.data(), encoded.size())) + "\n";
            const std::string path = p.csv_path + ".crossing-" + std::to_string(r);
            std::error_code ec;
            std::string note;
            round.journal = fs::exists(path, ec) ? std::make_unique<Journal>(path, header, count, note)
                                                 : std::make_unique<Journal>(path, header, count);
            if (!note.empty()) std::cerr << "memcap: " << note << "\n";
            tune_journaled(round.pipeline, path + ".tuning", header, true, threads, o.progress, share);
            const std::vector<std::size_t> todo = cells_left(round.pipeline.cells(), *round.journal);
            const auto done = compute(o, round.pipeline, "sweep " + p.config.name + " crossing " + std::to_string(r), *round.journal,
                                      todo, mpi, threads);
            for (std::size_t k = 0; k < done.size(); ++k) per_rank[k] += done[k];
            if (round.journal->done_count() < count) {
                stopped = true;
                std::vector<CrossingCell> none;
                share_round(mpi, none, true);
                return interrupted(*round.journal, count);
            }
            for (std::size_t i = 0; i < count; ++i) plan.score(r, i, cell_score(round.journal->rows(i)));
            rounds.push_back(std::move(round));
        }
    } catch (...) {
        if (!stopped) {
            std::vector<CrossingCell> none;
            share_round(mpi, none, true);
        }
        throw;
    }
    if (o.progress) {
        std::size_t cells = 0;
        for (const auto& r : rounds) cells += r.plan.size();
        std::cerr << "memcap: crossing: " << rounds.size() << (rounds.size() == 1 ? " round, " : " rounds, ") << cells
                  << " cells (" << plan.brackets() << " brackets, " << plan.probe_points() << " probe n)\n";
    }
    return 0;
}

/// Any other rank: the crossing rounds' cells as rank 0 plans them, until it says stop.
int crossing_worker(const SweepPlan& p, const std::vector<CellSpec>& written, const MpiSession& mpi, int threads,
                    const TuningShare& share) {
    std::vector<CrossingRound> rounds;
    while (true) {
        std::vector<CrossingCell> next;
        if (!share_round(mpi, next, false) || next.empty()) return stop_signal() ? 128 + stop_signal() : 0;
        CrossingRound round;
        round.plan = next;
        round.pipeline = Pipeline(round_cells(next, written, p.cells(), rounds));
        round.pipeline.tune(threads, false, share, {});
        mpi_work(mpi, round.pipeline.cells(), threads);
        rounds.push_back(std::move(round));
    }
}

/// Rank 0: the CSV (atomically) — the grid's cells in config order, then the crossing rounds'
/// ordered by block, group, n and seed — then the journals are removed.
void assemble(const SweepOptions& o, const SweepPlan& p, SweepOutputs& out, const std::vector<std::size_t>& per_rank,
              const std::vector<CrossingRound>& rounds) {
    if (per_rank.size() > 1 && o.progress) assemble_note(per_rank);
    std::vector<std::tuple<std::size_t, std::size_t, std::int64_t, std::uint64_t, std::size_t, std::size_t>> order;
    for (std::size_t r = 0; r < rounds.size(); ++r)
        for (std::size_t i = 0; i < rounds[r].plan.size(); ++i) {
            const CrossingCell& c = rounds[r].plan[i];
            order.emplace_back(c.block, c.group, c.n, c.seed, r, i);
        }
    std::sort(order.begin(), order.end());
    // Why each choice on tuning seeds won (tuning.hpp, race_rows): the grid's races, then each
    // crossing round's. Every rank runs every race on the same scores (and a resume replays
    // them from the tuning journals), so the file is the same at any thread or rank count. Written
    // before the CSV, whose presence marks the sweep complete.
    std::string races = race_rows(p.pipeline.races(), 0);
    for (std::size_t r = 0; r < rounds.size(); ++r) races += race_rows(rounds[r].pipeline.races(), static_cast<int>(r + 1));
    if (!races.empty()) {
        AtomicFile file(p.race_path);
        file.write(race_header());
        file.write(races);
        file.commit();
    }
    AtomicFile csv(p.csv_path);
    csv.write(cell_header());
    for (std::size_t i = 0; i < p.cells().size(); ++i) csv.write(out.journal->rows(i));
    for (const auto& [block, group, n, seed, r, i] : order) csv.write(rounds[r].journal->rows(i));
    csv.commit();
    const std::string curves = train::curves_csv();
    if (curves.find('\n') + 1 < curves.size()) {  // a run was trained: its curves beside the CSV
        if ((per_rank.size() > 1 || o.resume) && o.progress)
            std::cerr << "memcap: " << p.curves_path << " holds the runs this process trained"
                      << (per_rank.size() > 1 ? " (rank 0's cells only)" : " (not those of the cells run before --resume)") << '\n';
        AtomicFile file(p.curves_path);
        file.write(curves);
        file.commit();
    }
    out.journal.reset();
    std::error_code ec;
    fs::remove(p.journal_path, ec);
    fs::remove(p.tuning_path, ec);
    remove_crossing_files(p);
}

/// Runs `step` on rank 0 only, then makes every rank agree: a UsageError there is rethrown
/// on rank 0 and ends the other ranks with status 2 (returned as true).
template <class Step>
bool failed_on_root(const MpiSession& mpi, Step&& step) {
    std::string error;
    try {
        step();
    } catch (const UsageError& e) {
        error = e.what();
    }
    if (mpi.agree(error.empty() ? 0 : 1) == 0) return false;
    if (mpi.rank() != 0) return true;
    throw UsageError(error.empty() ? "the sweep failed to start on another MPI rank" : error);
}

}  // namespace

int run_sweep(const SweepOptions& o) {
    MpiSession mpi;
    const bool root = mpi.rank() == 0;
    SweepPlan plan;
    std::string error;
    try {
        plan = plan_sweep(o, mpi.size());  // on every rank: identical cells everywhere
    } catch (const UsageError& e) {
        error = e.what();
    }
    if (mpi.agree(error.empty() ? 0 : 1) != 0) {
        if (!root) return 2;
        throw UsageError(error.empty() ? "the config failed to load on another MPI rank" : error);
    }
    const int threads = o.threads.value_or(omp_get_max_threads());
    if (o.check) {  // plan_sweep built every cell and race: the config can run
        if (root)
            std::cout << "sweep " << plan.config.name << " (" << plan.config.path << "): config ok, " << plan.cells().size()
                      << " cells in " << plan.config.blocks.size() << (plan.config.blocks.size() == 1 ? " block, " : " blocks, ")
                      << plan.pipeline.races().size() << " groups choose on tuning seeds\n";
        return 0;
    }
    if (o.dry_run) {
        if (root) print_dry_run(plan, threads * mpi.size());
        return 0;
    }
    SweepOutputs out;
    if (failed_on_root(mpi, [&] { if (root) out = open_outputs(o, plan); })) return 2;
    if (mpi.agree(out.complete ? 1 : 0) != 0) {
        if (root) {
            std::error_code ec;
            fs::remove(plan.journal_path, ec);  // left over from a crash between writing the CSV and removing it
            fs::remove(plan.tuning_path, ec);
            remove_crossing_files(plan);
            std::cerr << "memcap: sweep already complete: " << plan.csv_path << "\n";
        }
        return 0;
    }

    // Choices (d = best, key = best) after the outputs are checked, so a finished sweep, an
    // existing output or an unwritable path costs no tuning. The tuning cells are shared out
    // over the ranks; every rank gets every score, so the same choices everywhere, and the
    // same as one process makes. The journal's header names the config, not the choices.
    // Rank 0 journals the tuning cells as they finish (NAME.csv.tuning, the same record format
    // and crash safety as the cells' journal), so a resume computes only those not yet done.
    TuningShare share{mpi.rank(), mpi.size(), [&](std::vector<double>& v) { mpi.sum(v); },
                      [&](int status) { return mpi.agree(status); }};
    try {
        tune_journaled(plan.pipeline, plan.tuning_path, plan.journal_header, root, threads, o.progress, share);
    } catch (const std::exception& e) {
        if (root && out.fresh) {  // nothing computed yet: leave no files behind
            out.journal.reset();
            std::error_code ec;
            fs::remove(plan.journal_path, ec), fs::remove(plan.manifest_path, ec), fs::remove(plan.tuning_path, ec);
        }
        if (root) throw;
        std::cerr << "memcap: error on MPI rank " << mpi.rank() << ": " << e.what() << "\n";
        return 2;
    }

    // Crossing rounds (crossing.hpp) follow the grid: their cells are planned on rank 0 from its
    // results, and made from the cells as written (a probe) or as they ran (more seeds).
    const bool crossing = has_crossing(plan.config);
    std::vector<CellSpec> written;
    if (crossing) written = plan.config.cells();
    StopSignals signals;
    if (!root) {
        mpi_work(mpi, plan.cells(), threads);
        if (crossing) return crossing_worker(plan, written, mpi, threads, share);
        return stop_signal() ? 128 + stop_signal() : 0;
    }
    std::vector<std::size_t> per_rank;
    try {
        per_rank = compute(o, plan.pipeline, "sweep " + plan.config.name, *out.journal, out.todo, mpi, threads);
    } catch (...) {
        std::vector<CrossingCell> none;
        if (crossing) share_round(mpi, none, true);
        throw;
    }
    if (out.journal->done_count() < plan.cells().size()) {
        std::vector<CrossingCell> none;
        if (crossing) share_round(mpi, none, true);
        if (per_rank.size() > 1 && o.progress) assemble_note(per_rank);
        return interrupted(*out.journal, plan.cells().size());
    }
    std::vector<CrossingRound> rounds;
    if (crossing)
        if (const int status = run_crossing(o, plan, *out.journal, written, mpi, threads, share, rounds, per_rank)) return status;
    assemble(o, plan, out, per_rank, rounds);
    return 0;
}

}  // namespace memcap
