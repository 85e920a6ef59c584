// memcap/tests/fuzz/fuzz_spec.cpp — libFuzzer harness for spec strings.
//
// Feeds arbitrary bytes to split_spec, bind_spec (a schema with every kind of
// parameter and bound), parse_memory_spec, parse_task_spec, parse_readout_spec
// and the strict number parsers. Bad input may only ever be a UsageError; any
// other exception, a sanitizer report, or a broken invariant aborts:
//   - a spec that binds prints a canonical form that parses back to the same spec;
//   - every real value of a bound spec is finite and inside its declared range;
//   - parse_real / parse_int accept only what format_real / to_string give back unchanged.
// Run by scripts/fuzz.sh; seeds in tests/fuzz/corpus/spec/.
#include "core/error.hpp"
#include "core/spec.hpp"
#include "harness/eval/readout.hpp"
#include "memories/registry.hpp"
#include "tasks/registry.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

using namespace memcap;

namespace {

[[noreturn]] void broken(const std::string& what, const std::string& input) {
    std::fprintf(stderr, "invariant broken: %s (input '%s')\n", what.c_str(), input.c_str());
    std::abort();
}

// Every kind of parameter the registries declare: open and closed bounds, integers, choices.
const Schema& test_schema() {
    static const Schema schema{"memory", "fuzz",
                               {real_param("beta", "16", "", 0.0),
                                real_param("rho", "0.9", "", 0.0, false, 1.0, true),
                                real_param("w", "1", "", 0.0, true, 2.0),
                                int_param("nu", "1", "", 1, 8),
                                int_param("queries", "32", "", 1, 1 << 20),
                                choice_param("phi", {"proj", "dpfp"}, "")}};
    return schema;
}

void check_bound(const Spec& spec, const Schema& schema, const std::string& input) {
    for (const auto& p : schema.params) {
        if (p.type == ParamType::Choice) continue;
        if (p.optional && !spec.has(p.key)) continue;  // left out: no value to bound
        const double x = p.type == ParamType::Real ? spec.real(p.key) : static_cast<double>(spec.integer(p.key));
        if (std::isinf(x) && x > 0 && p.allow_inf) continue;  // declared: e.g. softmax's beta=inf, mom's temp=inf
        if (!std::isfinite(x)) broken("non-finite value for " + p.key, input);
        if (x < p.min || x > p.max || (p.min_open && x == p.min) || (p.max_open && x == p.max))
            broken("value out of range for " + p.key, input);
    }
}

void round_trip(const std::function<Spec(const std::string&)>& parse, const std::string& input) {
    Spec spec;
    try {
        spec = parse(input);
    } catch (const UsageError&) {
        return;
    }
    const std::string canonical = spec.canonical();
    Spec again;
    try {
        again = parse(canonical);
    } catch (const UsageError& e) {
        broken("canonical form '" + canonical + "' does not parse: " + e.what(), input);
    }
    if (!(again == spec) || again.canonical() != canonical) broken("canonical form does not round-trip", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);

    try {
        const RawSpec raw = split_spec(input, "memory");
        if (raw.name.empty()) broken("split_spec gave an empty name", input);
        for (std::size_t i = 0; i < raw.pairs.size(); ++i) {
            if (raw.pairs[i].first.empty() || raw.pairs[i].second.empty()) broken("empty key or value", input);
            for (std::size_t j = 0; j < i; ++j)
                if (raw.pairs[i].first == raw.pairs[j].first) broken("duplicate key accepted", input);
        }
        try {
            const Spec spec = bind_spec(test_schema(), RawSpec{"fuzz", raw.pairs});
            check_bound(spec, test_schema(), input);
            const Spec again = bind_spec(test_schema(), split_spec(spec.canonical(), "memory"));
            if (!(again == spec)) broken("bind_spec canonical form does not round-trip", input);
        } catch (const UsageError&) {
        }
    } catch (const UsageError&) {
    }

    round_trip(parse_memory_spec, input);
    round_trip(parse_task_spec, input);
    round_trip(parse_readout_spec, input);
    try {
        const Spec m = parse_memory_spec(input);
        check_bound(m, find_memory(m.name()).schema(), input);
    } catch (const UsageError&) {
    }

    try {
        const double x = parse_real(input, "x");
        if (!std::isfinite(x)) broken("parse_real accepted a non-finite value", input);
        if (parse_real(format_real(x), "x") != x) broken("format_real does not round-trip", input);
    } catch (const UsageError&) {
    }
    try {
        const std::int64_t n = parse_int(input, "n");
        if (parse_int(std::to_string(n), "n") != n) broken("parse_int does not round-trip", input);
    } catch (const UsageError&) {
    }
    return 0;
}
