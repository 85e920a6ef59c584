// memcap/memories/precision.hpp — the precision a memory stores its state at, and what it costs in bits.
//
// Every memory may hold its state at a storage precision (the spec key `precision`, which
// every backend takes; left out it is fp32 and the memory is exactly as without it):
//
//   fp32   32 bits a float, as computed
//   bf16   16 bits: 8 exponent bits, 7 mantissa bits (round to nearest even)
//   fp16   16 bits: IEEE half, 5 exponent bits, 10 mantissa bits (round to nearest even;
//          beyond 65504 a float becomes infinite, and the cell reports a non-finite state)
//   int8   8-bit integers in [−127, 127] times a scale; int4: 4-bit in [−7, 7]
//
// Integer formats are symmetric absmax quantization in blocks of kScaleBlock = 32 floats:
// each block's scale is its largest magnitude / 127 (or / 7), kept as one fp32 number, and
// counted in the state: int8 costs 8 + 32/32 = 9 bits a float, int4 5 bits.
//
// Where the rounding is applied — where a real implementation stores the state:
//   - memories whose state grows by one row a write (the softmax cache, the sliding window):
//     each written key and value is rounded when written (blocks of 32 within the key and
//     within the value: per-token, per-group scales, as KV caches are quantized); the cache
//     then holds exactly the rounded rows;
//   - every other memory (grids, HRR's trace, the rotation RNN's vector, MesaNet's two
//     matrices, an online network's weights, momentum and pending pairs): the whole state
//     is rounded after each write of one pair (blocks of 32 in the order of state()), so an
//     additive memory accumulates the rounding it would in that format. A batched write is
//     then written one pair at a time.
// Reads are computed in fp32 from the stored (rounded) state.
//
// Budgets are bits: a budget of B floats is 32·B bits, and a memory at precision p is built
// with as many stored numbers as 32·B bits buy at p (element_budget): twice as many at bf16,
// 3.55× at int8 (scales included). state_bits prices what a memory holds.
#pragma once

#include "core/spec.hpp"
#include "memories/memory.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace memcap {

struct MemorySize;

enum class Precision { fp32, bf16, fp16, int8, int4 };

/// Floats per integer-format scale block, and the bits of its scale.
inline constexpr int kScaleBlock = 32;
inline constexpr int kScaleBits = 32;

/// The spec key, its choices (in order of preference on a tie) and the parameter every
/// memory's table entry gets (optional: left out = fp32; raced with `precision=best`).
inline constexpr const char* kPrecisionKey = "precision";
const std::vector<std::string>& precision_names();
ParamInfo precision_param();

/// "bf16" -> Precision::bf16; UsageError naming the text and the choices otherwise.
Precision parse_precision(const std::string& name);
const std::string& precision_name(Precision p);
/// Bits of one stored number (32, 16, 16, 8, 4), scales not included.
int precision_bits(Precision p);
bool is_integer(Precision p);
/// The precision a bound memory spec asks for: fp32 when it has none.
Precision spec_precision(const Spec& memory);

/// Rounds x[0..n) in place to what precision p stores (integer formats: in blocks of
/// kScaleBlock from x[0], the last block possibly shorter).
void round_to(Precision p, float* x, std::int64_t n);

/// Bits of a fixed-size state of `floats` numbers at p (integer formats: one scale a block).
std::int64_t flat_bits(Precision p, std::int64_t floats);
/// Bits of one appended row of a growing memory: a key of d_key and a value of d_value
/// numbers, each with its own blocks.
std::int64_t row_bits(Precision p, int d_key, int d_value);
/// The most numbers a fixed-size state may hold within `bits` at p (flat_bits ≤ bits).
std::int64_t flat_elements(Precision p, std::int64_t bits);

/// Bits of the state of a memory of size `size` (its sizing function at p) holding
/// `state_floats` numbers: rows at row_bits for a growing memory, flat_bits otherwise.
std::int64_t state_bits(Precision p, const MemorySize& size, const MemoryShape& shape, std::int64_t state_floats);

/// `inner` holding its state at p (the rules above); `grows` for a memory whose state grows
/// by one [key | value] row a write. p = fp32 returns `inner` itself. std::logic_error when a
/// fixed-size memory gives no writable view of its state (Memory::mutable_state).
std::unique_ptr<Memory> with_precision(std::unique_ptr<Memory> inner, Precision p, bool grows);

}  // namespace memcap
