// memcap/tests/example_backend.cpp — see example_backend.hpp.
#include "example_backend.hpp"

#include <mutex>

namespace memcap::example {

ValueSum::ValueSum(const MemoryShape& shape, double decay)
    : decay_(static_cast<float>(decay)), sum_(Vec::Zero(size(shape).d_value)) {}

void ValueSum::write(ConstVecRef, ConstVecRef value) { sum_ = decay_ * sum_ + value; }

void ValueSum::read(ConstVecRef, VecRef out) const { out = sum_; }

MemoryEntry value_sum_entry() {
    MemoryEntry e;
    e.name = "value_sum";
    e.description = "decaying sum of the written values, read whatever the query (example backend, tests/)";
    e.params = {real_param("decay", "1", "lambda: s <- lambda s + v", 0.0, true, 1.0)};
    e.state_formula = "d_v at any budget >= d_v";
    e.paper = "none (the bag-of-values baseline)";
    e.size = [](const Spec&, const MemoryShape& shape) {
        const ValueSum::Dims d = ValueSum::size(shape);
        MemorySize m;
        m.dims = {{"d_v", d.d_value}};
        m.state_floats = d.state_floats();
        m.min_budget = d.min_budget();
        return m;
    };
    e.make = [](const Spec& spec, const MemoryShape& shape, Rng&) -> std::unique_ptr<Memory> {
        return std::make_unique<ValueSum>(shape, spec.real("decay"));
    };
    e.cost = [](const Spec&, const MemoryShape& s, Kernel k, std::int64_t, std::int64_t batch) {
        // a write scales and adds (2 FLOPs per state float); a read copies the state out
        const double b = double(batch), dv = s.d_value;
        KernelCost c;
        c.flops = k == Kernel::write_batch ? 2.0 * b * dv : 0.0;
        c.bytes = 4.0 * b * (s.d_key + s.d_value) + 4.0 * (k == Kernel::write_batch ? 2.0 : 1.0) * dv;
        return c;  // no temporaries beyond one value
    };
    e.native_read = true;
    e.order_free = true;  // at its default decay = 1, a sum
    e.can_hide_pairs = false;
    return e;
}

void register_example_backend() {
    static std::once_flag once;
    std::call_once(once, [] { register_memory(value_sum_entry()); });
}

}  // namespace memcap::example
