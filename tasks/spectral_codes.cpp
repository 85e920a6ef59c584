// memcap/tasks/spectral_codes.cpp — see spectral_codes.hpp.
#include "tasks/spectral_codes.hpp"

#include "core/fft.hpp"
#include "core/normal_stream.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace memcap {

namespace {

template <bool kSquares>
double draw_spectrum(std::uint64_t key, std::uint64_t position, int d, double sd, int bin_begin, int bin_end,
                     std::complex<float>* out) {
    const int bins = d / 2 + 1;
    if (d < 1 || bin_begin < 0 || bin_end > bins || bin_begin > bin_end)
        throw std::invalid_argument("gaussian_spectrum: bins [" + std::to_string(bin_begin) + ", " + std::to_string(bin_end) +
                                    ") of a width-" + std::to_string(d) + " code");
    auto* f = reinterpret_cast<float*>(out);  // std::complex<float> is two floats, Re then Im
    const auto at = [&](int bin) { return f + 2 * static_cast<std::ptrdiff_t>(bin - bin_begin); };
    double squares = 0.0;
    const auto draw = [&](std::uint64_t first, float* dst, std::size_t count, double scale) {
        normal_stream_fill(key, first, dst, count);  // the normals themselves; their squares, then the scale
        // eight running sums, each over every eighth normal, added in a fixed order at the
        // end: the same bits whatever the vector width (no reassociation), and no chain of
        // dependent additions
        double lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
        const auto s = static_cast<float>(scale * sd);
        std::size_t i = 0;
        if constexpr (!kSquares) {  // only the scale
            for (; i < count; ++i) dst[i] *= s;
            return;
        }
        for (; i + 8 <= count; i += 8)
            for (std::size_t k = 0; k < 8; ++k) {
                const double z = dst[i + k];
                lane[k] += z * z;
                dst[i + k] *= s;
            }
        for (std::size_t k = 0; i < count; ++i, ++k) {
            const double z = dst[i];
            lane[k] += z * z;
            dst[i] *= s;
        }
        squares += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    };
    const double full = std::sqrt(static_cast<double>(d)), half = std::sqrt(0.5 * static_cast<double>(d));
    if (bin_begin == 0 && bin_end > 0) {  // DC: real, N(0, d)
        draw(position, at(0), 1, full);
        at(0)[1] = 0.0f;
    }
    const int pair_begin = std::max(bin_begin, 1), pair_end = std::min(bin_end, (d + 1) / 2);
    if (pair_begin < pair_end)  // Re and Im, N(0, d/2) each
        draw(position + 2 * static_cast<std::uint64_t>(pair_begin) - 1, at(pair_begin),
             2 * static_cast<std::size_t>(pair_end - pair_begin), half);
    if (d % 2 == 0 && d >= 2 && bin_begin <= d / 2 && d / 2 < bin_end) {  // Nyquist: real, N(0, d)
        draw(position + static_cast<std::uint64_t>(d) - 1, at(d / 2), 1, full);
        at(d / 2)[1] = 0.0f;
    }
    return squares * sd * sd;
}

}  // namespace

double gaussian_spectrum(std::uint64_t key, std::uint64_t position, int d, double sd, int bin_begin, int bin_end,
                         std::complex<float>* out) {
    return draw_spectrum<true>(key, position, d, sd, bin_begin, bin_end, out);
}

double unit_spectrum(std::uint64_t key, std::uint64_t position, int d, std::complex<float>* out) {
    const int bins = d / 2 + 1;
    const double norm = std::sqrt(gaussian_spectrum(key, position, d, 1.0, 0, bins, out));
    const auto inv = static_cast<float>(1.0 / norm);
    for (int b = 0; b < bins; ++b) out[b] *= inv;
    return norm;
}

double key_spectrum(const SpectralEpisode& e, std::int64_t i, std::complex<float>* out) {
    return unit_spectrum(e.pairs_key, static_cast<std::uint64_t>(i) * static_cast<std::uint64_t>(e.d), e.d, out);
}

double value_spectrum(const SpectralEpisode& e, std::int64_t i, std::complex<float>* out) {
    return unit_spectrum(e.pairs_key, static_cast<std::uint64_t>(e.n + i) * static_cast<std::uint64_t>(e.d), e.d, out);
}

void value_bins(const SpectralEpisode& e, std::int64_t i, int bin_begin, int bin_end, std::complex<float>* out) {
    draw_spectrum<false>(e.pairs_key, static_cast<std::uint64_t>(e.n + i) * static_cast<std::uint64_t>(e.d), e.d, 1.0,
                         bin_begin, bin_end, out);  // the norm is value_spectrum's
}

void query_spectrum(const SpectralEpisode& e, std::int64_t q, std::complex<float>* out, std::complex<float>* scratch) {
    const int bins = e.d / 2 + 1;
    key_spectrum(e, e.target[static_cast<std::size_t>(q)], out);
    if (e.noise_sd > 0.0) {
        gaussian_spectrum(e.noise_key, static_cast<std::uint64_t>(q) * static_cast<std::uint64_t>(e.d), e.d, e.noise_sd,
                          0, bins, scratch);
        for (int b = 0; b < bins; ++b) out[b] += scratch[b];
    }
    double squares = 0.0;  // |k + ζ|² by Parseval
    for (int b = 0; b < bins; ++b) squares += parseval_weight(e.d, b) * std::norm(std::complex<double>(out[b]));
    const auto inv = static_cast<float>(1.0 / std::sqrt(squares));
    for (int b = 0; b < bins; ++b) out[b] *= inv;
}

void spectra_to_rows(const std::complex<float>* spectra, std::int64_t count, int d, RowMat& rows) {
    const RealFft fft(d);
    const auto bins = static_cast<std::ptrdiff_t>(fft.bins());
    rows.resize(count, d);
    const float inv = 1.0f / static_cast<float>(d);
    for (std::int64_t i = 0; i < count; ++i) {
        fft.inverse(spectra + i * bins, rows.row(i).data());
        rows.row(i) *= inv;
    }
}

}  // namespace memcap
