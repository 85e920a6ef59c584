// memcap/harness/eval/readout.cpp — see readout.hpp.
#include "harness/eval/readout.hpp"

#include "core/error.hpp"
#include "harness/eval/nearest.hpp"
#include "harness/eval/probe.hpp"
#include "memories/registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace memcap {

namespace {

std::vector<ReadoutEntry> build_readout_registry() {
    const std::vector<ParamInfo> probe = {
        int_param("train", "2000", "rows of the least-squares fit: training episodes (tasks with slots) or training queries (assoc_recall)", 1, 1e7),
        real_param("ridge", "1e-06", "ridge, relative to the mean diagonal of the Gram matrix", 0.0)};
    const auto score_probe = [](Memory& m, const Task& t, const TaskCell& c, const Spec& r) {
        return probe_readout(m, t, c, ProbeOptions{r.integer("train"), r.real("ridge")});
    };
    const auto score_native = [](Memory& m, const Task& t, const TaskCell& c, const Spec&) { return native_readout(m, t, c); };
    const auto score_magnitude = [](Memory& m, const Task& t, const TaskCell& c, const Spec& r) {
        return native_readout(m, t, c, r.real("radius"));
    };
    std::vector<ParamInfo> magnitude = {real_param(
        "radius", "0.5", "a read is right only within radius x |target| of its target (its nearest candidate too); inf = native", 0.0,
        true)};
    magnitude[0].allow_inf = true;
    return {
        {"auto", "native where the memory has a meaningful read, the probe otherwise (its train and ridge)", probe, {}, false},
        {"native", "the memory's own read, scored by the nearest candidate", {}, score_native, true},
        {"probe", "a least-squares linear map from the flat state to the target", probe, score_probe, false},
        {"magnitude", "the memory's own read, right when its nearest candidate is the target and it lies within "
                      "radius x |target| of it (the read's scale counts)",
         magnitude, score_magnitude, true},
    };
}

}  // namespace

const std::vector<ReadoutEntry>& readout_registry() {
    static const std::vector<ReadoutEntry> registry = build_readout_registry();
    return registry;
}

const ReadoutEntry& find_readout(const std::string& name) {
    std::string known;
    for (const auto& e : readout_registry()) {
        if (e.name == name) return e;
        known += (known.empty() ? "" : ", ") + e.name;
    }
    throw UsageError("unknown readout '" + name + "' (known: " + known + ")");
}

Spec parse_readout_spec(const std::string& text) {
    const RawSpec raw = split_spec(text, "readout");
    return bind_spec(find_readout(raw.name).schema(), raw);
}

Spec resolve_readout(const Spec& readout, const std::string& memory_name) {
    if (readout.name() != "auto") return readout;
    if (find_memory(memory_name).native_read) return bind_spec(find_readout("native").schema(), RawSpec{"native", {}});
    return bind_spec(find_readout("probe").schema(),
                     RawSpec{"probe", {{"train", readout.text("train")}, {"ridge", readout.text("ridge")}}});
}

namespace {

/// Whether every one of `count` floats is finite, in one vectorised pass without an early exit
/// (Eigen's allFinite stops at the first non-finite and so runs one compare at a time):
/// x · 0 is ±0 for a finite x and NaN for ±inf or NaN, and a sum with a NaN in it is NaN.
bool all_finite(const float* x, Eigen::Index count) {
    float acc = 0.0f;
#pragma omp simd reduction(+ : acc)
    for (Eigen::Index i = 0; i < count; ++i) acc += x[i] * 0.0f;
    return acc == 0.0f;
}

/// For each read i: Σ_j r_ij², Σ_j c_j² and Σ_j r_ij c_j in double over its target's
/// candidate c, each summed in index order from its first term — what Eigen's
/// x.cast<double>().squaredNorm() and .dot() of a row compute (they do not vectorise the
/// cast, so they add one term after another). The order fixes the bits, so each sum stays
/// one chain of additions; eight reads' chains run side by side instead (a lane each), so
/// no addition waits on the one before. With AVX the eight rows are transposed 8 × 8 in
/// registers, column after column; otherwise through a buffer. The chains start at −0,
/// which adds to any first term exactly (−0 + −0 = −0), so every sum has the bits of the
/// chain that starts at its first term. Reads whose target is −1 get no sums.
struct TargetSums {
    double rr = 0.0, cc = 0.0, rc = 0.0;
};
constexpr Eigen::Index kSumLanes = 8;

/// Adds column j of the eight lanes (x_l = r_l[j], y_l = c_l[j]) to the lanes' chains.
inline void add_column(const float* x, const float* y, double* rr, double* cc, double* rc) {
#pragma omp simd
    for (Eigen::Index l = 0; l < kSumLanes; ++l) {
        const double a = x[l], b = y[l];
        rr[l] += a * a, cc[l] += b * b, rc[l] += a * b;
    }
}

#if defined(__AVX__)
/// r[k] becomes column k of the 8 × 8 tile whose rows are the r[l] on entry.
inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 s7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20), r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20), r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31), r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31), r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}
#endif

