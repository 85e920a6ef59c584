// memcap/harness/eval/probe.cpp — see probe.hpp.
#include "harness/eval/probe.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <limits>

namespace memcap {
namespace {

using MatD = Eigen::MatrixXd;
using RowMatD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;  // predictions: a row per design row

// The design of a fit or a test chunk: feature rows, and the targets as either dense
// rows (value vectors, slot-free tasks) or, with slots, the one-hot column of each
// (row, slot) pair: Y is never formed for slot tasks (XᵀY is a scatter of rows).
struct Design {
    MatD x;                   // rows × P
    MatD y;                   // rows × outputs (slot-free tasks only)
    std::vector<int> hot;     // rows × slots one-hot columns (slot tasks only), row-major
    Eigen::Index slots = 0;   // one-hot columns per row
};

// One episode's feature rows: [s, 1] once (slots) or [s, q_i, 1] per query.
void append_rows(const Episode& e, ConstStateView s, bool slots, const std::vector<int>& slot_index,
                 Eigen::Index row, Design& d, Eigen::Index max_rows = -1) {
    const Eigen::Index p = s.size();
    if (slots) {
        d.x.row(row).head(p) = s.cast<double>().transpose();
        d.x(row, p) = 1.0;
        const auto c = static_cast<int>(e.candidates.rows());
        for (std::size_t i = 0; i < e.target.size(); ++i)
            d.hot[static_cast<std::size_t>(row * d.slots) + i] = slot_index[static_cast<std::size_t>(e.slot[i])] * c + e.target[i];
        return;
    }
    // The rows [s, q_i, 1] of the episode's queries, written a column at a time (x is
    // column-major: a row would be p stores a column apart), the same values.
    const Eigen::Index count = max_rows < 0 ? e.queries.rows() : std::min(max_rows, e.queries.rows());
    const Eigen::Index q = e.queries.cols();
    for (Eigen::Index j = 0; j < p; ++j) d.x.col(j).segment(row, count).setConstant(static_cast<double>(s(j)));
    d.x.block(row, p, count, q) = e.queries.topRows(count).cast<double>();
    d.x.col(p + q).segment(row, count).setOnes();
    for (Eigen::Index i = 0; i < count; ++i)
        d.y.row(row + i) = e.candidates.row(e.target[static_cast<std::size_t>(i)]).cast<double>();
}

// Dense targets of a slot design (the dual solve needs Y itself).
MatD one_hot(const Design& d, Eigen::Index outputs) {
    MatD y = MatD::Zero(d.x.rows(), outputs);
    for (Eigen::Index r = 0; r < d.x.rows(); ++r)
        for (Eigen::Index i = 0; i < d.slots; ++i) y(r, d.hot[static_cast<std::size_t>(r * d.slots + i)]) += 1.0;  // as the scatter
    return y;
}

/// Whether every one of the n doubles at p is finite (x − x is 0 for a finite x, NaN otherwise).
bool all_finite(const double* p, Eigen::Index n) {
    double acc = 0.0;
#pragma omp simd reduction(+ : acc)
    for (Eigen::Index i = 0; i < n; ++i) acc += p[i] - p[i];
    return acc == 0.0;
}

// The fitted linear map. Primal: prediction = x W. Dual: W = Xᵀ A with
// A = (X Xᵀ + λI)⁻¹ Y; when the state is wide and the outputs many, forming W
// (2·P·R·O FLOPs) costs more than predicting through the kernel, x Xᵀ A
// (2·T·R·(P + O) for T test rows), so A is kept instead.
struct Fit {
    MatD w;  // P × outputs, or empty (kernel form)
    MatD a;  // training rows × outputs in the kernel form, else empty
    bool finite() const { return all_finite(w.data(), w.size()) && all_finite(a.data(), a.size()); }
};

Fit solve_ridge(const Design& d, Eigen::Index outputs, double ridge, Eigen::Index test_rows, ProbeOptions::DualForm form) {
    const MatD& x = d.x;
    const bool sparse = d.slots > 0;
    if (x.cols() <= x.rows()) {
        MatD g(x.cols(), x.cols());
        g.setZero();
        g.selfadjointView<Eigen::Lower>().rankUpdate(x.transpose());
        g.triangularView<Eigen::StrictlyUpper>() = g.transpose();
        const double lambda = ridge * std::max(g.diagonal().mean(), 1e-300);
        g.diagonal().array() += lambda;
        MatD xty;
        if (sparse) {  // XᵀY = Σ_r x_r e_hot(r)ᵀ: column o is the sum of the rows r whose hot entries name o
            // The rows of each column are added in increasing r, as a scatter over r would
            // add them, but into one column held in cache instead of all the columns at once.
            xty = MatD::Zero(x.cols(), outputs);
            const MatD xt = x.transpose();
            std::vector<Eigen::Index> start(static_cast<std::size_t>(outputs) + 1, 0), rows(d.hot.size());
            for (int o : d.hot) ++start[static_cast<std::size_t>(o) + 1];
            for (std::size_t o = 0; o < static_cast<std::size_t>(outputs); ++o) start[o + 1] += start[o];
            std::vector<Eigen::Index> next(start.begin(), start.end() - 1);
            for (Eigen::Index r = 0, h = 0; r < x.rows(); ++r)
                for (Eigen::Index i = 0; i < d.slots; ++i, ++h)
                    rows[static_cast<std::size_t>(next[static_cast<std::size_t>(d.hot[static_cast<std::size_t>(h)])]++)] = r;
            // A block of features at a time is summed in registers (eight of the build's SIMD
            // packets, from Eigen), the rows ahead prefetched (their order is data-dependent);
            // the features after the last whole block are summed in memory.
            constexpr Eigen::Index kBlock = 8 * Eigen::internal::packet_traits<double>::size;
            constexpr Eigen::Index kAhead = 8;
            using Block = Eigen::Array<double, kBlock, 1>;
            const Eigen::Index p = x.cols(), whole = p / kBlock * kBlock;
            const auto row = [&](Eigen::Index k) { return xt.data() + rows[static_cast<std::size_t>(k)] * p; };
            Eigen::ArrayXd rest(p - whole);
            for (Eigen::Index o = 0; o < outputs; ++o) {
                const Eigen::Index first = start[static_cast<std::size_t>(o)], last = start[static_cast<std::size_t>(o) + 1];
                for (Eigen::Index b = 0; b < whole; b += kBlock) {
                    Block sum = Block::Zero();
                    for (Eigen::Index k = first; k < last; ++k) {
                        if (k + kAhead < last)
                            for (Eigen::Index line = 0; line < kBlock; line += 8) __builtin_prefetch(row(k + kAhead) + b + line);
                        sum += Eigen::Map<const Block>(row(k) + b);
                    }
                    Eigen::Map<Block>(xty.col(o).data() + b) = sum;
                }
                if (whole == p) continue;
                rest.setZero();
                for (Eigen::Index k = first; k < last; ++k) rest += Eigen::Map<const Eigen::ArrayXd>(row(k) + whole, p - whole);
                xty.col(o).tail(p - whole) = rest.matrix();
            }
        } else {
            xty = x.transpose() * d.y;
        }
        return Fit{g.llt().solve(xty), MatD()};
    }
    MatD k(x.rows(), x.rows());
    k.setZero();
    k.selfadjointView<Eigen::Lower>().rankUpdate(x);
    k.triangularView<Eigen::StrictlyUpper>() = k.transpose();
    const double lambda = ridge * std::max(k.diagonal().mean(), 1e-300);
    k.diagonal().array() += lambda;
    MatD a = k.llt().solve(sparse ? one_hot(d, outputs) : d.y);
    const double p = double(x.cols()), r = double(x.rows()), o = double(outputs), t = double(test_rows);
    const bool kernel = form == ProbeOptions::DualForm::cheaper ? 2 * t * r * (p + o) < 2 * p * r * o + 2 * t * p * o
                                                                : form == ProbeOptions::DualForm::kernel;
    if (kernel) return Fit{MatD(), std::move(a)};
    return Fit{x.transpose() * a, MatD()};
}

CellOutcome failure(std::string message) {
    CellOutcome out;
    out.ok = false;
    out.message = std::move(message);
    return out;
}

/// The probe's design, fixed by the first training episode: feature and output
/// layout, and each slot's block of one-hot columns.
struct Layout {
    bool slots = false;
    Eigen::Index p = 0;            // state floats
    Eigen::Index per_episode = 0;  // design rows per episode: 1 (slots) or the queries
    Eigen::Index features = 0, rows = 0, outputs = 0;
    Eigen::Index c = 0;              // candidates
    Eigen::Index per_row_slots = 0;  // targets per episode (slot tasks)
    std::vector<int> slot_index;     // slot → its block of one-hot columns, in order of first appearance

