// memcap/core/seeds.hpp — the seed numbers reserved for choosing settings.
#pragma once

#include <cstdint>

namespace memcap {

/// The first tuning seed; tuning seed i is kTuningSeedBase + i: seed numbers no scored seed can
/// take (at most 1,000,000 scored seeds), on which settings are chosen (harness/exec/tuning.hpp)
/// and the trained frame's learning rate (harness/train/trainer.hpp).
constexpr std::uint64_t kTuningSeedBase = std::uint64_t{1} << 40;

}  // namespace memcap