void target_sums(const Episode& e, ConstMatRef reads, std::size_t first, std::vector<TargetSums>& out) {
    constexpr Eigen::Index L = kSumLanes;
    const Eigen::Index m = reads.rows(), d = reads.cols();
    out.assign(static_cast<std::size_t>(m), TargetSums{});
    for (Eigen::Index i0 = 0; i0 < m; i0 += L) {
        const float* r[L];
        const float* c[L];
        for (Eigen::Index l = 0; l < L; ++l) {  // lanes past the last read repeat it
            const Eigen::Index i = std::min(i0 + l, m - 1);
            r[l] = reads.row(i).data();
            c[l] = e.candidates.row(std::max(e.target[first + static_cast<std::size_t>(i)], 0)).data();
        }
        alignas(64) double rr[L], cc[L], rc[L];
        std::fill_n(rr, L, -0.0), std::fill_n(cc, L, -0.0), std::fill_n(rc, L, -0.0);
        alignas(32) float x[L], y[L];
        Eigen::Index j = 0;
#if defined(__AVX512F__)
        if (d >= L) {  // as below, the eight lanes of each sum in one register of eight doubles
            __m512d rr8 = _mm512_set1_pd(-0.0), cc8 = rr8, rc8 = rr8;
            for (; j + L <= d; j += L) {
                __m256 rt[L], ct[L];
                for (Eigen::Index l = 0; l < L; ++l) rt[l] = _mm256_loadu_ps(r[l] + j), ct[l] = _mm256_loadu_ps(c[l] + j);
                transpose8(rt), transpose8(ct);
                for (Eigen::Index k = 0; k < L; ++k) {
                    const __m512d a = _mm512_cvtps_pd(rt[k]), b = _mm512_cvtps_pd(ct[k]);
                    rr8 = _mm512_add_pd(rr8, _mm512_mul_pd(a, a));
                    cc8 = _mm512_add_pd(cc8, _mm512_mul_pd(b, b));
                    rc8 = _mm512_add_pd(rc8, _mm512_mul_pd(a, b));
                }
            }
            _mm512_store_pd(rr, rr8), _mm512_store_pd(cc, cc8), _mm512_store_pd(rc, rc8);
        }
#elif defined(__AVX__)
        if (d >= L) {  // 8 × 8 tiles of each: rows = lanes, transposed to columns, summed in registers
            // lanes 0–3 and 4–7 of each sum; a product of two floats is exact in double, so
            // mul then add is the scalar chain's own arithmetic
            __m256d rr0 = _mm256_set1_pd(-0.0), rr1 = rr0, cc0 = rr0, cc1 = rr0, rc0 = rr0, rc1 = rr0;
            for (; j + L <= d; j += L) {
                __m256 rt[L], ct[L];
                for (Eigen::Index l = 0; l < L; ++l) rt[l] = _mm256_loadu_ps(r[l] + j), ct[l] = _mm256_loadu_ps(c[l] + j);
                transpose8(rt), transpose8(ct);
                for (Eigen::Index k = 0; k < L; ++k) {
                    const __m256d a0 = _mm256_cvtps_pd(_mm256_castps256_ps128(rt[k]));
                    const __m256d a1 = _mm256_cvtps_pd(_mm256_extractf128_ps(rt[k], 1));
                    const __m256d b0 = _mm256_cvtps_pd(_mm256_castps256_ps128(ct[k]));
                    const __m256d b1 = _mm256_cvtps_pd(_mm256_extractf128_ps(ct[k], 1));
                    rr0 = _mm256_add_pd(rr0, _mm256_mul_pd(a0, a0)), rr1 = _mm256_add_pd(rr1, _mm256_mul_pd(a1, a1));
                    cc0 = _mm256_add_pd(cc0, _mm256_mul_pd(b0, b0)), cc1 = _mm256_add_pd(cc1, _mm256_mul_pd(b1, b1));
                    rc0 = _mm256_add_pd(rc0, _mm256_mul_pd(a0, b0)), rc1 = _mm256_add_pd(rc1, _mm256_mul_pd(a1, b1));
                }
            }
            _mm256_store_pd(rr, rr0), _mm256_store_pd(rr + 4, rr1);
            _mm256_store_pd(cc, cc0), _mm256_store_pd(cc + 4, cc1);
            _mm256_store_pd(rc, rc0), _mm256_store_pd(rc + 4, rc1);
        }
#endif
        for (; j < d; ++j) {
            for (Eigen::Index l = 0; l < L; ++l) x[l] = r[l][j], y[l] = c[l][j];
            add_column(x, y, rr, cc, rc);
        }
        for (Eigen::Index l = 0; l < L && i0 + l < m; ++l) out[static_cast<std::size_t>(i0 + l)] = {rr[l], cc[l], rc[l]};
    }
}

}  // namespace

