// memcap/harness/probe.cpp — see probe.hpp.
#include "harness/probe.hpp"

#include <Eigen/Cholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace memcap {
namespace {

using MatD = Eigen::MatrixXd;

struct Design {
    MatD x, y;  // rows × P, rows × outputs
};

// One episode's feature rows: [s, 1] once (slots) or [s, q_i, 1] per query.
void append_rows(const Episode& e, ConstStateView s, bool slots, const std::map<int, int>& slot_index,
                 Eigen::Index row, Design& d, Eigen::Index max_rows = -1) {
    const Eigen::Index p = s.size();
    if (slots) {
        d.x.row(row).head(p) = s.cast<double>().transpose();
        d.x(row, p) = 1.0;
        const Eigen::Index c = e.candidates.rows();
        for (std::size_t i = 0; i < e.target.size(); ++i)
            d.y(row, slot_index.at(e.slot[i]) * c + e.target[i]) = 1.0;
        return;
    }
    const Eigen::Index count = max_rows < 0 ? e.queries.rows() : std::min(max_rows, e.queries.rows());
    for (Eigen::Index i = 0; i < count; ++i) {
        auto r = d.x.row(row + i);
        r.head(p) = s.cast<double>().transpose();
        r.segment(p, e.queries.cols()) = e.queries.row(i).cast<double>();
        r(r.size() - 1) = 1.0;
        d.y.row(row + i) = e.candidates.row(e.target[static_cast<std::size_t>(i)]).cast<double>();
    }
}

MatD solve_ridge(const MatD& x, const MatD& y, double ridge) {
    if (x.cols() <= x.rows()) {
        MatD g = x.transpose() * x;
        const double lambda = ridge * std::max(g.diagonal().mean(), 1e-300);
        g.diagonal().array() += lambda;
        return g.ldlt().solve(x.transpose() * y);
    }
    MatD k = x * x.transpose();
    const double lambda = ridge * std::max(k.diagonal().mean(), 1e-300);
    k.diagonal().array() += lambda;
    return x.transpose() * k.ldlt().solve(y);
}

CellOutcome failure(std::string message) {
    CellOutcome out;
    out.ok = false;
    out.message = std::move(message);
    return out;
}

}  // namespace

CellOutcome probe_readout(Memory& memory, const Task& task, const TaskCell& cell, const ProbeOptions& options) {
    const bool slots = task.has_slots();
    const std::int64_t train = options.train_rows;

    // The first training episode fixes the shapes.
    Episode first = task.episode(cell, Split::Train, 0);
    memory.reset();
    memory.write_batch(first.keys, first.values);
    const Eigen::Index p = memory.state_floats();
    const Eigen::Index per_episode = slots ? 1 : first.queries.rows();
    const Eigen::Index features = p + (slots ? 0 : first.queries.cols()) + 1;
    const Eigen::Index rows = train;  // one per episode (slots), one per query (no slots)
    const std::int64_t episodes = (train + per_episode - 1) / per_episode;
    if (std::min(features, rows) > kProbeMaxGram)
        return failure("probe: " + std::to_string(features) + " features x " + std::to_string(rows) +
                       " training rows exceeds the " + std::to_string(kProbeMaxGram) +
                       "-square Gram limit; lower probe:train or the budget");
    std::map<int, int> slot_index;
    for (int s : first.slot)
        if (!slot_index.count(s)) slot_index.emplace(s, static_cast<int>(slot_index.size()));
    const Eigen::Index c = first.candidates.rows();
    const Eigen::Index outputs = slots ? static_cast<Eigen::Index>(slot_index.size()) * c : first.candidates.cols();

    Design d{MatD::Zero(rows, features), MatD::Zero(rows, outputs)};
    for (std::int64_t ep = 0; ep < episodes; ++ep) {
        if (ep > 0) {
            first = task.episode(cell, Split::Train, ep);
            memory.reset();
            memory.write_batch(first.keys, first.values);
        }
        if (memory.state_floats() != p) return failure("probe: the state size changes between episodes");
        append_rows(first, memory.state(), slots, slot_index, ep * per_episode, d, rows - ep * per_episode);
    }
    if (!d.x.allFinite()) return failure("probe: non-finite state in a training episode");
    const MatD w = solve_ridge(d.x, d.y, options.ridge);
    if (!w.allFinite()) return failure("probe: the least-squares solve gave non-finite weights");

    CellOutcome out;
    std::vector<SlotScore> by_slot;
    for (std::int64_t index = 0; index < task.test_episodes(cell); ++index) {
        const Episode e = task.episode(cell, Split::Test, index);
        memory.reset();
        memory.write_batch(e.keys, e.values);
        Design t{MatD::Zero(per_episode, features), MatD::Zero(per_episode, outputs)};
        append_rows(e, memory.state(), slots, slot_index, 0, t);
        const MatD pred = t.x * w;
        if (!pred.allFinite()) return failure("probe: non-finite prediction in test episode " + std::to_string(index));
        if (!slots) {
            const RowMat reads = pred.cast<float>();
            if (!reads.allFinite())
                return failure("probe: prediction beyond float range in test episode " + std::to_string(index));
            score_reads(e, reads, by_slot);
            continue;
        }
        for (std::size_t i = 0; i < e.target.size(); ++i) {
            const int slot = e.slot[i];
            Eigen::Index best;
            pred.row(0).segment(slot_index.at(slot) * c, c).maxCoeff(&best);
            if (static_cast<std::size_t>(slot + 1) >= by_slot.size()) by_slot.resize(static_cast<std::size_t>(slot + 2));
            SlotScore& s = by_slot[static_cast<std::size_t>(slot + 1)];
            s.slot = slot;
            s.queries += 1;
            s.correct += (best == e.target[i]);
            s.target_dist_sum = std::numeric_limits<double>::quiet_NaN();  // no read vector to measure
        }
        out.state_floats = std::max<std::int64_t>(out.state_floats, memory.state_floats());
    }
    out.state_floats = std::max<std::int64_t>(out.state_floats, p);
    for (const auto& s : by_slot)
        if (s.queries > 0) out.slots.push_back(s);
    out.param_floats = memory.param_floats();
    return out;
}

}  // namespace memcap
