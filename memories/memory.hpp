// memcap/memories/memory.hpp — the interface every memory backend implements.
//
// A Memory stores (key, value) pairs written one at a time, in order, and
// answers reads with a value-sized vector. Keys and queries have dimension
// d_key, values and reads d_value (MemoryShape). Batches follow the layout of
// core/types.hpp: row i of `keys` is the i-th key.
//
// Required: reset, write, read, state_floats, state.
// Optional: write_batch / read_batch (default: a loop over write / read);
// override them when a batched form is faster, e.g. one GEMM for n writes.
// A batched write must leave exactly the state that n single writes leave,
// up to floating-point rounding.
//
// `state_floats()` counts the floats of state the memory holds now — what
// changes as it is written; it never exceeds the budget it was built with.
// Fixed parameters (projections, rotations, gates) are reported separately by
// `param_floats()`. `state()` is a flat view of exactly state_floats() floats.
#pragma once

#include "core/types.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

namespace memcap {

/// The sizes a backend is built for.
struct MemoryShape {
    int d_key = 64;
    int d_value = 64;
    /// Floats of state the memory may hold; empty = the backend's natural size at d.
    std::optional<std::int64_t> budget_floats;
    /// True when the task's keys only mark positions (lag recall, copying): a
    /// memory without content-addressed reads (the rotation RNN) then takes the
    /// value alone as its input, as in essay 004 Part 1; otherwise the pair.
    bool positional_keys = false;
};

class Memory {
public:
    virtual ~Memory() = default;

    /// Forgets everything written; the memory is then equal to a freshly built one.
    virtual void reset() = 0;
    /// Stores one pair. key: d_key floats, value: d_value floats.
    virtual void write(ConstVecRef key, ConstVecRef value) = 0;
    /// Reads with `query` (d_key floats) into `out` (d_value floats).
    virtual void read(ConstVecRef query, VecRef out) const = 0;
    /// Floats of state held now (≤ the budget).
    virtual std::int64_t state_floats() const = 0;
    /// Flat view of the state, state_floats() floats long.
    virtual ConstStateView state() const = 0;

    /// Floats of fixed parameters (not state): projections, rotations, gates.
    virtual std::int64_t param_floats() const { return 0; }

    /// Writes row i of keys/values for i = 0..n-1, in order.
    virtual void write_batch(ConstMatRef keys, ConstMatRef values) {
        for (Eigen::Index i = 0; i < keys.rows(); ++i) write(keys.row(i).transpose(), values.row(i).transpose());
    }
    /// Reads every row of queries into the same row of out (queries.rows() × d_value).
    virtual void read_batch(ConstMatRef queries, MatRef out) const {
        Vec tmp(out.cols());
        for (Eigen::Index i = 0; i < queries.rows(); ++i) {
            read(queries.row(i).transpose(), tmp);
            out.row(i) = tmp.transpose();
        }
    }

    /// The structural-mask control: true when the memory keeps written pairs apart, so
    /// that a read can be told to skip one of them (the softmax cache).
    virtual bool supports_hiding() const { return false; }
    /// As read_batch, but the read of query i may not attend to the pair written
    /// hidden[i]-th since reset (0-based; a pair no longer held hides nothing).
    /// Only called when supports_hiding(); the default throws std::logic_error.
    virtual void read_batch_hiding(ConstMatRef, const std::vector<int>&, MatRef) const {
        throw std::logic_error("this memory cannot hide a written pair from a read");
    }
};

}  // namespace memcap
