// memcap/memories/theory/recall_model.cpp — see recall_model.hpp.
#include "memories/theory/recall_model.hpp"

#include "memories/theory/crosstalk.hpp"
#include "memories/theory/hrr.hpp"
#include "memories/theory/keysets.hpp"

#include <exception>
#include <limits>

namespace memcap::theory {

ModelCall hrr_call(std::int64_t n, std::int64_t D, double sigma) {
    return {"hrr_recall", {double(n), double(D), sigma}, [=] { return hrr_noisy_recall(n, D, sigma); }};
}

ModelCall grid_call(std::int64_t n, int d, double sigma) {
    return {"grid_recall", {double(n), double(d), sigma}, [=] { return grid_recall(n, d, sigma); }};
}

ModelCall cache_call(std::int64_t n, int d, double beta, double sigma) {
    return {"cache_recall", {double(n), double(d), beta, sigma}, [=] { return cache_recall(n, d, beta, sigma); }};
}

ModelCall least_squares_call(std::int64_t n, int d) {
    // n ≤ d random keys are linearly independent with probability 1, so the least-squares
    // map G H⁺ sends each stored key to its value exactly
    return {"least_squares_recall", {double(n), double(d)}, [=] { return n <= d ? 1.0 : std::numeric_limits<double>::quiet_NaN(); }};
}

ModelCall frame_call(std::int64_t n, int d, std::int64_t vocab, double sigma) {
    return {"keyset_grid_recall", {double(n), double(d), double(vocab), sigma},
            [=] { return keyset_grid_recall(n, d, keyset_crosstalk(n, d, vocab, true), sigma); }};
}

std::optional<RecallModel> keyset_not_modelled(const RecallTask& task, const std::string& model, bool frame_modelled) {
    RecallModel m;
    m.model = model;
    if (task.keys == "learned") {
        m.note = "keys=learned: no model of a trained key set";
        return m;
    }
    if (task.keys == "frame" && !frame_modelled) {
        m.note = "keys=frame: a model of the frame exists for the grid only";
        return m;
    }
    return std::nullopt;
}

double ModelTable::value(const ModelCall& call) {
    Key key{call.function, call.args};
    std::unique_lock<std::mutex> lock(mutex_);
    const auto it = memo_.find(key);
    if (it != memo_.end()) {  // computed, or being computed by another thread
        const std::shared_future<double> value = it->second;
        lock.unlock();
        return value.get();
    }
    if (recording_) {
        pending_.emplace(std::move(key), call.compute);
        return std::numeric_limits<double>::quiet_NaN();
    }
    std::promise<double> promise;
    const std::shared_future<double> value = promise.get_future().share();
    memo_.emplace(std::move(key), value);
    lock.unlock();  // other calls go ahead meanwhile; this one waits for us
    try {
        promise.set_value(call.compute());
    } catch (...) {
        promise.set_exception(std::current_exception());
    }
    return value.get();
}

void ModelTable::evaluate(int threads) {
    std::vector<std::pair<Key, std::function<double()>>> calls(pending_.begin(), pending_.end());
    std::vector<double> values(calls.size());
    parallel_for(static_cast<std::int64_t>(calls.size()), threads, [&](std::size_t i) { values[i] = calls[i].second(); });
    for (std::size_t i = 0; i < calls.size(); ++i) {
        std::promise<double> ready;
        ready.set_value(values[i]);
        memo_[calls[i].first] = ready.get_future().share();
    }
    pending_.clear();
}

void parallel_for(std::int64_t count, int threads, const std::function<void(std::size_t)>& body) {
    std::vector<std::exception_ptr> failed(static_cast<std::size_t>(count));
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (std::int64_t i = 0; i < count; ++i) {
        try {
            body(static_cast<std::size_t>(i));
        } catch (...) {
            failed[static_cast<std::size_t>(i)] = std::current_exception();
        }
    }
    for (const auto& e : failed)
        if (e) std::rethrow_exception(e);
}

}  // namespace memcap::theory
