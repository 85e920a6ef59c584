// memcap/memories/softmax/compressed_entries.cpp — the table entries of the caches that keep each
// pair in fewer floats (compressed_cache.hpp): `kivi` (KIVI's quantised cache) and `mla` (MLA's
// latent cache). Each is listed with its paper and its state formula, takes only its own settings
// and is raced over its own candidates, beside the eviction policies (kv_entries.cpp). A fixed KV
// size of T tokens is, for `mla`, B = T r floats; for `kivi`, the formula's B at Ng G + W = T.
#include "core/error.hpp"
#include "memories/registry.hpp"
#include "memories/softmax/compressed_cache.hpp"

#include <algorithm>
#include <cmath>

namespace memcap {
namespace {

using I = std::int64_t;

ParamInfo beta_param() {
    ParamInfo p = real_param("beta", "16", "sharpness on raw dot products, as softmax's (0 = uniform attention; inf = the "
                                           "hard argmax)", 0.0);
    p.allow_inf = true;
    p.best = {"1", "2", "4", "8", "16", "32", "64", "128", "256", "512", "1024", "inf"};
    return p;
}

KiviCache::Dims kivi_dims(const Spec& spec, const MemoryShape& s) {
    return KiviCache::size(s, std::stoi(spec.text("bits")), static_cast<int>(spec.integer("group")), spec.integer("residual"));
}

/// A read scores the pairs held and sums their values (as the softmax cache's); a write copies a
/// pair and, once a group, quantises it (about 6 flops a number) and rebuilds the reader's rows.
KernelCost compressed_cost(const MemoryShape& s, Kernel k, I stored, I batch, I pairs, double write_flops_per_pair,
                           double state_floats_per_pair) {
    const double m = double(pairs < 0 ? stored + batch : std::min(stored + batch, pairs));
    KernelCost c;
    if (k == Kernel::write_batch) {
        c.flops = double(batch) * write_flops_per_pair;
        c.bytes = 2.0 * batch_bytes(s, batch) + kFloat * m * state_floats_per_pair;
        return c;
    }
    c.flops = double(batch) * m * (2.0 * s.d_key + 5.0 + 2.0 * s.d_value);
    c.bytes = batch_bytes(s, batch) + kFloat * m * (s.d_key + s.d_value);
    c.scratch_bytes = kFloat * double(batch) * m;
    return c;
}

}  // namespace

MemoryEntry kivi_entry() {
    MemoryEntry e;
    e.name = "kivi";
    e.description = "softmax cache quantised as KIVI: keys per channel, values per token, at 2, 4 or 8 bits, the newest "
                    "pairs at full precision; FIFO by groups when full";
    ParamInfo bits = choice_param("bits", {"2", "4", "8"}, "bits of a quantised key or value entry (asymmetric: a scale and "
                                                            "a zero point, each a half, per group)");
    bits.best = {"2", "4"};
    ParamInfo group = int_param("group", "32", "the group size G: tokens sharing a key channel's scale and zero point, and "
                                               "channels sharing a token's value scale and zero point (KIVI: 32)", 1, 1 << 16);
    group.best = {"32", "16", "8", "4"};
    ParamInfo residual = int_param("residual", "0", "R: the newest pairs always at full precision (KIVI's residual); the "
                                                    "window holds R + G - 1 or more, quantised G at a time as it fills; "
                                                    "refused when R pairs exceed the budget", 0, 1 << 20);
    residual.best = {"0", "8", "16", "32"};
    e.params = {beta_param(), bits, group, residual};
    e.state_formula =
        "Ng gw + (window pairs held) (d_k + d_v): Ng quantised groups of G pairs, gw = ceil((32 d_k + G (d_k + d_v) b + "
        "32 G ceil(d_v / G)) / 31) floats each (b-bit codes; a half scale and zero per key channel and per value channel "
        "group; 31 bits a float, bit 30 clear so every float is finite), Ng = floor((B - (R + G - 1)(d_k + d_v)) / gw), "
        "and a full-precision window of W = floor((B - Ng gw) / (d_k + d_v)) pairs; Ng = 0: the plain cache (W pairs); "
        "min budget R (d_k + d_v)";
    e.paper = "Liu et al. 2024 (KIVI: a tuning-free asymmetric 2bit quantization for KV cache)";
    e.size = [](const Spec& spec, const MemoryShape& s) {
        const KiviCache::Dims d = kivi_dims(spec, s);
        const int g = static_cast<int>(spec.integer("group"));
        MemorySize m;
        m.dims = {{"pairs", d.pairs}, {"groups", d.groups}, {"window", d.window}};
        m.state_floats = d.state_floats;
        m.floats_per_write = d.row;
        if (d.groups != 0) m.grows_as = [d, g](I writes) { return KiviCache::state_after(d, g, writes); };
        m.derived_floats = d.groups == 0 ? 0 : (d.pairs < 0 ? 0 : d.pairs * d.row);  // the reader's dequantised pairs
        m.min_budget = d.min_budget;
        return m;
    };
    e.make = [](const Spec& spec, const MemoryShape& s, Rng&) -> std::unique_ptr<Memory> {
        const KiviCache::Dims d = kivi_dims(spec, s);
        if (s.budget_floats && *s.budget_floats < d.min_budget)
            throw UsageError("memory '" + spec.canonical() + "': a residual window of " + std::to_string(spec.integer("residual")) +
                             " pairs needs a budget of at least " + std::to_string(d.min_budget) + " floats (the minimum)");
        return std::make_unique<KiviCache>(s, spec.real("beta"), std::stoi(spec.text("bits")), static_cast<int>(spec.integer("group")),
                                           spec.integer("residual"));
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch) {
        const KiviCache::Dims d = kivi_dims(spec, s);
        const double g = double(spec.integer("group"));
        // a write: its copy, and a share of its group's quantisation and of the reader's rebuild
        const double write = 6.0 * double(d.row) + (d.pairs < 0 ? 0.0 : double(d.pairs) * double(d.row) / g);
        return compressed_cost(s, k, stored, batch, d.pairs, write, double(d.row));
    };
    e.published = "KIVI";
    e.cache = true;
    e.fp32_only = true;  // its state is codes, halves and full-precision rows already: precision= is refused
    return e;
}

MemoryEntry mla_entry() {
    MemoryEntry e;
    e.name = "mla";
    e.description = "softmax cache of low-rank latents (MLA): a random orthonormal down-projection of each pair is kept, "
                    "keys and values read through its transpose; FIFO when full";
    ParamInfo latent = real_param("latent", "0.5", "the latent's width as a share of d_k + d_v: r = max(1, floor(latent x "
                                                   "(d_k + d_v))); 1 keeps the pairs (up to rounding)", 0.0, true, 1.0);
    latent.best = {"0.5", "0.125", "0.25", "0.75", "1"};
    e.params = {beta_param(), latent};
    e.state_formula = "(stored latents) x r, at most C = floor(B / r) latents, r = max(1, floor(latent (d_k + d_v))); "
                      "W_down and its transpose [W_uk; W_uv] are parameters (2 r (d_k + d_v) floats), never state; a KV "
                      "size of T tokens is B = T r";
    e.paper = "DeepSeek-AI 2024 (DeepSeek-V2: multi-head latent attention)";
    e.size = [](const Spec& spec, const MemoryShape& s) {
        const LatentCache::Dims d = LatentCache::size(s, spec.real("latent"));
        const I pair = I{s.d_key} + s.d_value;
        MemorySize m;
        m.dims = {{"pairs", d.capacity}, {"latent", d.latent}};
        m.state_floats = d.capacity < 0 ? -1 : d.capacity * d.latent;
        m.floats_per_write = d.latent;
        m.param_floats = 2 * d.latent * pair;
        m.derived_floats = d.capacity < 0 ? 0 : d.capacity * pair;  // the reconstructed pairs the reads see
        m.build_scratch_bytes = 8 * 3 * d.latent * pair;            // the QR in double
        m.min_budget = d.latent;
        return m;
    };
    e.make = [](const Spec& spec, const MemoryShape& s, Rng& rng) -> std::unique_ptr<Memory> {
        return std::make_unique<LatentCache>(s, spec.real("beta"), spec.real("latent"), rng);
    };
    e.cost = [](const Spec& spec, const MemoryShape& s, Kernel k, I stored, I batch) {
        const LatentCache::Dims d = LatentCache::size(s, spec.real("latent"));
        const double pair = double(s.d_key + s.d_value);
        // a write: the latent (2 r (d_k + d_v)) and the pair back from it (as many)
        return compressed_cost(s, k, stored, batch, d.capacity, 4.0 * double(d.latent) * pair, double(d.latent));
    };
    e.published = "MLA";
    e.cache = true;
    e.fp32_only = true;  // the latents feed a derived cache of reconstructed pairs: precision= is refused
    e.order_free = true;  // unbounded without a budget, it never evicts, and attention is a sum over pairs
    return e;
}

}  // namespace memcap
