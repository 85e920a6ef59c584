// memcap/harness/eval/key_training.cpp — see key_training.hpp.
#include "harness/eval/key_training.hpp"

#include <cmath>
#include <stdexcept>

namespace memcap {

TrainedKeys train_keys(Memory& memory, Task& task, const TaskCell& cell) {
    const auto settings = task.key_training();
    if (!settings) throw std::logic_error("train_keys: task '" + task.spec().canonical() + "' has no learned keys");
    TrainedKeys out;
    out.table = task.initial_key_table(cell);
    RowMat& table = out.table;
    RowMat m1 = RowMat::Zero(table.rows(), table.cols()), m2 = m1, grad = m1;
    constexpr double kBeta1 = 0.9, kBeta2 = 0.999, kEps = 1e-8;
    const double inv_temp = 1.0 / settings->temperature;

    Episode e;
    RowMat reads, logits, d_reads, d_keys, d_queries;
    for (std::int64_t step = 0; step < settings->steps; ++step) {
        task.set_key_table(cell, table);
        task.fill_episode(cell, Split::Train, step, e);
        memory.reset();
        memory.write_batch(e.keys, e.values);
        const Eigen::Index m = e.queries.rows();
        reads.resize(m, e.candidates.cols());
        memory.read_batch(e.queries, reads);

        // logits −‖r − c_j‖²/τ, up to a constant per query: (2 r·c_j − ‖c_j‖²)/τ
        logits.noalias() = reads * e.candidates.transpose();
        const Vec sq = e.candidates.rowwise().squaredNorm();
        double loss = 0.0;
        for (Eigen::Index i = 0; i < m; ++i) {
            auto row = logits.row(i);
            row = ((2.0f * row - sq.transpose()) * static_cast<float>(inv_temp)).eval();
            const float peak = row.maxCoeff();
            const int target = e.target[static_cast<std::size_t>(i)];
            const double margin = static_cast<double>(row(target)) - peak;  // log-sum-exp: no log(0)
            row = (row.array() - peak).exp();
            const double total = row.sum();
            loss += std::log(total) - margin;
            row /= static_cast<float>(total);  // p
            row(target) -= 1.0f;               // p − y
        }
        loss /= static_cast<double>(m);
        if (step == 0) out.first_loss = loss;
        out.last_loss = loss;
        // ∂L/∂r_i = (2/(τ m)) Σ_j (p − y)_ij c_j
        d_reads.noalias() = logits * e.candidates;
        d_reads *= static_cast<float>(2.0 * inv_temp / static_cast<double>(m));
        d_keys.resize(e.keys.rows(), e.keys.cols());
        d_queries.resize(m, e.queries.cols());
        memory.backward(e.keys, e.values, e.queries, d_reads, d_keys, d_queries);

        // queries: q = unit(u), u = k_target + σ z  →  ∂u = (I − q qᵀ) ∂q / |u|, added to the key's
        for (Eigen::Index i = 0; i < m; ++i) {
            const auto q = e.queries.row(i);
            const float norm = e.query_norm[static_cast<std::size_t>(i)];
            d_keys.row(e.target[static_cast<std::size_t>(i)]) += (d_queries.row(i) - q.dot(d_queries.row(i)) * q) / norm;
        }
        // keys: k = unit(E_s)  →  ∂E_s = (I − k kᵀ) ∂k / |E_s|
        grad.setZero();
        for (Eigen::Index i = 0; i < e.keys.rows(); ++i) {
            const int s = e.key_symbol[static_cast<std::size_t>(i)];
            const float norm = table.row(s).norm();
            const auto k = e.keys.row(i);
            grad.row(s) += (d_keys.row(i) - k.dot(d_keys.row(i)) * k) / norm;
        }
        if (!std::isfinite(loss) || !grad.allFinite()) {
            out.ok = false;
            out.message = "non-finite " + std::string(std::isfinite(loss) ? "gradient" : "loss") +
                          " while training the keys, at step " + std::to_string(step);
            return out;
        }
        // Adam, bias-corrected
        const double t = static_cast<double>(step + 1);
        const auto lr = static_cast<float>(settings->lr * std::sqrt(1.0 - std::pow(kBeta2, t)) / (1.0 - std::pow(kBeta1, t)));
        m1 = static_cast<float>(kBeta1) * m1 + static_cast<float>(1.0 - kBeta1) * grad;
        m2 = static_cast<float>(kBeta2) * m2 + static_cast<float>(1.0 - kBeta2) * grad.cwiseAbs2();
        table.array() -= lr * m1.array() / (m2.array().sqrt() + static_cast<float>(kEps));
    }
    task.set_key_table(cell, table);
    return out;
}

}  // namespace memcap