void score_reads(const Episode& e, ConstMatRef reads, std::vector<SlotScore>& by_slot, std::size_t first,
                 std::vector<Decision>* decisions, const CandidatePanel* panel, double radius) {
    const bool ball = std::isfinite(radius);
    // argmin_j ‖r − c_j‖² = argmin_j (‖c_j‖² − 2 r·c_j); ties go to the lower index.
    thread_local CandidatePanel own;  // reused from episode to episode; let go of below when large
    thread_local std::vector<int> nearest;
    thread_local RowMat dots;  // the full products, for the tie rule only
    if (!panel) own.build(e.candidates), panel = &own;
    const Eigen::Index d = reads.cols();
    nearest.resize(static_cast<std::size_t>(reads.rows()));
    nearest_candidates(reads, *panel, nearest.data());
    const bool ties = e.tie_tolerance > 0.0f;
    if (ties) candidate_dots(reads, *panel, dots);
    const float* sq = panel->norms();
    const auto score = [&](Eigen::Index i, Eigen::Index j) { return sq[j] - 2.0f * dots(i, j); };
    const auto statistic = [&](Eigen::Index i, Eigen::Index j) {  // the decision statistic, r·c as scored
        return score_dot(reads.row(i).data(), e.candidates.row(j).data(), d);
    };
    thread_local std::vector<TargetSums> sums;
    target_sums(e, reads, first, sums);
    for (Eigen::Index i = 0; i < reads.rows(); ++i) {
        const Eigen::Index best = nearest[static_cast<std::size_t>(i)];
        const std::size_t q = first + static_cast<std::size_t>(i);
        const int target = e.target[q];
        if (target < 0) {  // a key never written: only its decision statistic counts
            if (decisions) decisions->push_back({statistic(i, best), Decision::Absent});
            continue;
        }
        bool right = best == target;
        if (right && ties)  // the tie rule (Episode::tie_tolerance): a near-tie is a miss
            for (Eigen::Index j = 0; j < panel->n && right; ++j)
                if (j != target && score(i, j) - score(i, target) <=
                                       e.tie_tolerance * (e.candidates.row(j) - e.candidates.row(target)).squaredNorm())
                    right = false;
        // ‖r − c‖ in float overflows for |r| beyond ~1e19; redo those in double, so a huge
        // but finite read gives a huge but finite distance (never a silent inf in the CSV)
        const float dist = (reads.row(i) - e.candidates.row(target)).norm();
        const double target_dist = std::isfinite(dist)
                                       ? static_cast<double>(dist)
                                       : (reads.row(i).cast<double>() - e.candidates.row(target).cast<double>()).norm();
        // the magnitude readout's ball: |r − c_t| < radius |c_t| (‖c_t‖² as the panel holds it)
        if (ball && right && !(target_dist < radius * std::sqrt(static_cast<double>(sq[target])))) right = false;
        if (decisions) decisions->push_back({statistic(i, best), right ? Decision::PresentRight : Decision::PresentWrong});
        const int slot = e.slot[q];
        if (static_cast<std::size_t>(slot + 1) >= by_slot.size()) by_slot.resize(static_cast<std::size_t>(slot + 2));
        SlotScore& s = by_slot[static_cast<std::size_t>(slot + 1)];
        s.slot = slot;
        s.queries += 1;
        s.correct += right;
        s.target_dist_sum += target_dist;
        const TargetSums& t = sums[static_cast<std::size_t>(i)];
        const double norms = std::sqrt(t.rr) * std::sqrt(t.cc);
        s.target_cos_sum += norms > 0.0 ? t.rc / norms : 0.0;
    }
    if (dots.size() > (Eigen::Index{1} << 22)) dots.resize(0, 0);  // over 16 MiB: not kept between cells
    if (own.t.size() > (Eigen::Index{1} << 22)) own = CandidatePanel{};
}

