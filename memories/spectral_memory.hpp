// memcap/memories/spectral_memory.hpp — the interface of a memory that takes codes as spectra.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>

namespace memcap {

/// A memory that takes codes as spectra (FFTW's real DFT of a width-d code: d/2 + 1 bins),
/// so a task that draws its codes in the Fourier domain (tasks/spectral_codes.hpp) never
/// materialises them. The registry's takes_spectra trait says, before a memory is built,
/// whether it will at a shape; the native readout then streams the episode through these.
class SpectralMemory {
public:
    /// Fills `rows` pairs' spectra, keys and values (rows × bins each, row-major), starting at
    /// pair `first`.
    using SpectraSource = std::function<void(std::int64_t first, std::int64_t rows, std::complex<float>* keys,
                                             std::complex<float>* values)>;
    /// True when this memory, as built, takes spectra (the registry's takes_spectra at its shape).
    virtual bool takes_spectra() const = 0;
    /// Pairs pulled from `draw` a block at a time; the same writes as write_batch of their rows.
    virtual void write_spectra(std::int64_t count, const SpectraSource& draw) = 0;
    /// The spectra of the reads of `count` queries given as spectra (count × bins each).
    virtual void read_spectra(const std::complex<float>* queries, std::int64_t count, std::complex<float>* reads) const = 0;
    /// Pairs write_spectra pulls per block (what the caller's block holds): one, so a wide pair and the
    /// running sum stay in the last-level cache (at D = 2^20, 4 MB each).
    static constexpr std::int64_t kSpectraBlock = 1;

protected:
    ~SpectralMemory() = default;
};

}  // namespace memcap
