// memcap/memories/hrr/hrr.cpp — see hrr.hpp.
#include "memories/hrr/hrr.hpp"

#include "core/error.hpp"
#include "core/simd.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace memcap {
namespace {

double fft_flops(double dim) { return dim > 1 ? 2.5 * dim * std::log2(dim) : 0.0; }

// Re and Im of F m_j for every column j of m (D × d; identity when m is empty).
void column_spectra(const RealFft& fft, const RowMat& map, int d, Eigen::MatrixXf& re, Eigen::MatrixXf& im) {
    const int dim = fft.size(), bins = fft.bins();
    re.resize(bins, d), im.resize(bins, d);
    Vec column(dim);
    std::vector<std::complex<float>> spectrum(static_cast<std::size_t>(bins));
    for (int j = 0; j < d; ++j) {
        if (map.size() == 0) column.setZero(), column(j) = 1.0f;
        else column = map.col(j);
        fft.forward(column.data(), spectrum.data());
        for (int b = 0; b < bins; ++b) re(b, j) = spectrum[static_cast<std::size_t>(b)].real(), im(b, j) = spectrum[static_cast<std::size_t>(b)].imag();
    }
}

// sum += F k · F v over the bins: binding, in the Fourier domain. Written out on the
// interleaved floats (Re, Im) as the textbook product (ac − bd, ad + bc), which is what
// std::complex's operator* computes for finite values, but without its NaN-recovery
// branch (a call to __mulsc3), so the loop vectorises.
void bind_into(const std::complex<float>* fk, const std::complex<float>* fv, std::complex<float>* sum, int bins) {
    const auto* k = reinterpret_cast<const float*>(fk);
    const auto* v = reinterpret_cast<const float*>(fv);
    auto* s = reinterpret_cast<float*>(sum);
    for (int b = 0; b < 2 * bins; b += 2) {
        const float re = k[b] * v[b] - k[b + 1] * v[b + 1], im = k[b] * v[b + 1] + k[b + 1] * v[b];
        s[b] += re, s[b + 1] += im;
    }
}

// out = conj(F q) · F T: unbinding (circular correlation), before the inverse and 1/D;
// (a − bi)(c + di) = (ac + bd) + (ad − bc)i, written out as above
void unbind(const std::complex<float>* fq, const std::complex<float>* ft, std::complex<float>* out, int bins) {
    const auto* q = reinterpret_cast<const float*>(fq);
    const auto* t = reinterpret_cast<const float*>(ft);
    auto* o = reinterpret_cast<float*>(out);
    for (int b = 0; b < 2 * bins; b += 2) {
        const float re = q[b] * t[b] + q[b + 1] * t[b + 1], im = q[b] * t[b + 1] - q[b + 1] * t[b];
        o[b] = re, o[b + 1] = im;
    }
}

}  // namespace

Hrr::Dims Hrr::size(const MemoryShape& shape) {
    const std::int64_t dim = shape.budget_floats.value_or(shape.d_key);
    if (dim > std::numeric_limits<int>::max())
        throw UsageError("memory 'hrr': a trace of D = " + std::to_string(dim) +
                         " floats exceeds the largest FFT size supported (" +
                         std::to_string(std::numeric_limits<int>::max()) + "); lower the budget");
    Dims d{static_cast<int>(dim), shape.d_key, shape.d_value, dim != shape.d_key, dim != shape.d_value, false};
    // The factored batches need the maps' spectra; only worth building when they can win.
    d.spectra = write_flops(d.dim, shape.d_key, shape.d_value, 4096, true) <
                write_flops(d.dim, shape.d_key, shape.d_value, 4096, false);
    d.kept = shape.positional_keys && (d.key_map || d.value_map);
    return d;
}

Hrr::Hrr(const MemoryShape& shape, Rng& rng) : Hrr(shape, size(shape), rng) {}

Hrr::Hrr(const MemoryShape& shape, const Dims& dims, Rng& rng)
    : dim_(dims.dim), fft_(dim_), trace_(Vec::Zero(dim_)) {
    const double sd = 1.0 / std::sqrt(static_cast<double>(dim_));
    if (dims.key_map) {
        key_map_.resize(dim_, shape.d_key);
        rng.fill_normal(key_map_, sd);
    }
    if (dims.value_map) {
        value_map_.resize(dim_, shape.d_value);
        rng.fill_normal(value_map_, sd);
    }
    // The spectra are built on the first batch that takes the factored form: a cell that
    // never does (few items, or D = d) pays neither their d FFTs nor their memory.
    spectra_wanted_ = dims.spectra;
    kept_rows_ = dims.kept_rows();
}

