// memcap/tasks/spectral_codes.hpp — Gaussian codes drawn in the Fourier domain.
//
// A code of width d ≥ kSpectralWidth is drawn as its spectrum, never as d normals in
// the time domain followed by an FFT: a memory that works in the Fourier domain (HRR
// at D = d) then takes the spectrum as it is, and the scoring compares spectra by
// Parseval, so an episode is never materialised and no code goes through an FFT.
//
// Exact in distribution. For z ~ N(0, I_d) the (unnormalised, FFTW) real DFT
// Z_b = Σ_t z_t e^{−2πi bt/d}, b = 0 … ⌊d/2⌋, is a linear image of z with independent
// parts:
//     Z_0                  ~ N(0, d)                    (real)
//     Z_{d/2} (d even)     ~ N(0, d)                    (real, the Nyquist bin)
//     Re Z_b, Im Z_b       ~ N(0, d/2) each, 0 < b < d/2 (all independent)
// — d real numbers in all, so drawing them from d normals and inverting gives z exactly
// N(0, I_d) (a linear bijection of Gaussians with the same covariance). The unit code is
// z/|z|, and |z|² = Σ_t z_t² = (1/d) Σ_b w_b |Z_b|² (w = 1 at DC and Nyquist, 2 elsewhere)
// is the sum of the squares of the d normals drawn, so a spectrum is normalised without
// an inverse FFT. tests/test_spectral_codes.cpp checks the time-domain codes' moments,
// covariance and marginal distribution against N(0, I) within sampling error.
//
// Layout. The d normals z'_0 … z'_{d−1} of a code are positions p … p + d − 1 of a
// normal stream (core/normal_stream.hpp): z'_0 → Z_0; z'_{2b−1}, z'_{2b} → Re, Im of Z_b
// for 0 < b < ⌈d/2⌉ (scaled by √(d/2)); for even d, z'_{d−1} → Z_{d/2}. Bin b ≥ 1 uses
// positions p + 2b − 1 and p + 2b only, so any range of bins of any code is drawn on its
// own (the scoring streams candidates a range of bins at a time).
#pragma once

#include "core/types.hpp"

#include <complex>
#include <cstdint>
#include <vector>

namespace memcap {

/// Codes at least this wide are drawn in the Fourier domain (assoc_recall's keys, values and
/// query noise; tasks/assoc_recall.hpp); narrower ones in the time domain. 16384 is the main
/// job's largest budget: HRR there at d = D streams its episodes (at n = 4096 a materialised
/// one holds 0.8 GB) and never transforms a code.
inline constexpr int kSpectralWidth = 16384;

/// Writes bins [bin_begin, bin_end) of the spectrum of z ~ N(0, sd² I_d) whose normals are
/// positions `position` … `position` + d − 1 of `key`'s normal stream (the layout above) to
/// out[0 … bin_end − bin_begin). Returns the sum of the squares of the normals those bins
/// use, times sd² (over all bins: |z|², in double).
double gaussian_spectrum(std::uint64_t key, std::uint64_t position, int d, double sd, int bin_begin, int bin_end,
                         std::complex<float>* out);

/// The whole spectrum (d/2 + 1 bins) of the unit code z/|z|; returns |z| (the norm before
/// normalising, in double).
double unit_spectrum(std::uint64_t key, std::uint64_t position, int d, std::complex<float>* out);

/// Parseval: Σ_t x_t y_t = (1/d) Σ_b w_b Re(X_b conj(Y_b)) for real x, y of width d with
/// spectra X, Y; this is w_b / d for bin b (w = 1 at DC and, for even d, at Nyquist; 2 elsewhere).
inline double parseval_weight(int d, int bin) {
    const bool single = bin == 0 || (d % 2 == 0 && bin == d / 2);
    return (single ? 1.0 : 2.0) / static_cast<double>(d);
}

/// An episode of associative recall whose codes are drawn in the Fourier domain, described
/// rather than materialised (Task::spectral_episode): every code is drawn where it is used.
///   key i    unit_spectrum(pairs_key, i·d)          value i  unit_spectrum(pairs_key, (n + i)·d)
///   query q  the unit code of k_{target[q]} + ζ_q, ζ_q = gaussian_spectrum(noise_key, q·d, noise_sd)
/// The candidates are the values. A materialised episode of the same cell (fill_episode)
/// holds the inverse transforms of the same spectra.
struct SpectralEpisode {
    int d = 0;
    std::int64_t n = 0;
    std::uint64_t pairs_key = 0;
    std::uint64_t noise_key = 0;
    double noise_sd = 0.0;  // 0: queries are the keys themselves
    std::vector<int> target;
};

/// Spectrum of key i (d/2 + 1 bins); returns its norm before normalising.
double key_spectrum(const SpectralEpisode& e, std::int64_t i, std::complex<float>* out);
/// Spectrum of value (candidate) i; returns its norm before normalising.
double value_spectrum(const SpectralEpisode& e, std::int64_t i, std::complex<float>* out);
/// Bins [bin_begin, bin_end) of value i before normalising (divide by value_spectrum's norm).
void value_bins(const SpectralEpisode& e, std::int64_t i, int bin_begin, int bin_end, std::complex<float>* out);
/// Spectrum of query q, normalised by Parseval; `scratch` holds d/2 + 1 bins.
void query_spectrum(const SpectralEpisode& e, std::int64_t q, std::complex<float>* out, std::complex<float>* scratch);

/// The time-domain rows of spectra (count × (d/2 + 1), row-major) into `rows` (count × d):
/// the inverse real DFT / d.
void spectra_to_rows(const std::complex<float>* spectra, std::int64_t count, int d, RowMat& rows);

}  // namespace memcap