namespace {

constexpr int kBinChunk = 512;                // bins of a candidate range compared at once
constexpr std::int64_t kCandidateBlock = 1024; // candidates drawn per range

}  // namespace

double spectral_episode_peak_bytes(std::int64_t n, int d, std::int64_t queries) {
    const double bins = d / 2 + 1, m = static_cast<double>(queries), c = sizeof(std::complex<float>);
    // the pair blocks; queries and reads (the weighted reads reuse the queries'); one
    // candidate range; the dot products and the candidates' norms
    return c * bins * (2.0 * SpectralMemory::kSpectraBlock + 2.0 * m + 1.0) + c * kBinChunk * kCandidateBlock +
           8.0 * (m + 1.0) * static_cast<double>(n);
}

bool score_spectral_episode(SpectralMemory& memory, const SpectralEpisode& e, std::vector<SlotScore>& by_slot, double radius) {
    const int d = e.d, bins = d / 2 + 1;
    const auto m = static_cast<std::int64_t>(e.target.size());
    using Spectrum = std::vector<std::complex<float>>;
    // Write: the pairs as drawn; each value's norm before normalising is kept for the scoring.
    std::vector<double> value_norm(static_cast<std::size_t>(e.n));
    memory.write_spectra(e.n, [&](std::int64_t first, std::int64_t rows, std::complex<float>* keys, std::complex<float>* values) {
        for (std::int64_t i = 0; i < rows; ++i) {
            key_spectrum(e, first + i, keys + i * bins);
            value_norm[static_cast<std::size_t>(first + i)] = value_spectrum(e, first + i, values + i * bins);
        }
    });
    // Read every query.
    Spectrum queries(static_cast<std::size_t>(m) * static_cast<std::size_t>(bins)), reads(queries.size()),
        scratch(static_cast<std::size_t>(bins));
    for (std::int64_t q = 0; q < m; ++q) query_spectrum(e, q, queries.data() + q * bins, scratch.data());
    memory.read_spectra(queries.data(), m, reads.data());
    std::vector<double> read_sq(static_cast<std::size_t>(m), 0.0);  // |r|², by Parseval
    for (std::int64_t q = 0; q < m; ++q)
        for (int b = 0; b < bins; ++b) {
            const std::complex<float> r = reads[static_cast<std::size_t>(q * bins + b)];
            if (!std::isfinite(r.real()) || !std::isfinite(r.imag())) return false;
            read_sq[static_cast<std::size_t>(q)] += parseval_weight(d, b) * std::norm(std::complex<double>(r));
        }
    // The reads weighted by w_b/d, as m × 2·bins floats (Re, Im interleaved), in the queries' buffer.
    for (std::int64_t q = 0; q < m; ++q)
        for (int b = 0; b < bins; ++b)
            queries[static_cast<std::size_t>(q * bins + b)] =
                reads[static_cast<std::size_t>(q * bins + b)] * static_cast<float>(parseval_weight(d, b));
    const Eigen::Map<const RowMat> weighted(reinterpret_cast<const float*>(queries.data()), m, 2 * Eigen::Index{bins});
    // r_q·v_j = Σ over bin ranges of (weighted range) · (v_j's range before normalising), / |v_j|
    Eigen::MatrixXd dots = Eigen::MatrixXd::Zero(m, e.n);
    Spectrum range(static_cast<std::size_t>(kCandidateBlock) * kBinChunk);
    for (int b0 = 0; b0 < bins; b0 += kBinChunk) {
        const int width = std::min(kBinChunk, bins - b0);
        for (std::int64_t j0 = 0; j0 < e.n; j0 += kCandidateBlock) {
            const std::int64_t count = std::min(kCandidateBlock, e.n - j0);
            for (std::int64_t j = 0; j < count; ++j) value_bins(e, j0 + j, b0, b0 + width, range.data() + j * width);
            const Eigen::Map<const RowMat> block(reinterpret_cast<const float*>(range.data()), count, 2 * Eigen::Index{width});
            const RowMat part = weighted.middleCols(2 * Eigen::Index{b0}, 2 * Eigen::Index{width}) * block.transpose();
            dots.middleCols(j0, count) += part.cast<double>();
        }
    }
    for (std::int64_t j = 0; j < e.n; ++j) dots.col(j) /= value_norm[static_cast<std::size_t>(j)];
    SlotScore& s = by_slot.empty() ? by_slot.emplace_back() : by_slot.front();  // slot −1: entry 0
    s.slot = -1;
    for (std::int64_t q = 0; q < m; ++q) {
        Eigen::Index best = 0;
        dots.row(q).maxCoeff(&best);  // the first of equal maxima
        const int target = e.target[static_cast<std::size_t>(q)];
        const double dot = dots(q, target), r_sq = read_sq[static_cast<std::size_t>(q)];
        const double dist = std::sqrt(std::max(0.0, r_sq - 2.0 * dot + 1.0));  // |v| = 1
        s.queries += 1;
        s.correct += (best == target) && (!std::isfinite(radius) || dist < radius);
        s.target_dist_sum += dist;
        s.target_cos_sum += r_sq > 0.0 ? dot / std::sqrt(r_sq) : 0.0;
    }
    return true;
}