bool Hrr::factored(double write_or_read_flops_factored, double per_item_flops) const {
    if (!spectra_wanted_ || !(write_or_read_flops_factored < per_item_flops)) return false;
    if (key_spec_re_.size() == 0) {  // built aside and kept only whole (an exception leaves none)
        Eigen::MatrixXf k_re, k_im, v_re, v_im;
        // without a map a side is as wide as the trace (D = d)
        column_spectra(fft_, key_map_, key_map_.size() ? static_cast<int>(key_map_.cols()) : dim_, k_re, k_im);
        column_spectra(fft_, value_map_, value_map_.size() ? static_cast<int>(value_map_.cols()) : dim_, v_re, v_im);
        value_spec_re_.swap(v_re), value_spec_im_.swap(v_im), key_spec_im_.swap(k_im), key_spec_re_.swap(k_re);
    }
    return true;
}

double Hrr::write_flops(double dim, double d_key, double d_value, double n, bool factored) {
    const double bins = std::floor(dim / 2) + 1;
    const double maps = (dim == d_key ? 0.0 : dim * d_key) + (dim == d_value ? 0.0 : dim * d_value);
    if (!factored)  // per item: map k and v in, F k and F v, Σ F k · F v; then one inverse
        return n * (2.0 * maps + 2.0 * fft_flops(dim) + 8.0 * bins) + fft_flops(dim) + 2.0 * dim;
    // G = Kᵀ V; A G (real and imaginary parts); rowsum((A G) · B) as complex products; one inverse
    return 2.0 * n * d_key * d_value + 4.0 * bins * d_key * d_value + 8.0 * bins * d_value + fft_flops(dim) + 2.0 * dim;
}

double Hrr::read_flops(double dim, double d_key, double d_value, double n, bool factored) {
    const double bins = std::floor(dim / 2) + 1;
    const double key_map = dim == d_key ? 0.0 : dim * d_key, value_map = dim == d_value ? 0.0 : dim * d_value;
    if (!factored)  // F T once; per query: map in, F q, conj(F q) · F T, inverse, scale, map out
        return fft_flops(dim) + n * (2.0 * (key_map + value_map) + 2.0 * fft_flops(dim) + 6.0 * bins + dim);
    if (value_map == 0.0)  // F T; conj(A) · F T; d_k inverse FFTs; Y / D; reads Q Yᵀ
        return fft_flops(dim) + 6.0 * bins * d_key + d_key * fft_flops(dim) + dim * d_key + 2.0 * n * d_key * d_value;
    // F T; Z = conj(A) · F T · w/D; Wᵀ = Re(Z)ᵀ Re(B) + Im(Z)ᵀ Im(B) (Parseval); reads Q Wᵀ
    return fft_flops(dim) + 2.0 * bins + 6.0 * bins * d_key + 4.0 * bins * d_key * d_value + 2.0 * n * d_key * d_value;
}

RowMat Hrr::map_in(ConstMatRef x, const RowMat& map) const {
    if (map.size() == 0) return x;
    return x * map.transpose();
}

void Hrr::write(ConstVecRef key, ConstVecRef value) {
    if (direct()) write_direct(key.transpose(), value.transpose());
    else write_per_item(key.transpose(), value.transpose());
}

void Hrr::write_batch(ConstMatRef keys, ConstMatRef values) {
    if (direct()) {
        write_direct(keys, values);
        return;
    }
    if (kept_rows_ > 0) {
        write_kept(keys, values);
        return;
    }
    const double n = double(keys.rows());
    if (factored(write_flops(dim_, keys.cols(), values.cols(), n, true),
                 write_flops(dim_, keys.cols(), values.cols(), n, false)))
        write_factored(keys, values);
    else
        write_per_item(keys, values);
}

void Hrr::add_spectrum(const std::complex<float>* sum) {
    Vec bound(dim_);
    fft_.inverse(sum, bound.data());
    trace_ += bound / static_cast<float>(dim_);
}

