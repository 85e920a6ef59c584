// memcap/harness/eval/probe.hpp — the probe readout: the best linear read of a state.
//
// Fits a least-squares linear map from a memory's flat state on independent
// training episodes (Split::Train), then scores it on the task's test episodes.
// `train` counts the rows of the design: training episodes on tasks with slots
// (one state each, shared by every slot's map), training queries on tasks
// without (ceil(train / queries) episodes, one row per query):
//
//   tasks with slots (lag recall, copying): features [s, 1] → the one-hot of
//       the target token, one map per slot, all slots solved together from one
//       factorisation; the prediction is the arg-max token.
//   tasks without slots (associative recall): features [s, q, 1] → the target
//       value vector, one map for every query; the read is scored like a native
//       read (nearest candidate). A linear map of [s, q] cannot multiply state by
//       query, so a memory without content-addressing stays near chance here.
//
// Solver (Eigen LDLT, double precision): with P features and R training rows,
// the primal (XᵀX + λI) W = XᵀY when P ≤ R, the dual W = Xᵀ (XXᵀ + λI)⁻¹ Y when
// the state is wider than the training set; λ = ridge × mean diagonal of the
// Gram matrix (ridge = 1e-6 by default: ordinary least squares up to rounding
// when the design has full rank, finite when it does not). In the dual, when
// forming W would cost more than predicting through the kernel (wide states,
// many one-hot outputs), the test rows are predicted as x Xᵀ A with
// A = (XXᵀ + λI)⁻¹ Y, never forming W (the same map, other rounding).
#pragma once

#include "harness/eval/readout.hpp"

namespace memcap {

struct ProbeOptions {
    std::int64_t train_rows = 2000;  // see `train` above
    double ridge = 1e-6;
    /// In the dual: predict through W or through the kernel x Xᵀ A. `cheaper` (the
    /// default) picks by FLOPs; the others exist so tests can compare the two forms.
    enum class DualForm { cheaper, weights, kernel } dual_form = DualForm::cheaper;
};

/// Largest Gram matrix (either side) the probe builds: 8192² doubles = 512 MiB.
constexpr std::int64_t kProbeMaxGram = 8192;

CellOutcome probe_readout(Memory& memory, const Task& task, const TaskCell& cell, const ProbeOptions& options);

}  // namespace memcap
