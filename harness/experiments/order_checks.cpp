// memcap/harness/experiments/order_checks.cpp — see order_checks.hpp.
#include "harness/experiments/order_checks.hpp"

#include "core/rng.hpp"
#include "harness/results/csv.hpp"
#include "memories/registry.hpp"

#include <cstdio>

namespace memcap {

std::vector<OrderCheck> order_checks() {
    std::vector<OrderCheck> out;
    const int d = 64, n = 48;
    for (const auto& name : memory_names()) {
        Rng rng = Rng::stream("reproduce/permutation", name);
        const RowMat keys = rng.unit_rows<RowMat>(n, d), values = rng.unit_rows<RowMat>(n, d);
        RowMat pk(n, d), pv(n, d);
        for (int i = 0; i < n; ++i) pk.row(i) = keys.row((i * 7 + 3) % n), pv.row(i) = values.row((i * 7 + 3) % n);
        const Spec spec = parse_memory_spec(name);
        auto a = make_memory(spec, MemoryShape{d, d, {}}, 0), b = make_memory(spec, MemoryShape{d, d, {}}, 0);
        a->write_batch(keys, values);
        b->write_batch(pk, pv);
        RowMat ra(n, d), rb(n, d);
        a->read_batch(keys, ra);
        b->read_batch(keys, rb);
        OrderCheck c{spec.canonical(), (ra - rb).cwiseAbs().maxCoeff()};
        // Order-free at their natural size: a cache that never evicts, the additive grid,
        // HRR, and the selective model without decay (its default rho = 1).
        c.order_free = find_memory(name).order_free;  // declared in the memory table
        c.as_expected = c.order_free ? c.largest < 1e-4f : c.largest > 1e-2f;
        out.push_back(c);
    }
    return out;
}

std::string order_csv(const std::vector<OrderCheck>& checks) {
    std::string out = "memory_spec,control,d,n,largest_output_difference,expected,verdict\n";
    char buf[32];
    for (const auto& c : checks) {
        std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(c.largest));
        out += csv_field(c.memory) + ",paired_permutation,64,48," + buf + "," +
               (c.order_free ? "0 to rounding (order-free)" : "> 0 (order-dependent)") + "," +
               (c.as_expected ? "as expected" : "unexpected") + "\n";
    }
    return out;
}

std::string order_markdown(const std::vector<OrderCheck>& checks) {
    std::string out = "\n## Paired permutation of the write order (a control, not an essay number)\n\n"
                      "48 pairs, d = 64, natural sizes, the same keys read after writing the pairs in two orders "
                      "(also `order_checks.csv`):\n\n| memory | largest output difference | expected | verdict |\n"
                      "|---|---:|---|---|\n";
    char buf[32];
    for (const auto& c : checks) {
        std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(c.largest));
        out += "| `" + c.memory + "` | " + buf + " | " + (c.order_free ? "0 to rounding (order-free)" : "> 0 (order-dependent)") +
               " | " + (c.as_expected ? "as expected" : "unexpected") + " |\n";
    }
    return out;
}

}  // namespace memcap