namespace {

/// The spectrum Σ_i F k_i · F v_i (bins = D/2 + 1 entries) of n pairs at D = d, a power of two
/// and a multiple of 16, sixteen pairs at a time: pair l of a batch in lane l of every vector
/// (the rows transposed in registers), one complex FFT of z = k + i v per pair, radix 2 in
/// index order, F k_b = (Z_b + conj Z_{D−b}) / 2 and F v_b = (Z_b − conj Z_{D−b}) / 2i.
/// The lanes' sums are added in lane order at the end; a batch's missing pairs are zeros.
template <int dim>
void lane_spectrum_sum(ConstMatRef keys, ConstMatRef values, std::complex<float>* sum) {
    constexpr int bins = dim / 2 + 1;
    struct Tables {  // the twiddles e^{−2πi j/D}, j < D/2 (1 and −i taken exactly), and the bit reversal
        float w_re[dim / 2], w_im[dim / 2];
        int reversed[dim];
        Tables() {
            // cos(2π m/64), m = 0 … 16, as float literals: the twiddles are the same bits in every
            // build (a cos folded at compile time and one from libm at run time can differ)
            static constexpr float kCos64[17] = {
                1.0f,         0.99518472f,   0.980785251f, 0.956940353f, 0.923879504f, 0.881921291f,
                0.831469595f, 0.773010433f,  0.707106769f, 0.634393275f, 0.555570245f, 0.471396744f,
                0.382683426f, 0.290284663f,  0.195090324f, 0.0980171412f, 0.0f};
            const auto cos64 = [](int m) { return m <= 16 ? kCos64[m] : -kCos64[32 - m]; };  // m < 32
            for (int j = 0; j < dim / 2; ++j) {
                const int m = j * (64 / dim);                        // the angle in 64ths of a turn
                w_re[j] = cos64(m);
                w_im[j] = -(m <= 16 ? kCos64[16 - m] : kCos64[m - 16]);  // −sin(2π m/64)
            }
            int bits = 0;
            while ((1 << bits) < dim) ++bits;
            for (int t = 0; t < dim; ++t) {
                reversed[t] = 0;
                for (int b = 0; b < bits; ++b) reversed[t] |= ((t >> b) & 1) << (bits - 1 - b);
            }
        }
    };
    static const Tables tables;
    const float* const w_re = tables.w_re;
    const float* const w_im = tables.w_im;
    const int* const reversed = tables.reversed;
    simd::Floats re[dim], im[dim], s_re[bins] = {}, s_im[bins] = {};
    const Eigen::Index n = keys.rows();
    for (Eigen::Index i0 = 0; i0 < n; i0 += simd::kLanes) {
        const Eigen::Index count = std::min<Eigen::Index>(simd::kLanes, n - i0);
        // z_t = k_t + i v_t, in bit-reversed order: component t of the batch's pairs, a lane each
        const auto gather = [&](ConstMatRef rows, simd::Floats* out) {
            for (int k0 = 0; k0 < dim; k0 += simd::kLanes) {
                simd::Floats x[simd::kLanes];
                for (int l = 0; l < simd::kLanes; ++l) x[l] = l < count ? simd::load(rows.row(i0 + l).data() + k0) : simd::Floats{};
                simd::transpose16(x);
                for (int k = 0; k < simd::kLanes; ++k) out[reversed[k0 + k]] = x[k];
            }
        };
        gather(keys, re), gather(values, im);
        for (int len = 2; len <= dim; len *= 2) {  // radix-2 butterflies, decimation in time
            const int half = len / 2, step = dim / len;
            for (int a = 0; a < dim; a += len) {  // j = 0: w = 1
                const simd::Floats tr = re[a + half], ti = im[a + half];
                re[a + half] = re[a] - tr, im[a + half] = im[a] - ti;
                re[a] = re[a] + tr, im[a] = im[a] + ti;
            }
            if (half >= 2)
                for (int a = half / 2; a < dim; a += len) {  // j = half / 2: w = −i, (x + iy)(−i) = y − ix
                    const simd::Floats tr = im[a + half], ti = -re[a + half];
                    re[a + half] = re[a] - tr, im[a + half] = im[a] - ti;
                    re[a] = re[a] + tr, im[a] = im[a] + ti;
                }
            for (int j = 1; j < half; ++j) {
                if (2 * j == half) continue;
                const simd::Floats wr = simd::broadcast(w_re[j * step]);
                const simd::Floats wi = simd::broadcast(w_im[j * step]);
                for (int a = j; a < dim; a += len) {
                    const int ua = a, ub = a + half;
                    const simd::Floats tr = re[ub] * wr - im[ub] * wi, ti = re[ub] * wi + im[ub] * wr;
                    re[ub] = re[ua] - tr, im[ub] = im[ua] - ti;
                    re[ua] = re[ua] + tr, im[ua] = im[ua] + ti;
                }
            }
        }
        for (int b = 0; b < bins; ++b) {  // 4 F k_b · F v_b, summed per lane (the 1/4 at the end)
            const int ub = b, um = (dim - b) % dim;
            const simd::Floats k_re = re[ub] + re[um], k_im = im[ub] - im[um];  // 2 F k_b
            const simd::Floats v_re = im[ub] + im[um], v_im = re[um] - re[ub];  // 2 F v_b
            s_re[ub] = s_re[ub] + (k_re * v_re - k_im * v_im);
            s_im[ub] = s_im[ub] + (k_re * v_im + k_im * v_re);
        }
    }
    for (int b = 0; b < bins; ++b) {
        float x = 0.0f, y = 0.0f;
        for (int l = 0; l < simd::kLanes; ++l) x += s_re[b][l], y += s_im[b][l];
        sum[b] = {0.25f * x, 0.25f * y};
    }
}

}  // namespace