namespace {

/// The last test episode this thread filled, and what names it. Episodes depend only
/// on (task spec, n, d, seed, split, index), never on the memory (tasks/task.hpp), so
/// the next cell of a group of cells that differ only in the memory (run_cells_unordered
/// runs such a group on one thread, one cell after the other) reads it as it is
/// instead of drawing it again: the same bytes, without the work.
struct LastEpisode {
    Spec task;
    TaskCell cell;
    std::int64_t index = -1;  // -1: names nothing (not yet filled, or a fill failed)
    Episode episode;           // reused: fill_episode keeps its buffers
    CandidatePanel panel;      // the episode's candidates as score_reads takes them, made with it

    const Episode& get(const Task& t, const TaskCell& c, std::int64_t i) {
        if (t.key_training()) {  // its episodes depend on the keys trained through this cell's memory
            index = -1;
            fill(t, c, i);
            return episode;
        }
        if (index == i && cell.n == c.n && cell.d == c.d && cell.seed == c.seed && task == t.spec()) return episode;
        index = -1;
        fill(t, c, i);
        task = t.spec(), cell = c, index = i;
        return episode;
    }
    /// Lets go of an episode too large to keep between cells (its memory is not counted in
    /// any cell's estimated peak): the next cell draws it again.
    void trim() {
        const auto floats = episode.keys.size() + episode.values.size() + episode.queries.size() + episode.candidates.size() +
                            panel.t.size();
        if (floats > kKeptFloats) episode = Episode{}, panel = CandidatePanel{}, index = -1;
    }
    void fill(const Task& t, const TaskCell& c, std::int64_t i) {
        t.fill_episode(c, Split::Test, i, episode);
        panel.build(episode.candidates);  // once for every memory that reads it
    }
    static constexpr Eigen::Index kKeptFloats = Eigen::Index{16} << 20;  // 64 MiB
};

thread_local LastEpisode last_episode;

}  // namespace

