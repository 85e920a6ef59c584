// memcap/tests/example_backend.hpp — an example backend from outside the table: the decaying value sum.
//
// Stores:       one vector s of d_v floats (s = 0 after reset).
// Write:        s ← λ s + v; the key is ignored.
// Read:         s, whatever the query: a memory with no addressing at all, the
//               floor a content-addressed memory must beat (chance on
//               associative recall; right after one write it returns that value).
// state_floats: d_v, at any budget (a larger budget buys nothing).
// Parameters:   decay = 1 (λ, real in (0, 1]). Minimum budget: d_v.
// Traits:       order_free (at λ = 1 the state is a sum), cannot hide pairs
//               (a sum keeps no pair apart), native read.
// Source:       none: the bag-of-values baseline, written as the worked example
//               of register_memory.
//
// It lives in tests/, not in memories/: `value_sum_entry()` is a
// complete MemoryEntry (description, parameters, sizing function, factory, cost
// model, traits) and `register_example_backend()` adds it to the registry, after
// which memcap treats it exactly like a built-in backend (spec strings, sizing,
// make_memory, run_cell, the conformance tests). The test binary registers it at
// the start of every run (test_registration.cpp), so every test that iterates over
// the registry covers it too.
#pragma once

#include "memories/registry.hpp"

namespace memcap::example {

class ValueSum final : public Memory {
public:
    /// Its one sizing function: the state is d_v floats at any budget of at least d_v.
    struct Dims {
        int d_value;
        std::int64_t state_floats() const { return d_value; }
        std::int64_t min_budget() const { return d_value; }
    };
    static Dims size(const MemoryShape& shape) { return {shape.d_value}; }

    ValueSum(const MemoryShape& shape, double decay);

    void reset() override { sum_.setZero(); }
    void write(ConstVecRef key, ConstVecRef value) override;
    void read(ConstVecRef query, VecRef out) const override;
    std::int64_t state_floats() const override { return sum_.size(); }
    ConstStateView state() const override { return ConstStateView(sum_.data(), sum_.size()); }
    // write_batch and read_batch: the default loops (read_batch refuses hidden pairs).

private:
    float decay_;
    Vec sum_;
};

/// The backend's complete table entry, named "value_sum".
MemoryEntry value_sum_entry();

/// register_memory(value_sum_entry()) the first time; later calls do nothing.
void register_example_backend();

}  // namespace memcap::example