void Hrr::write_direct(ConstMatRef keys, ConstMatRef values) {
    if (dim_ == 16 || dim_ == 32 || dim_ == 64) {  // the FFT form, sixteen pairs a vector
        Spectrum sum(static_cast<std::size_t>(dim_ / 2 + 1));
        if (dim_ == 16) lane_spectrum_sum<16>(keys, values, sum.data());
        else if (dim_ == 32) lane_spectrum_sum<32>(keys, values, sum.data());
        else lane_spectrum_sum<64>(keys, values, sum.data());
        add_spectrum(sum.data());
        return;
    }
    square_.resize(dim_, dim_);
    if (dim_ % simd::kLanes == 0)  // G = Kᵀ V: G_{jl} = Σ_i k_ij v_il, on register tiles (core/simd.hpp)
        simd::add_transposed_product(keys.data(), keys.outerStride(), values.data(), values.outerStride(), keys.rows(),
                                     square_.data(), dim_, dim_, dim_, /*accumulate=*/false);
    else
        square_.noalias() = keys.transpose() * values;
    // T_t += Σ_j G_{j,(t−j) mod D}: row j of G, shifted right by j (wrapping), summed over j
    // in order into `bound`, which is then added to the trace (as the FFT form adds its inverse)
    float* const t = trace_.data();
    float b[kDirectDim] = {};  // `bound`: dim_ ≤ kDirectDim floats, on the stack
    for (int j = 0; j < dim_; ++j) {
        const float* g = square_.row(j).data();
        for (int i = j; i < dim_; ++i) b[i] += g[i - j];
        for (int i = 0; i < j; ++i) b[i] += g[i - j + dim_];
    }
    for (int i = 0; i < dim_; ++i) t[i] += b[i];
}

void Hrr::read_direct(ConstMatRef queries, MatRef out) const {
    // (q ⋆ T)_t = Σ_j q_j T_{(t+j) mod D}: the reads are Q C with C_{jt} = T_{(j+t) mod D}
    // (C is symmetric), row j of C the trace rotated left by j — which is the trace written
    // twice, T T, read from position j. At D a multiple of 16 those windows are copied a
    // vector at a time into C (the register tile's loads of a panel whose rows are one float
    // apart straddle cache lines: measured 1.7× slower than copying and reading C's aligned
    // rows), then the product on register tiles; otherwise Eigen's product gets C.
    const float* const t = trace_.data();
    square_.resize(dim_, dim_);
    if (dim_ % simd::kLanes == 0) {
        float twice[2 * kDirectDim];
        std::copy(t, t + dim_, twice);
        std::copy(t, t + dim_, twice + dim_);
        for (int j = 0; j < dim_; ++j)
            for (int v = 0; v < dim_; v += simd::kLanes) simd::store(square_.row(j).data() + v, simd::load(twice + j + v));
        simd::product(queries.data(), queries.outerStride(), square_.data(), dim_, dim_, out.data(), out.outerStride(),
                      queries.rows(), dim_);
        return;
    }
    for (int j = 0; j < dim_; ++j) {
        float* c = square_.row(j).data();
        std::copy(t + j, t + dim_, c);
        std::copy(t, t + j, c + (dim_ - j));
    }
    out.noalias() = queries * square_;
}

