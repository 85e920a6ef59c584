// memcap/harness/exec/pipeline.cpp — see pipeline.hpp.
#include "harness/exec/pipeline.hpp"

#include "harness/exec/grid.hpp"

namespace memcap {

Pipeline::Pipeline(std::vector<CellSpec> cells) : cells_(std::move(cells)) { resolved_ = check_cells(cells_, &races_); }

void Pipeline::tune(int threads, bool progress, const TuningShare& share, const TuningJournal& journal,
                    std::uint64_t tuning_seed_offset) {
    resolve_tuning(cells_, races_, resolved_, threads, progress, tuning_seed_offset, share, journal);
}

CellProgress Pipeline::progress(const std::vector<std::size_t>& order, std::string label, bool enabled, int threads,
                                bool calibrated) const {
    return CellProgress(
        order, [this](std::size_t i) -> const CellSpec& { return cells_[i]; },
        [this](std::size_t i) -> const ResolvedCell& { return *resolved_[i]; }, std::move(label), enabled, threads,
        calibrated);
}

void Pipeline::run(const std::vector<std::size_t>& order, int threads, const std::atomic<bool>& stop,
                   const std::function<void(std::size_t, const std::string&, double)>& done, bool progress) const {
    run_cells_unordered(cells_, resolved_, order, threads, stop, done, progress);
}

void Pipeline::run_in_order(int threads, bool progress, const std::function<void(std::size_t, const std::string&)>& emit,
                            const std::atomic<bool>* stop) const {
    run_cells(cells_, resolved_, threads, progress, emit, stop);
}

std::vector<std::size_t> every_cell(std::size_t count) {
    std::vector<std::size_t> out(count);
    for (std::size_t i = 0; i < count; ++i) out[i] = i;
    return out;
}

}  // namespace memcap
