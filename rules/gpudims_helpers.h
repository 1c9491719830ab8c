// C++ helpers for rules/gpudims.rules: a kernel's output ranges become GPU thread indices
// (docs/pipeline.md#gpu-dims). The plans are codegen's (compiler/codegen/gpu_dims.h computes them before
// each rewrite); here are the contexts that carry them and the externs the rules call. Tested in
// gpudims_test.cc.
//
// Two steps, as in tinygrad's optimizer and gpudims:
//   1. choose_threads (context ThreadPlan): output ranges are retyped GLOBAL or LOCAL; the innermost
//      one is split into a global and a local part (guarded when the split is not exact).
//   2. mask_local_stores, then add_gpu_dims (context ThreadIndices): GLOBAL/LOCAL ranges become
//      SPECIAL thread indices (gidx0..2, lidx0..2), grouped or split to the device's limits and
//      rebuilt with div/mod; a global store that does not use every local index happens in
//      lidx == 0 only.
#pragma once

#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

// The output ranges of one kernel and what each becomes (context of choose_threads; plan_threads in
// compiler/codegen/gpu_dims.h).
struct ThreadPlan {
  UMap axes;  // range -> its replacement
  bool has(const UPtr& r) const { return axes.count(r) > 0; }
};
UPtr thread_axis(const ThreadPlan& plan, const UPtr& r);  // the replacement of r (null if none)

// The thread indices of one kernel (context of mask_local_stores and add_gpu_dims; plan_thread_indices in
// compiler/codegen/gpu_dims.h): each thread range with its value over SPECIALs, and the block thread ranges.
struct ThreadIndices {
  UMap index;                // range -> its value over SPECIALs
  std::vector<UPtr> locals;  // the block thread ranges
  bool has(const UPtr& r) const { return index.count(r) > 0; }
  // The block thread ranges a store address into global memory does not use (none for other memory).
  std::vector<UPtr> missing_locals(const UPtr& address) const;
};
UPtr thread_index(const ThreadIndices& t, const UPtr& r);  // the value of r (null if none)
// l == 0 for every local range the address does not use, and-ed; null when there is none.
UPtr local_mask(const ThreadIndices& t, const UPtr& address);

}  // namespace rg