void Hrr::write_per_item(ConstMatRef keys, ConstMatRef values) {
    // Rows enter as they are where D = d (no copy: at D = 2^16 an episode's keys are GBs), else mapped in.
    RowMat k_in, v_in;
    if (key_map_.size()) k_in = map_in(keys, key_map_);
    if (value_map_.size()) v_in = map_in(values, value_map_);
    const ConstMatRef k = key_map_.size() ? ConstMatRef(k_in) : keys, v = value_map_.size() ? ConstMatRef(v_in) : values;
    const int bins = fft_.bins();
    Spectrum fk(static_cast<std::size_t>(bins)), fv(fk.size()), sum(fk.size(), {0.0f, 0.0f});
    for (Eigen::Index i = 0; i < k.rows(); ++i) {  // Σ_i F k_i · F v_i, then one inverse FFT
        fft_.forward(k.row(i).data(), fk.data());
        fft_.forward(v.row(i).data(), fv.data());
        bind_into(fk.data(), fv.data(), sum.data(), bins);
    }
    add_spectrum(sum.data());
}

void Hrr::write_spectra(std::int64_t count, const SpectraSource& draw) {
    if (key_map_.size() || value_map_.size())
        throw std::logic_error("hrr: write_spectra needs D = d (no maps)");
    const int bins = fft_.bins();
    const auto block = static_cast<std::size_t>(kSpectraBlock) * static_cast<std::size_t>(bins);
    Spectrum keys(block), values(block), sum(static_cast<std::size_t>(bins), {0.0f, 0.0f});
    for (std::int64_t first = 0; first < count; first += kSpectraBlock) {
        const std::int64_t rows = std::min(kSpectraBlock, count - first);
        draw(first, rows, keys.data(), values.data());
        for (std::int64_t i = 0; i < rows; ++i)
            bind_into(keys.data() + i * bins, values.data() + i * bins, sum.data(), bins);
    }
    add_spectrum(sum.data());
}

void Hrr::read_spectra(const std::complex<float>* queries, std::int64_t count, std::complex<float>* reads) const {
    if (key_map_.size() || value_map_.size())
        throw std::logic_error("hrr: read_spectra needs D = d (no maps)");
    const int bins = fft_.bins();
    Spectrum ft(static_cast<std::size_t>(bins));
    fft_.forward(trace_.data(), ft.data());
    // read(q) = irfft(conj(F q) · F T) / D, and FFTW's inverse is D times the true one: its spectrum is conj(F q) · F T
    for (std::int64_t i = 0; i < count; ++i) unbind(queries + i * bins, ft.data(), reads + i * bins, bins);
}

const std::complex<float>* Hrr::row_spectrum(const float* row, int cols, const RowMat& map, Kept& kept, Spectrum& scratch) const {
    const int bins = fft_.bins();
    std::string bytes(reinterpret_cast<const char*>(row), static_cast<std::size_t>(cols) * sizeof(float));
    if (const auto it = kept.at.find(bytes); it != kept.at.end())
        return kept.spectra.data() + it->second * bins;
    const Eigen::Map<const Vec> x(row, cols);
    Vec mapped;
    if (map.size()) mapped.noalias() = map * x;  // one row at a time: its bits do not depend on other rows
    const float* in = map.size() ? mapped.data() : row;
    const auto count = static_cast<std::int64_t>(kept.at.size());
    if (count >= kept_rows_) {
        fft_.forward(in, scratch.data());
        return scratch.data();
    }
    kept.spectra.resize(static_cast<std::size_t>(count + 1) * static_cast<std::size_t>(bins));
    std::complex<float>* out = kept.spectra.data() + count * bins;
    fft_.forward(in, out);
    kept.at.emplace(std::move(bytes), count);
    return out;
}

void Hrr::write_kept(ConstMatRef keys, ConstMatRef values) {
    const int bins = fft_.bins();
    Spectrum sum(static_cast<std::size_t>(bins), {0.0f, 0.0f}), fk(sum.size()), fv(sum.size());
    for (Eigen::Index i = 0; i < keys.rows(); ++i) {
        // a key's spectrum is taken first: a value's may reuse a scratch buffer of its own
        const std::complex<float>* k = row_spectrum(keys.row(i).data(), static_cast<int>(keys.cols()), key_map_, kept_keys_, fk);
        const std::complex<float>* v = row_spectrum(values.row(i).data(), static_cast<int>(values.cols()), value_map_, kept_values_, fv);
        bind_into(k, v, sum.data(), bins);
    }
    add_spectrum(sum.data());
}