    Design make_design(Eigen::Index n) const {
        Design d;
        d.x = MatD::Zero(n, features);
        if (slots) d.slots = per_row_slots, d.hot.assign(static_cast<std::size_t>(n * per_row_slots), 0);
        else d.y = MatD::Zero(n, outputs);
        return d;
    }
    bool same_slots(const Episode& e) const {
        if (!slots) return true;
        if (static_cast<Eigen::Index>(e.target.size()) != per_row_slots) return false;
        for (int s : e.slot)
            if (s < 0 || static_cast<std::size_t>(s) >= slot_index.size() || slot_index[static_cast<std::size_t>(s)] < 0) return false;
        return true;
    }
};

/// Writes the episode into a freshly reset memory.
void load(Memory& memory, const Episode& e) {
    memory.reset();
    memory.write_batch(e.keys, e.values);
}

/// The layout from the first training episode (already written into `memory`); a message when the probe cannot run.
std::string make_layout(const Memory& memory, const Episode& first, bool slots, std::int64_t train, Layout& l) {
    l.slots = slots;
    l.p = memory.state_floats();
    l.per_episode = slots ? 1 : first.queries.rows();
    l.features = l.p + (slots ? 0 : first.queries.cols()) + 1;
    l.rows = train;  // one per episode (slots), one per query (no slots)
    if (std::min(l.features, l.rows) > kProbeMaxGram)
        return "probe: " + std::to_string(l.features) + " features x " + std::to_string(l.rows) +
               " training rows exceeds the " + std::to_string(kProbeMaxGram) +
               "-square Gram limit; lower probe:train or the budget";
    int slots_seen = 0;
    for (int s : slots ? first.slot : std::vector<int>{}) {
        if (s < 0) return "probe: negative slot " + std::to_string(s);
        if (static_cast<std::size_t>(s) >= l.slot_index.size()) l.slot_index.resize(static_cast<std::size_t>(s) + 1, -1);
        if (l.slot_index[static_cast<std::size_t>(s)] < 0) l.slot_index[static_cast<std::size_t>(s)] = slots_seen++;
    }
    l.c = first.candidates.rows();
    l.outputs = slots ? static_cast<Eigen::Index>(slots_seen) * l.c : first.candidates.cols();
    l.per_row_slots = static_cast<Eigen::Index>(first.target.size());
    return "";
}

/// Fits the map on the training episodes; a message when it cannot be fitted.
std::string fit_probe(Memory& memory, const Task& task, const TaskCell& cell, const ProbeOptions& options, Episode& e,
                      const Layout& l, Design& d, Fit& fit) {
    const std::int64_t episodes = (l.rows + l.per_episode - 1) / l.per_episode;
    d = l.make_design(l.rows);
    for (std::int64_t ep = 0; ep < episodes; ++ep) {
        if (ep > 0) {
            task.fill_episode(cell, Split::Train, ep, e);
            load(memory, e);
        }
        if (memory.state_floats() != l.p) return "probe: the state size changes between episodes";
        if (!l.same_slots(e)) return "probe: the slots change between episodes";
        append_rows(e, memory.state(), l.slots, l.slot_index, ep * l.per_episode, d, l.rows - ep * l.per_episode);
    }
    if (!all_finite(d.x.data(), d.x.size())) return "probe: non-finite state in a training episode";
    fit = solve_ridge(d, l.outputs, options.ridge, task.test_episodes(cell) * l.per_episode, options.dual_form);
    if (!fit.finite()) return "probe: the least-squares solve gave non-finite weights";
    return "";
}

/// Adds a slot task's predictions (one row per episode) into per-slot scores: the arg-max token.
void score_slots(const Layout& l, const RowMatD& pred, std::int64_t count, const std::vector<int>& targets,
                 const std::vector<int>& slots, std::vector<SlotScore>& by_slot) {
    for (std::int64_t k = 0; k < count; ++k)
        for (Eigen::Index i = 0; i < l.per_row_slots; ++i) {
            const auto at = static_cast<std::size_t>(k * l.per_row_slots + i);
            const int slot = slots[at], target = targets[at];
            Eigen::Index best;
            pred.row(k).segment(l.slot_index[static_cast<std::size_t>(slot)] * l.c, l.c).maxCoeff(&best);
            if (static_cast<std::size_t>(slot + 1) >= by_slot.size()) by_slot.resize(static_cast<std::size_t>(slot + 2));
            SlotScore& s = by_slot[static_cast<std::size_t>(slot + 1)];
            s.slot = slot;
            s.queries += 1;
            s.correct += (best == target);
            s.target_dist_sum = std::numeric_limits<double>::quiet_NaN();  // no read vector to measure
            s.target_cos_sum = std::numeric_limits<double>::quiet_NaN();
        }
}

/// Scores the test episodes in chunks of about kChunkRows rows: one GEMM per chunk.
/// Returns a message when a prediction is not finite.
std::string score_probe(Memory& memory, const Task& task, const TaskCell& cell, const Layout& l, const Design& d,
                        const Fit& fit, std::vector<SlotScore>& by_slot) {
    constexpr Eigen::Index kChunkRows = 256;
    const std::int64_t tests = task.test_episodes(cell);
    const auto chunk_episodes = std::max<std::int64_t>(1, kChunkRows / l.per_episode);
    // Slot-free tasks keep each chunk's episodes (score_reads needs their candidates);
    // slot tasks keep only each episode's targets and slots, so one Episode is refilled.
    std::vector<Episode> chunk(static_cast<std::size_t>(l.slots ? 1 : std::min(chunk_episodes, tests)));
    std::vector<int> chunk_target, chunk_slot;  // slot tasks: per_row_slots entries per episode
    Design t = l.make_design(std::min(chunk_episodes, tests) * l.per_episode);  // reused: every row is rewritten
    RowMatD pred;
    for (std::int64_t begin = 0; begin < tests; begin += chunk_episodes) {
        const std::int64_t count = std::min(chunk_episodes, tests - begin);
        chunk_target.clear();
        chunk_slot.clear();
        for (std::int64_t k = 0; k < count; ++k) {
            Episode& e = chunk[l.slots ? 0 : static_cast<std::size_t>(k)];
            task.fill_episode(cell, Split::Test, begin + k, e);
            load(memory, e);
            if (memory.state_floats() != l.p) return "probe: the state size changes between episodes";
            if (!l.same_slots(e) || e.queries.rows() != (l.slots ? e.queries.rows() : l.per_episode))
                return "probe: the episode shape changes between episodes";
            append_rows(e, memory.state(), l.slots, l.slot_index, k * l.per_episode, t);
            chunk_target.insert(chunk_target.end(), e.target.begin(), e.target.end());
            chunk_slot.insert(chunk_slot.end(), e.slot.begin(), e.slot.end());
        }
        if (fit.a.size()) pred.noalias() = (t.x.topRows(count * l.per_episode) * d.x.transpose()) * fit.a;  // x Xᵀ A
        else pred.noalias() = t.x.topRows(count * l.per_episode) * fit.w;
        if (!all_finite(pred.data(), pred.size()))
            for (std::int64_t k = 0; k < count; ++k)  // name the first episode with a non-finite prediction
                if (!pred.middleRows(k * l.per_episode, l.per_episode).allFinite())
                    return "probe: non-finite prediction in test episode " + std::to_string(begin + k);
        if (l.slots) {
            score_slots(l, pred, count, chunk_target, chunk_slot, by_slot);
            continue;
        }
        for (std::int64_t k = 0; k < count; ++k) {
            const RowMat reads = pred.middleRows(k * l.per_episode, l.per_episode).cast<float>();
            if (!reads.allFinite()) return "probe: prediction beyond float range in test episode " + std::to_string(begin + k);
            score_reads(chunk[static_cast<std::size_t>(k)], reads, by_slot);
        }
    }
    return "";
}

}  // namespace

CellOutcome probe_readout(Memory& memory, const Task& task, const TaskCell& cell, const ProbeOptions& options) {
    Episode e = task.episode(cell, Split::Train, 0);  // the first training episode fixes the shapes
    load(memory, e);
    Layout layout;
    Design design;
    Fit fit;
    std::vector<SlotScore> by_slot;
    std::string failed = make_layout(memory, e, task.has_slots(), options.train_rows, layout);
    if (failed.empty()) failed = fit_probe(memory, task, cell, options, e, layout, design, fit);
    if (failed.empty()) failed = score_probe(memory, task, cell, layout, design, fit, by_slot);
    if (!failed.empty()) return failure(std::move(failed));
    CellOutcome out;
    out.state_floats = layout.p;
    for (const auto& s : by_slot)
        if (s.queries > 0) out.slots.push_back(s);
    out.param_floats = memory.param_floats();
    return out;
}

}  // namespace memcap
