// memcap/core/types.hpp — the matrix types and the one layout rule.
//
// Layout: a batch of m vectors of dimension d is an m × d row-major matrix,
// so component j of vector i is x[i * d + j]. Keys, values, queries, reads and
// candidate sets all use this layout. Parameters take sized views
// (Eigen::Ref), never raw pointers.
#pragma once

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace memcap {

using Vec = Eigen::VectorXf;
using RowMat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

using VecRef = Eigen::Ref<Vec>;
using ConstVecRef = Eigen::Ref<const Vec>;
using MatRef = Eigen::Ref<RowMat>;
using ConstMatRef = Eigen::Ref<const RowMat>;
/// A flat, read-only view of a memory's state (the probe readout's input).
using ConstStateView = Eigen::Map<const Vec>;
/// A flat, writable view of a memory's state (rounding it to a storage precision).
using StateRef = Eigen::Map<Vec>;

/// An allocator whose `resize` leaves new elements default-initialised (for floats:
/// not written) instead of zeroing them: for buffers whose new rows are overwritten
/// at once, where the zeroing is a wasted pass over fresh memory.
template <class T>
struct DefaultInitAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = DefaultInitAllocator<U>;
    };
    DefaultInitAllocator() = default;
    template <class U>
    DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
    template <class U>
    void construct(U* p) noexcept {
        ::new (static_cast<void*>(p)) U;
    }
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
    }
};

/// Normalises every row of `m` to unit Euclidean length (rows of zeros stay zero).
inline void normalise_rows(MatRef m) {
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
        const float norm = m.row(i).norm();
        if (norm > 0.0f) m.row(i) /= norm;
    }
}

}  // namespace memcap
