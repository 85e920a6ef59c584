// memcap/memories/precision.cpp — see precision.hpp.
#include "memories/precision.hpp"

#include "core/error.hpp"
#include "memories/registry.hpp"
#include "memories/spectral_memory.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#ifdef __F16C__
#include <immintrin.h>
#endif

namespace memcap {

const std::vector<std::string>& precision_names() {
    static const std::vector<std::string> names{"fp32", "bf16", "fp16", "int8", "int4"};
    return names;
}

ParamInfo precision_param() {
    ParamInfo p = optional_param(choice_param(
        kPrecisionKey, precision_names(),
        "storage precision of the state (fp32 = as computed; bf16, fp16; int8, int4 with one fp32 scale per 32 "
        "floats); the budget counts its bits"));
    p.same_as_none = "fp32";
    p.best = precision_names();
    return p;
}

Precision parse_precision(const std::string& name) {
    const auto& names = precision_names();
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
        std::string known;
        for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
        throw UsageError("unknown precision '" + name + "' (known: " + known + ")");
    }
    return static_cast<Precision>(it - names.begin());
}

const std::string& precision_name(Precision p) { return precision_names()[static_cast<std::size_t>(p)]; }

int precision_bits(Precision p) {
    switch (p) {
    case Precision::fp32: return 32;
    case Precision::bf16:
    case Precision::fp16: return 16;
    case Precision::int8: return 8;
    case Precision::int4: return 4;
    }
    return 32;
}

bool is_integer(Precision p) { return p == Precision::int8 || p == Precision::int4; }

Precision spec_precision(const Spec& memory) {
    return memory.has(kPrecisionKey) ? parse_precision(memory.text(kPrecisionKey)) : Precision::fp32;
}

namespace {

std::uint32_t bits_of(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}
float float_of(std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

// bfloat16: the top 16 bits of a float, rounded to nearest even (inf and NaN kept). Branch-free,
// so the loop over a state vectorises.
inline float round_bf16(float x) {
    const std::uint32_t u = bits_of(x);
    const std::uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u;
    return float_of((u & 0x7f800000u) == 0x7f800000u ? u : rounded);
}

// IEEE half: 10 mantissa bits, exponents −14..15, subnormals down to 2^−24, round to nearest even;
// beyond the largest half (65504, rounding included) the value is ±infinity, as a conversion gives.
float round_fp16(float x) {
#ifdef __FLT16_MAX__
    return static_cast<float>(static_cast<_Float16>(x));  // the conversion itself (F16C / AVX512-FP16, or libgcc)
#else
    if (!std::isfinite(x)) return x;
    const float a = std::fabs(x);
    if (a >= 65520.0f) return std::copysign(std::numeric_limits<float>::infinity(), x);  // rounds past 65504
    if (a == 0.0f) return x;
    int e;
    std::frexp(a, &e);                     // a = m 2^e, m in [0.5, 1)
    const int exp = std::max(e - 1, -14);  // the half's exponent (subnormals share −14)
    const float quantum = std::ldexp(1.0f, exp - 10);
    // a / quantum is exact (a power of two), nearbyint rounds half to even in the default mode.
    return std::copysign(std::nearbyint(a / quantum) * quantum, x);
#endif
}

// Symmetric absmax blocks: q = round(x · L / m) in [−L, L] (half to even), stored q · (m / L).
void round_blocks(float* x, std::int64_t n, float levels) {
    for (std::int64_t start = 0; start < n; start += kScaleBlock) {
        const std::int64_t end = std::min<std::int64_t>(n, start + kScaleBlock);
        // The largest magnitude as the largest of the magnitudes' bit patterns (ordered as the
        // floats are for non-negative values; inf and NaN above every finite one): an integer
        // max, which vectorises where a float max with NaN semantics would not.
        std::uint32_t top = 0;
        for (std::int64_t i = start; i < end; ++i) top = std::max(top, bits_of(x[i]) & 0x7fffffffu);
        if (top >= 0x7f800000u || top == 0) continue;  // a non-finite block is left for the cell to report
        const float m = float_of(top);
        const float scale = m / levels, inverse = levels / m;
        if (!(scale >= std::numeric_limits<float>::min())) {  // below the smallest normal scale: the block is 0
            std::fill(x + start, x + end, 0.0f);
            continue;
        }
        for (std::int64_t i = start; i < end; ++i) x[i] = std::rint(x[i] * inverse) * scale;
    }
}

}  // namespace

void round_to(Precision p, float* x, std::int64_t n) {
    switch (p) {
    case Precision::fp32: return;
    case Precision::bf16:
        for (std::int64_t i = 0; i < n; ++i) x[i] = round_bf16(x[i]);
        return;
    case Precision::fp16: {
        std::int64_t i = 0;
#ifdef __F16C__
        // The same IEEE conversion eight at a time (vcvtps2ph rounds to nearest even, saturates to inf).
        for (; i + 8 <= n; i += 8) {
            const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            _mm256_storeu_ps(x + i, _mm256_cvtph_ps(h));
        }
#endif
        for (; i < n; ++i) x[i] = round_fp16(x[i]);
        return;
    }
    case Precision::int8: return round_blocks(x, n, 127.0f);
    case Precision::int4: return round_blocks(x, n, 7.0f);
    }
}

std::int64_t flat_bits(Precision p, std::int64_t floats) {
    const std::int64_t scales = is_integer(p) ? (floats + kScaleBlock - 1) / kScaleBlock : 0;
    return floats * precision_bits(p) + scales * kScaleBits;
}

std::int64_t row_bits(Precision p, int d_key, int d_value) { return flat_bits(p, d_key) + flat_bits(p, d_value); }

std::int64_t flat_elements(Precision p, std::int64_t bits) {
    if (bits <= 0) return 0;
    const int b = precision_bits(p);
    if (!is_integer(p)) return bits / b;
    const std::int64_t block = std::int64_t{kScaleBlock} * b + kScaleBits;  // bits of a full block
    const std::int64_t full = bits / block, rest = bits - full * block;
    const std::int64_t tail = rest > kScaleBits ? std::min<std::int64_t>(kScaleBlock - 1, (rest - kScaleBits) / b) : 0;
    return full * kScaleBlock + tail;
}

std::int64_t state_bits(Precision p, const MemorySize& size, const MemoryShape& shape, std::int64_t state_floats) {
    if (size.floats_per_write > 0 && state_floats % size.floats_per_write == 0 &&
        size.floats_per_write == std::int64_t{shape.d_key} + shape.d_value)
        return state_floats / size.floats_per_write * row_bits(p, shape.d_key, shape.d_value);
    return flat_bits(p, state_floats);
}

namespace {

/// A memory held at a storage precision: the rules of precision.hpp around any backend. It takes
/// codes as spectra when the backend does and its state is rounded whole (HRR): pair by pair, each
/// written through the backend's write_spectra and the state rounded after it, as write_batch does.
class StoredAt final : public Memory, public SpectralMemory {
public:
    StoredAt(std::unique_ptr<Memory> inner, Precision p, bool grows)
        : inner_(std::move(inner)), spectral_(grows ? nullptr : dynamic_cast<SpectralMemory*>(inner_.get())), p_(p),
          grows_(grows) {
        if (!grows_ && inner_->mutable_state().size() != inner_->state_floats())
            throw std::logic_error("a memory held at " + precision_name(p) +
                                   " must give a writable view of its whole state (Memory::mutable_state)");
    }

