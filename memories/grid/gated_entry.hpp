// memcap/memories/grid/gated_entry.hpp — what the entries of the gated grids share
// (retnet, gla, gated_deltanet, kda, rwkv7: memories/<name>/entry.cpp, all built on
// GatedGrid, grid/gated_grid.hpp).
#pragma once

#include "memories/grid/gated_grid.hpp"
#include "memories/grid/grid_entry.hpp"

namespace memcap {

/// A decay in (0, 1] (1 = none), with the candidates `best` races.
ParamInfo decay_param(const std::string& key, const std::string& def, const std::string& help,
                      std::vector<std::string> best);
/// The candidates of a per-channel spread's fastest decay: no decay, then fastest channels
/// whose memory spans about 100, 30, 10, 3 and 1.4 writes.
std::vector<std::string> channel_decay_candidates();
/// A write strength in (0, 2] (the delta rule contracts for 0 < b < 2), raced over delta's candidates.
ParamInfo strength_param(const std::string& key, const std::string& def, const std::string& help, double max = 2.0);
/// gate = salience | none: the step Δ from the task's declared salience feature, or always 1.
ParamInfo gate_param();
/// step = plain | longhorn: b = β, or β / (1 + β ‖φ‖²).
ParamInfo step_rule_param();

/// The entry every gated grid shares: sizing as `linear` (grid_size), its cost model, traits
/// (order-dependent; a backward pass); the caller sets name, description, params, paper and
/// `rule`, which reads a spec into GatedGrid::Rule.
MemoryEntry gated_grid_entry(std::function<GatedGrid::Rule(const Spec&)> rule);

}  // namespace memcap
