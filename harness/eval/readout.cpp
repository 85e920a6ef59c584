// memcap/harness/eval/readout.cpp — see readout.hpp.
#include "harness/eval/readout.hpp"

#include "core/error.hpp"
#include "harness/eval/probe.hpp"
#include "memories/registry.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace memcap {

namespace {

std::vector<ReadoutEntry> build_registry() {
    const std::vector<ParamInfo> probe = {
        int_param("train", "2000", "rows of the least-squares fit: training episodes (tasks with slots) or training queries (assoc_recall)", 1, 1e7),
        real_param("ridge", "1e-06", "ridge, relative to the mean diagonal of the Gram matrix", 0.0)};
    const auto score_probe = [](Memory& m, const Task& t, const TaskCell& c, const Spec& r) {
        return probe_readout(m, t, c, ProbeOptions{r.integer("train"), r.real("ridge")});
    };
    const auto score_native = [](Memory& m, const Task& t, const TaskCell& c, const Spec&) { return native_readout(m, t, c); };
    return {
        {"auto", "native where the memory has a meaningful read, the probe otherwise (its train and ridge)", probe, {}, false},
        {"native", "the memory's own read, scored by the nearest candidate", {}, score_native, true},
        {"probe", "a least-squares linear map from the flat state to the target", probe, score_probe, false},
    };
}

}  // namespace

const std::vector<ReadoutEntry>& readout_registry() {
    static const std::vector<ReadoutEntry> registry = build_registry();
    return registry;
}

const ReadoutEntry& find_readout(const std::string& name) {
    std::string known;
    for (const auto& e : readout_registry()) {
        if (e.name == name) return e;
        known += (known.empty() ? "" : ", ") + e.name;
    }
    throw UsageError("unknown readout '" + name + "' (known: " + known + ")");
}

Spec parse_readout_spec(const std::string& text) {
    const RawSpec raw = split_spec(text, "readout");
    return bind_spec(find_readout(raw.name).schema(), raw);
}

Spec resolve_readout(const Spec& readout, const std::string& memory_name) {
    if (readout.name() != "auto") return readout;
    if (find_memory(memory_name).native_read) return bind_spec(find_readout("native").schema(), RawSpec{"native", {}});
    return bind_spec(find_readout("probe").schema(),
                     RawSpec{"probe", {{"train", readout.text("train")}, {"ridge", readout.text("ridge")}}});
}

namespace {

/// The index of the smallest of `scores` (ties: the lowest index), as the loop
/// `if (s[j] < best) best = j` finds it. Without NaNs that is the first index holding the
/// minimum, found with two vectorised passes instead of one compare-and-move chain per
/// candidate; with a NaN (a huge read can overflow its dots) it runs that loop itself.
Eigen::Index first_min(const Eigen::Ref<const Eigen::ArrayXf>& scores) {
    if (scores.isNaN().any()) {
        Eigen::Index best = 0;
        for (Eigen::Index j = 1; j < scores.size(); ++j)
            if (scores(j) < scores(best)) best = j;
        return best;
    }
    const float low = scores.minCoeff();
    Eigen::Index j = 0;
    while (!(scores(j) == low)) ++j;  // -0 == +0, as `<` treats them
    return j;
}

/// Σ x_j² in double, in index order from the first term: what Eigen's
/// x.cast<double>().squaredNorm() of a non-vectorised row computes; and the same for
/// Σ r_j c_j and Σ c_j². One pass, three independent sums (the same bits, no chain
/// waiting on another).
struct TargetSums {
    double rr, cc, rc;
};
TargetSums target_sums(const float* r, const float* c, Eigen::Index d) {
    TargetSums s{double(r[0]) * double(r[0]), double(c[0]) * double(c[0]), double(r[0]) * double(c[0])};
    for (Eigen::Index j = 1; j < d; ++j) {
        const double x = r[j], y = c[j];
        s.rr += x * x, s.cc += y * y, s.rc += x * y;
    }
    return s;
}

}  // namespace

