// The causal form (Memory::causal) of every backend in the registry, at every setting the
// contract tests run: it equals the token-by-token definition (write at t, then read with
// q_t), from a state already written and with the final state left behind (a cache whose reads
// score what it keeps, MemoryEntry::reads_steer_writes: the final state write_batch leaves when
// each query is its own key); the gate inputs a
// backend declares (MemoryEntry::gates) are taken per token, change what it stores and equal
// its own setting when given that setting; the ones it does not declare are refused, never
// ignored.
#include "core/error.hpp"
#include "core/rng.hpp"
#include "memories/precision.hpp"
#include "memories/registry.hpp"
#include "registry_specs.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

using namespace memcap;
using memcap::test::unit_rows;

namespace {

float max_abs(const RowMat& m) { return m.size() ? m.cwiseAbs().maxCoeff() : 0.0f; }

/// Equal up to float32 rounding, relative to the larger magnitude (at least 1).
void require_close(const RowMat& a, const RowMat& b, float tolerance = 1e-4f) {
    REQUIRE(a.rows() == b.rows());
    REQUIRE(a.cols() == b.cols());
    const float scale = std::max({1.0f, max_abs(a), max_abs(b)});
    REQUIRE((a - b).cwiseAbs().maxCoeff() <= tolerance * scale);
}

RowMat state_of(const Memory& m) { return RowMat(Vec(m.state()).transpose()); }

}  // namespace

