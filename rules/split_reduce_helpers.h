// C++ helpers for rules/split_reduce.rules. Unit-tested in split_reduce_test.cc.
#pragma once

#include <cstdint>

#include "compiler/ir/uop.h"

namespace rg {

// tinygrad's bounds: a reduction is split when it reduces at least kSplitThreshold elements into each
// output, into at most kSplitOutputs partial results in all, each of its split axes by 8 to 256.
inline constexpr int64_t kSplitThreshold = 32768, kSplitOutputs = int64_t(1) << 22;

// The factor a REDUCE_AXIS's first splittable reduced axis is split by: the largest d in [8, 256] (and
// at most kSplitOutputs / outputs) dividing it; 0 when the reduction is too small or no axis divides.
int64_t split_divisor(const UPtr& r);
// REDUCE_AXIS r over x (shape S, reduced axes A) with axis i = A's first divided by d = split_divisor(r) > 0,
// as two reductions:
// x reshaped to S[:i] + (d, S[i] / d) + S[i+1:], the d axis moved last, reduced over A (each of the d
// partials a contiguous run of S[i] / d), CONTIGUOUS, then reduced over the last axis and reshaped to r's shape.
UPtr split_reduce(const UPtr& r);

}  // namespace rg