void score_reads(const Episode& e, ConstMatRef reads, std::vector<SlotScore>& by_slot, std::size_t first,
                 std::vector<Decision>* decisions) {
    // argmin_j ‖r − c_j‖² = argmin_j (‖c_j‖² − 2 r·c_j); ties go to the lower index.
    const RowMat dots = reads * e.candidates.transpose();
    const Vec sq = e.candidates.rowwise().squaredNorm();
    Eigen::ArrayXf scores(dots.cols());
    for (Eigen::Index i = 0; i < reads.rows(); ++i) {
        scores = sq.array() - 2.0f * dots.row(i).transpose().array();
        const Eigen::Index best = first_min(scores);
        const std::size_t q = first + static_cast<std::size_t>(i);
        const int target = e.target[q];
        if (target < 0) {  // a key never written: only its decision statistic counts
            if (decisions) decisions->push_back({dots(i, best), Decision::Absent});
            continue;
        }
        if (decisions) decisions->push_back({dots(i, best), best == target ? Decision::PresentRight : Decision::PresentWrong});
        const int slot = e.slot[q];
        if (static_cast<std::size_t>(slot + 1) >= by_slot.size()) by_slot.resize(static_cast<std::size_t>(slot + 2));
        SlotScore& s = by_slot[static_cast<std::size_t>(slot + 1)];
        s.slot = slot;
        s.queries += 1;
        s.correct += (best == target);
        // ‖r − c‖ in float overflows for |r| beyond ~1e19; redo those in double, so a huge
        // but finite read gives a huge but finite distance (never a silent inf in the CSV)
        const float dist = (reads.row(i) - e.candidates.row(target)).norm();
        s.target_dist_sum += std::isfinite(dist) ? static_cast<double>(dist)
                                                 : (reads.row(i).cast<double>() - e.candidates.row(target).cast<double>()).norm();
        const TargetSums t = target_sums(reads.row(i).data(), e.candidates.row(target).data(), reads.cols());
        const double norms = std::sqrt(t.rr) * std::sqrt(t.cc);
        s.target_cos_sum += norms > 0.0 ? t.rc / norms : 0.0;
    }
}

namespace {

/// The last test episode this thread filled, and what names it. Episodes depend only
/// on (task spec, n, d, seed, split, index), never on the memory (tasks/task.hpp), so
/// the next cell of a group of cells that differ only in the memory (run_cells_unordered
/// runs such a group on one thread, one cell after the other) reads it as it is
/// instead of drawing it again: the same bytes, without the work.
struct LastEpisode {
    std::string task;
    TaskCell cell;
    std::int64_t index = -1;  // -1: names nothing (not yet filled, or a fill failed)
    Episode episode;           // reused: fill_episode keeps its buffers

    const Episode& get(const Task& t, const TaskCell& c, std::int64_t i) {
        if (t.key_training()) {  // its episodes depend on the keys trained through this cell's memory
            index = -1;
            t.fill_episode(c, Split::Test, i, episode);
            return episode;
        }
        if (index == i && cell.n == c.n && cell.d == c.d && cell.seed == c.seed && task == t.spec().canonical())
            return episode;
        index = -1;
        t.fill_episode(c, Split::Test, i, episode);
        task = t.spec().canonical(), cell = c, index = i;
        return episode;
    }
    /// Lets go of an episode too large to keep between cells (its memory is not counted in
    /// any cell's estimated peak): the next cell draws it again.
    void trim() {
        const auto floats = episode.keys.size() + episode.values.size() + episode.queries.size() + episode.candidates.size();
        if (floats > kKeptFloats) episode = Episode{}, index = -1;
    }
    static constexpr Eigen::Index kKeptFloats = Eigen::Index{16} << 20;  // 64 MiB
};

thread_local LastEpisode last_episode;

}  // namespace

CellOutcome native_readout(Memory& memory, const Task& task, const TaskCell& cell) {
    CellOutcome out;
    std::vector<SlotScore> by_slot;
    RowMat reads, next;
    const int hops = task.hops();
    std::vector<Decision>* decisions = task.has_absent() ? &out.decisions : nullptr;
    for (std::int64_t index = 0; index < task.test_episodes(cell); ++index) {
        const Episode& e = last_episode.get(task, cell, index);
        memory.reset();
        memory.write_batch(e.keys, e.values);
        const Eigen::Index m = e.queries.rows();
        for (int hop = 0; hop < hops; ++hop) {  // one round for one-shot tasks
            reads.resize(m, e.candidates.cols());
            memory.read_batch(hop == 0 ? e.queries : next, reads, ReadOptions{e.hidden});
            if (!reads.allFinite()) {
                out.ok = false;
                out.message = "non-finite read in episode " + std::to_string(index) +
                              (hops > 1 ? " at hop " + std::to_string(hop + 1) : std::string());
                last_episode.trim();
                return out;
            }
            score_reads(e, reads, by_slot, static_cast<std::size_t>(hop) * static_cast<std::size_t>(m), decisions);
            if (hop + 1 < hops) task.next_queries(e, reads, next);
        }
        out.state_floats = std::max(out.state_floats, memory.state_floats());
    }
    last_episode.trim();
    for (const auto& s : by_slot)
        if (s.queries > 0) out.slots.push_back(s);
    out.param_floats = memory.param_floats();
    return out;
}

}  // namespace memcap