double Hrr::kept_read_flops(double dim, double d_value, double n, bool value_map) {
    const double bins = std::floor(dim / 2) + 1;
    return fft_flops(dim) + n * (6.0 * bins + fft_flops(dim) + dim + (value_map ? 2.0 * dim * d_value : 0.0));
}

double Hrr::kept_write_flops(double dim, double n) {
    const double bins = std::floor(dim / 2) + 1;
    return n * 8.0 * bins + fft_flops(dim) + 2.0 * dim;  // Σ F k · F v, one inverse, T += / D
}

void Hrr::write_factored(ConstMatRef keys, ConstMatRef values) {
    const Eigen::MatrixXf g = keys.transpose() * values;  // d_k × d_v: Σ_i k_i v_iᵀ
    const Eigen::MatrixXf h_re = key_spec_re_ * g, h_im = key_spec_im_ * g;  // A G, bins × d_v
    // Σ_l (A G)_{bl} B_{bl}, complex: (h_re + i h_im)(b_re + i b_im)
    const Eigen::VectorXf s_re = (h_re.array() * value_spec_re_.array() - h_im.array() * value_spec_im_.array()).rowwise().sum();
    const Eigen::VectorXf s_im = (h_re.array() * value_spec_im_.array() + h_im.array() * value_spec_re_.array()).rowwise().sum();
    Spectrum sum(static_cast<std::size_t>(fft_.bins()));
    for (std::size_t b = 0; b < sum.size(); ++b) sum[b] = {s_re(static_cast<Eigen::Index>(b)), s_im(static_cast<Eigen::Index>(b))};
    add_spectrum(sum.data());
}

void Hrr::read(ConstVecRef query, VecRef out) const {
    RowMat o(1, out.size());
    if (direct()) read_direct(query.transpose(), o);
    else read_per_query(query.transpose(), o);
    out = o.row(0).transpose();
}

void Hrr::read_batch(ConstMatRef queries, MatRef out, const ReadOptions& options) const {
    require_no_hidden(options);
    if (direct()) {
        read_direct(queries, out);
        return;
    }
    const double n = double(queries.rows());
    const double one_by_one = kept_rows_ > 0 ? kept_read_flops(dim_, out.cols(), n, value_map_.size() > 0)
                                             : read_flops(dim_, queries.cols(), out.cols(), n, false);
    if (factored(read_flops(dim_, queries.cols(), out.cols(), n, true), one_by_one))
        read_factored(queries, out);
    else
        read_per_query(queries, out);
}

void Hrr::backward(ConstMatRef keys, ConstMatRef values, ConstMatRef queries, ConstMatRef d_reads, MatRef d_keys,
                   MatRef d_queries) const {
    const RowMat v = map_in(values, value_map_), q = map_in(queries, key_map_);
    const RowMat g = value_map_.size() == 0 ? RowMat(d_reads) : RowMat(d_reads * value_map_.transpose());  // m × D
    const auto bins = static_cast<std::size_t>(fft_.bins());
    const float inv_dim = 1.0f / static_cast<float>(dim_);
    Spectrum ft(bins), fg(bins), fx(bins), d_trace(bins, {0.0f, 0.0f});
    fft_.forward(trace_.data(), ft.data());
    RowMat d_q(q.rows(), dim_), d_k(keys.rows(), dim_);
    for (Eigen::Index i = 0; i < q.rows(); ++i) {
        fft_.forward(g.row(i).data(), fg.data());
        fft_.forward(q.row(i).data(), fx.data());
        for (std::size_t b = 0; b < bins; ++b) {
            d_trace[b] += fx[b] * fg[b];          // F ∂T = Σ_i F q'_i · F g_i
            fx[b] = std::conj(fg[b]) * ft[b];     // F ∂q'_i
        }
        fft_.inverse(fx.data(), d_q.row(i).data());
    }
    for (Eigen::Index i = 0; i < v.rows(); ++i) {
        fft_.forward(v.row(i).data(), fx.data());
        for (std::size_t b = 0; b < bins; ++b) fx[b] = std::conj(fx[b]) * d_trace[b];
        fft_.inverse(fx.data(), d_k.row(i).data());
    }
    d_q *= inv_dim;  // irfft = inverse / D
    d_k *= inv_dim;
    if (key_map_.size() == 0) {
        d_queries = d_q;
        d_keys = d_k;
    } else {  // rows mapped in as x P_kᵀ: ∂x = ∂x' P_k
        d_queries.noalias() = d_q * key_map_;
        d_keys.noalias() = d_k * key_map_;
    }
}

