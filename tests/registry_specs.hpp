// Shared helpers for the tests that run every backend in the registry (conformance, causal
// form, heads): random unit rows, and the specs the contract is checked at.
#pragma once

#include "core/rng.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"

#include <string>
#include <vector>

namespace memcap::test {

/// n random unit rows of width d.
inline RowMat unit_rows(Rng& rng, Eigen::Index n, Eigen::Index d) {
    RowMat m(n, d);
    rng.fill_normal(m);
    normalise_rows(m);
    return m;
}

/// Whether the entry can take `value` of its parameter `p`: every one, but the storage
/// precisions other than fp32 of an entry that does not declare reduced_precision (the table
/// gives every entry the key `precision`, and refuses those values for such an entry).
inline bool takes(const MemoryEntry& entry, const ParamInfo& p, const std::string& value) {
    return entry.reduced_precision || p.key != kPrecisionKey || value == p.same_as_none;
}

/// The specs the contract is checked at: every backend at its defaults, then at each value a
/// race may choose for each of its settings (ParamInfo::best, the candidates of `key=best`),
/// one setting at a time with the others at their defaults — so a decay, a learning rate, a
/// scale or a storage precision other than the default runs its own path (a value equal to
/// the default is not repeated).
inline std::vector<std::string> conformance_specs() {
    std::vector<std::string> specs;
    for (const MemoryEntry& entry : memory_registry()) {
        specs.push_back(entry.name);
        const std::string defaults = parse_memory_spec(entry.name).canonical();
        for (const ParamInfo& p : entry.params)
            for (const std::string& value : p.best) {
                if (!takes(entry, p, value)) continue;
                const std::string text = entry.name + ":" + p.key + "=" + value;
                if (parse_memory_spec(text).canonical() != defaults) specs.push_back(text);
            }
    }
    return specs;
}

}  // namespace memcap::test