    bool takes_spectra() const override { return spectral_ && spectral_->takes_spectra(); }
    void write_spectra(std::int64_t count, const SpectraSource& draw) override {
        for (std::int64_t i = 0; i < count; ++i) {
            spectral_->write_spectra(1, [&](std::int64_t, std::int64_t, std::complex<float>* keys, std::complex<float>* values) {
                draw(i, 1, keys, values);
            });
            StateRef s = inner_->mutable_state();
            round_to(p_, s.data(), s.size());
        }
    }
    void read_spectra(const std::complex<float>* queries, std::int64_t count, std::complex<float>* reads) const override {
        spectral_->read_spectra(queries, count, reads);
    }

    void reset() override { inner_->reset(); }
    void write(ConstVecRef key, ConstVecRef value) override {
        if (grows_) {
            key_ = key, value_ = value;
            round_to(p_, key_.data(), key_.size());
            round_to(p_, value_.data(), value_.size());
            inner_->write(key_, value_);
            return;
        }
        inner_->write(key, value);
        StateRef s = inner_->mutable_state();
        round_to(p_, s.data(), s.size());
    }
    void write_gated(ConstVecRef key, ConstVecRef value, const TokenGate& gate) override {
        if (grows_) {
            key_ = key, value_ = value;
            round_to(p_, key_.data(), key_.size());
            round_to(p_, value_.data(), value_.size());
            inner_->write_gated(key_, value_, gate);
            return;
        }
        inner_->write_gated(key, value, gate);
        StateRef s = inner_->mutable_state();
        round_to(p_, s.data(), s.size());
    }
    void write_batch(ConstMatRef keys, ConstMatRef values) override {
        if (!grows_) {
            for (Eigen::Index i = 0; i < keys.rows(); ++i) write(keys.row(i).transpose(), values.row(i).transpose());
            return;
        }
        // Rows are rounded one by one (a key's and a value's blocks are their own), then appended at once.
        keys_ = keys, values_ = values;
        for (Eigen::Index i = 0; i < keys_.rows(); ++i) {
            round_to(p_, keys_.row(i).data(), keys_.cols());
            round_to(p_, values_.row(i).data(), values_.cols());
        }
        inner_->write_batch(keys_, values_);
    }
    void read(ConstVecRef query, VecRef out) const override { inner_->read(query, out); }
    void read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options = {}) const override {
        inner_->read_batch(queries, out, options);
    }
    std::int64_t state_floats() const override { return inner_->state_floats(); }
    ConstStateView state() const override { return inner_->state(); }
    std::int64_t param_floats() const override { return inner_->param_floats(); }

private:
    std::unique_ptr<Memory> inner_;
    SpectralMemory* spectral_;  // inner_ as a SpectralMemory, when its state is rounded whole
    Precision p_;
    bool grows_;
    Vec key_, value_;
    RowMat keys_, values_;
};

}  // namespace

std::unique_ptr<Memory> with_precision(std::unique_ptr<Memory> inner, Precision p, bool grows) {
    if (p == Precision::fp32) return inner;
    return std::make_unique<StoredAt>(std::move(inner), p, grows);
}

}  // namespace memcap
