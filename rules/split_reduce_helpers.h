// C++ helpers for rules/split_reduce.rules. Unit-tested in split_reduce_test.cc.
#pragma once

#include <cstdint>

#include "compiler/ir/uop.h"

namespace rg {

// A reduction is split when it reduces at least kSplitThreshold elements (tinygrad's bound) into each of
// at most kFewOutputs outputs: too few to spread over CPU workers or GPU blocks. With more, splitting
// costs a pass and gains nothing here: a batch norm's statistics (32 channels of 294912) ran 6% slower
// split in the CNN example, and a one-hot gather of a batch (60000 rows summed into 512 x 784 outputs)
// would no longer collapse to a direct read (compiler/codegen/collapse.h).
inline constexpr int64_t kSplitThreshold = 32768, kFewOutputs = 16;

// The factor a REDUCE_AXIS's first splittable reduced axis is split by: the largest d in [8, 256]
// dividing it (tinygrad's range); 0 when the reduction is too small, has more than kFewOutputs outputs,
// or no axis divides.
int64_t split_divisor(const UPtr& r);
// REDUCE_AXIS r over x (shape S, reduced axes A), its axis i = A's first divided by d = split_divisor(r) > 0,
// as two reductions: x reshaped to S[:i] + (d, S[i] / d) + S[i+1:], the d axis moved last, reduced over A
// (each of the d partials a contiguous run of S[i] / d), CONTIGUOUS, then reduced over the last axis and
// reshaped to r's shape.
UPtr split_reduce(const UPtr& r);

}  // namespace rg