void Hrr::read_per_query(ConstMatRef queries, MatRef out) const {
    const int bins = fft_.bins();
    Spectrum ft(static_cast<std::size_t>(bins)), fq(ft.size());
    fft_.forward(trace_.data(), ft.data());
    RowMat r(queries.rows(), dim_);
    if (kept_rows_ > 0) {  // positional keys: the queries are keys, their spectra kept (write_kept)
        Spectrum scratch(ft.size());
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            unbind(row_spectrum(queries.row(i).data(), static_cast<int>(queries.cols()), key_map_, kept_keys_, scratch),
                   ft.data(), fq.data(), bins);
            fft_.inverse(fq.data(), r.row(i).data());
        }
    } else {
        RowMat q_in;
        if (key_map_.size()) q_in = map_in(queries, key_map_);
        const ConstMatRef q = key_map_.size() ? ConstMatRef(q_in) : queries;
        for (Eigen::Index i = 0; i < q.rows(); ++i) {
            fft_.forward(q.row(i).data(), fq.data());
            unbind(fq.data(), ft.data(), fq.data(), bins);
            fft_.inverse(fq.data(), r.row(i).data());
        }
    }
    r /= static_cast<float>(dim_);
    if (value_map_.size() == 0) out = r;
    else out.noalias() = r * value_map_;  // P_vᵀ applied to each row
}

void Hrr::read_factored(ConstMatRef queries, MatRef out) const {
    const int bins = fft_.bins();
    const auto d_key = static_cast<int>(queries.cols());
    Spectrum ft(static_cast<std::size_t>(bins));
    fft_.forward(trace_.data(), ft.data());
    if (value_map_.size() == 0) {
        // Column j of Y = irfft(conj(A e_j) · F T): the read of the unit query e_j, before 1/D.
        Spectrum x(ft.size());
        RowMat y(d_key, dim_);  // row j = column j of Y
        for (int j = 0; j < d_key; ++j) {
            for (int b = 0; b < bins; ++b)
                x[static_cast<std::size_t>(b)] = std::complex<float>(key_spec_re_(b, j), -key_spec_im_(b, j)) * ft[static_cast<std::size_t>(b)];
            fft_.inverse(x.data(), y.row(j).data());
        }
        y /= static_cast<float>(dim_);
        out.noalias() = queries * y;  // reads r_i = Y q_i, all at once
        return;
    }
    // W = P_vᵀ Y / D without inverse FFTs, by Parseval: for a real p and y = irfft(Z),
    // pᵀy = Σ_b w_b Re(Z_b conj(F p)_b) over the bins, w = 1 at DC (and Nyquist), else 2.
    // With Z = conj(A) · F T scaled by w/D, Wᵀ = Re(Z)ᵀ Re(B) + Im(Z)ᵀ Im(B), B = F P_v.
    Eigen::VectorXf f_re(bins), f_im(bins);
    for (int b = 0; b < bins; ++b) {
        const bool single = b == 0 || (dim_ % 2 == 0 && b == bins - 1);
        const float scale = (single ? 1.0f : 2.0f) / static_cast<float>(dim_);
        f_re(b) = scale * ft[static_cast<std::size_t>(b)].real();
        f_im(b) = scale * ft[static_cast<std::size_t>(b)].imag();
    }
    // conj(A) · f = (A_re f_re + A_im f_im) + i (A_re f_im − A_im f_re), per bin
    const Eigen::MatrixXf z_re = key_spec_re_.array().colwise() * f_re.array() + key_spec_im_.array().colwise() * f_im.array();
    const Eigen::MatrixXf z_im = key_spec_re_.array().colwise() * f_im.array() - key_spec_im_.array().colwise() * f_re.array();
    Eigen::MatrixXf wt = z_re.transpose() * value_spec_re_;  // d_k × d_v
    wt.noalias() += z_im.transpose() * value_spec_im_;
    out.noalias() = queries * wt;  // r_i = W q_i for every query: Q Wᵀ
}

}  // namespace memcap