CellOutcome native_readout(Memory& memory, const Task& task, const TaskCell& cell, double radius) {
    CellOutcome out;
    std::vector<SlotScore> by_slot;
    RowMat reads, next, outputs;
    const int hops = task.hops();
    std::vector<Decision>* decisions = task.has_absent() ? &out.decisions : nullptr;
    auto* spectral = dynamic_cast<SpectralMemory*>(&memory);
    for (std::int64_t index = 0; index < task.test_episodes(cell); ++index) {
        if (spectral && spectral->takes_spectra() && hops == 1 && !decisions)
            if (const auto se = task.spectral_episode(cell, Split::Test, index)) {  // streamed, never materialised
                memory.reset();
                if (!score_spectral_episode(*spectral, *se, by_slot, radius)) {
                    out.ok = false;
                    out.message = "non-finite read in episode " + std::to_string(index);
                    return out;
                }
                out.state_floats = std::max(out.state_floats, memory.state_floats());
                continue;
            }
        const Episode& e = last_episode.get(task, cell, index);
        memory.reset();
        if (!e.read_at.empty()) {  // read as the stream is written: the causal form, its reads at read_at
            try {
                outputs.resize(e.keys.rows(), e.candidates.cols());
                memory.causal(e.queries, e.keys, e.values, TokenGates{}, outputs);
            } catch (const MemoryFailure& failure) {
                out.ok = false;
                out.message = "episode " + std::to_string(index) + ": " + failure.what();
                last_episode.trim();
                return out;
            }
            reads.resize(static_cast<Eigen::Index>(e.read_at.size()), e.candidates.cols());
            for (std::size_t i = 0; i < e.read_at.size(); ++i) reads.row(static_cast<Eigen::Index>(i)) = outputs.row(e.read_at[i]);
            if (!all_finite(reads.data(), reads.size())) {
                out.ok = false;
                out.message = "non-finite read in episode " + std::to_string(index);
                last_episode.trim();
                return out;
            }
            score_reads(e, reads, by_slot, 0, decisions, &last_episode.panel, radius);
            out.state_floats = std::max(out.state_floats, memory.state_floats());
            continue;
        }
        try {
            memory.write_batch(e.keys, e.values);
        } catch (const MemoryFailure& failure) {
            out.ok = false;
            out.message = "episode " + std::to_string(index) + ": " + failure.what();
            last_episode.trim();
            return out;
        }
        const Eigen::Index m = e.queries.rows();
        for (int hop = 0; hop < hops; ++hop) {  // one round for one-shot tasks
            reads.resize(m, e.candidates.cols());
            memory.read_batch(hop == 0 ? e.queries : next, reads, ReadOptions{e.hidden});
            if (!all_finite(reads.data(), reads.size())) {
                out.ok = false;
                out.message = "non-finite read in episode " + std::to_string(index) +
                              (hops > 1 ? " at hop " + std::to_string(hop + 1) : std::string());
                last_episode.trim();
                return out;
            }
            score_reads(e, reads, by_slot, static_cast<std::size_t>(hop) * static_cast<std::size_t>(m), decisions,
                        &last_episode.panel, radius);
            if (hop + 1 < hops) task.next_queries(e, reads, next);
        }
        out.state_floats = std::max(out.state_floats, memory.state_floats());
    }
    last_episode.trim();
    for (const auto& s : by_slot)
        if (s.queries > 0) out.slots.push_back(s);
    out.param_floats = memory.param_floats();
    return out;
}

}  // namespace memcap