TEST_CASE("the causal form equals the token-by-token definition for every backend", "[memory][conformance][causal]") {
    const std::string text = GENERATE(from_range(memcap::test::conformance_specs()));
    CAPTURE(text);
    const Spec spec = parse_memory_spec(text);
    const MemoryEntry& entry = find_memory(spec.name());
    const int d = 16;
    const Eigen::Index t = 80;  // beyond one chunk of the chunked forms
    Rng data = Rng::stream("causal", spec.name());
    const RowMat prefix_k = unit_rows(data, 4, d), prefix_v = unit_rows(data, 4, d);
    const RowMat q = unit_rows(data, t, d), k = unit_rows(data, t, d), v = unit_rows(data, t, d);
    const MemoryShape shape{d, d, std::max<std::int64_t>(256, entry.min_budget(spec, MemoryShape{d, d, {}}))};
    const bool fp32 = spec_precision(spec) == Precision::fp32;
    // Runs `f`: false when it was a measured failure (a rounded state the read cannot use,
    // MesaNet's H + λI below fp32), which only a memory held below fp32 may give.
    const auto runs = [&](const auto& f) {
        try {
            f();
            return true;
        } catch (const MemoryFailure& e) {
            INFO(e.what());
            REQUIRE_FALSE(fp32);
            return false;
        }
    };

    SECTION("no gate inputs: equal to write then read at each token, and the final state as write_batch leaves it") {
        auto fast = make_memory(spec, shape, 3), slow = make_memory(spec, shape, 3), batch = make_memory(spec, shape, 3);
        for (auto* m : {fast.get(), slow.get(), batch.get()}) m->write_batch(prefix_k, prefix_v);
        RowMat a(t, d), b(t, d);
        const bool ok = runs([&] { fast->causal(q, k, v, TokenGates{}, a); });
        REQUIRE(runs([&] { slow->causal_by_token(q, k, v, TokenGates{}, b); }) == ok);
        if (ok) require_close(a, b);
        require_close(state_of(*fast), state_of(*slow));
        batch->write_batch(k, v);
        if (!entry.reads_steer_writes) {
            if (ok) require_close(state_of(*fast), state_of(*batch));  // (a failed read stops the pass)
        } else {
            // its reads score what it keeps: written without reads, each key is its own token's
            // query, so write_batch (then a read of the last key) is the causal pass with Q = K
            Vec last(d);
            batch->read(k.row(t - 1).transpose(), last);
            auto own = make_memory(spec, shape, 3);
            own->write_batch(prefix_k, prefix_v);
            RowMat o(t, d);
            own->causal(k, k, v, TokenGates{}, o);
            require_close(state_of(*own), state_of(*batch));
            REQUIRE(state_of(*fast) != state_of(*batch));  // the queries were taken, not ignored
        }
        // the definition: o_t is the read of q_t after the writes up to and including t
        if (ok) {
            auto step = make_memory(spec, shape, 3);
            step->write_batch(prefix_k, prefix_v);
            const Eigen::Index at = 9;
            if (entry.reads_steer_writes) {  // the tokens before `at` read with their queries
                RowMat before(at, d);
                step->causal(q.topRows(at), k.topRows(at), v.topRows(at), TokenGates{}, before);
                step->write(k.row(at).transpose(), v.row(at).transpose());
            } else {
                step->write_batch(k.topRows(at + 1), v.topRows(at + 1));
            }
            Vec read(d);
            step->read(q.row(at).transpose(), read);
            require_close(RowMat(read.transpose()), RowMat(b.row(at)));
        }
    }

    SECTION("shapes that do not match are refused") {
        auto m = make_memory(spec, shape, 3);
        RowMat out(t - 1, d);
        REQUIRE_THROWS_AS(m->causal(q, k, v, TokenGates{}, out), std::invalid_argument);
        TokenGates short_gates;
        short_gates.beta = Vec::Ones(t - 1);
        RowMat full(t, d);
        REQUIRE_THROWS_AS(m->causal(q, k, v, short_gates, full), std::invalid_argument);
    }

    const GateInputs takes = entry.gates;
    std::int64_t channels = 1;  // d_phi for the grids
    for (const auto& [name, dim] : memory_size(spec, shape).dims)
        if (name == "d_phi") channels = dim;
    Rng draw = Rng::stream("causal gates", spec.name());
    const auto uniform = [&](Eigen::Index rows, Eigen::Index cols, float lo, float hi) {
        RowMat m(rows, cols);
        for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = lo + (hi - lo) * static_cast<float>(draw.uniform());
        return m;
    };
    TokenGates decay, channel_decay, beta, write_gate;
    decay.log_decay = uniform(t, 1, std::log(0.7f), 0.0f);
    channel_decay.log_decay = uniform(t, channels, std::log(0.7f), 0.0f);
    beta.beta = uniform(t, 1, 0.1f, 1.0f).col(0);
    write_gate.write_gate = uniform(t, 1, 0.0f, 1.0f).col(0);
    for (Eigen::Index i = 0; i < t; i += 5) write_gate.write_gate(i) = 0.0f;  // skipped tokens
    struct Case {
        const char* name;
        bool declared;
        const TokenGates* gates;
    };
    const Case cases[] = {{"log_decay", takes.log_decay, &decay},
                          {"channel_decay", takes.channel_decay, &channel_decay},
                          {"beta", takes.beta, &beta},
                          {"write_gate", takes.write_gate, &write_gate}};

    SECTION("declared gate inputs: the causal form equals the definition and the gates change the state") {
        for (const Case& c : cases) {
            if (!c.declared) continue;
            CAPTURE(c.name);
            REQUIRE_NOTHROW(check_gates(entry, *c.gates));
            auto fast = make_memory(spec, shape, 5), slow = make_memory(spec, shape, 5), plain = make_memory(spec, shape, 5);
            for (auto* m : {fast.get(), slow.get(), plain.get()}) m->write_batch(prefix_k, prefix_v);
            RowMat a(t, d), b(t, d), p(t, d);
            const bool ok = runs([&] { fast->causal(q, k, v, *c.gates, a); });
            REQUIRE(runs([&] { slow->causal_by_token(q, k, v, *c.gates, b); }) == ok);
            if (ok) require_close(a, b);
            require_close(state_of(*fast), state_of(*slow));
            runs([&] { plain->causal_by_token(q, k, v, TokenGates{}, p); });
            REQUIRE(state_of(*fast) != state_of(*plain));  // taken, not ignored
        }
    }

    SECTION("a write gate of 0 leaves the state exactly as it was; of 1 it is the ungated write") {
        if (!takes.write_gate) return;
        auto m = make_memory(spec, shape, 5);
        m->write_batch(prefix_k, prefix_v);
        const RowMat before = state_of(*m);
        TokenGates closed;
        closed.write_gate = Vec::Zero(t);
        RowMat out(t, d);
        runs([&] { m->causal(q, k, v, closed, out); });
        REQUIRE(state_of(*m) == before);
        TokenGates open;
        open.write_gate = Vec::Ones(t);
        auto gated = make_memory(spec, shape, 5), plain = make_memory(spec, shape, 5);
        runs([&] { gated->causal(q, k, v, open, out); });
        runs([&] { plain->causal(q, k, v, TokenGates{}, out); });
        require_close(state_of(*gated), state_of(*plain));
    }

    SECTION("undeclared gate inputs are refused up front and by the memory, the state untouched") {
        for (const Case& c : cases) {
            if (c.declared) continue;
            CAPTURE(c.name);
            if (!(std::string(c.name) == "channel_decay" && takes.log_decay && channels == 1))
                REQUIRE_THROWS_AS(check_gates(entry, *c.gates), UsageError);
            auto m = make_memory(spec, shape, 5);
            m->write_batch(prefix_k, prefix_v);
            const RowMat before = state_of(*m);
            RowMat out(t, d);
            if (std::string(c.name) == "channel_decay" && channels == 1) continue;  // one channel: it is a scalar decay
            REQUIRE_THROWS_AS(m->causal(q, k, v, *c.gates, out), std::invalid_argument);
            REQUIRE(state_of(*m) == before);
        }
    }
}
