// The kernel optimizer's actions (tinygrad's Opts): each one reshapes a kernel's loops without
// changing what it computes. An action names an axis by its position in kernel_axes(): the output
// ranges first, then the reduce ranges, each in loop order.
//
//   UPCAST(a, k)  split axis a (bound n, k | n) as outer * k + inner, inner unrolled by the expander:
//                 on an output axis k copies of the body (a register tile: k outputs per iteration),
//                 on a reduce axis k accumulators (vector lanes, folded after the loop)
//   UNROLL(a, k)  split reduce axis a as outer * k + inner, the k copies of its body added in order
//   THREAD(a, k)  split output axis a over k CPU workers: worker t runs [t * n/k, (t+1) * n/k)
//   SWAP(a, b)    exchange the loop order of output axes a and b
//   PADTO(a, k)   round output axis a up to a multiple of k; the added iterations store nothing
//
// An illegal action (no such axis, a bound it does not divide, a THREAD on a reduce axis, ...) is an
// rg::Error naming the action and the kernel's axes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/ir/uop.h"

namespace rg {

enum class OptOp : uint8_t { UPCAST, UNROLL, THREAD, SWAP, PADTO };

struct Opt {
  OptOp op;
  int axis;
  int64_t arg;  // the factor; for SWAP the other axis
  bool operator==(const Opt&) const = default;
};

std::string to_string(const Opt& o);                // "UPCAST(1, 16)"
std::string to_string(const std::vector<Opt>& os);  // "UPCAST(1, 16) UPCAST(0, 4)"; "(none)" when empty
// The inverse of to_string (a saved action list, e.g. BEAM's disk cache): "UPCAST(1, 16) UPCAST(0, 4)",
// "(none)" or "" (no actions). Anything else is an rg::Error quoting the text and naming what was expected where.
std::vector<Opt> parse_opts(const std::string& text);

// The ranges the actions name, in order: output (Loop) ranges by loop order, then Reduce ranges.
struct KernelAxes {
  std::vector<UPtr> axes;
  size_t first_reduce = 0;
  std::string str() const;  // "(64, 64 | 128)": output bounds | reduce bounds
};
KernelAxes kernel_axes(const UPtr& kernel);

// The kernel with the action applied; rg::Error when it is illegal there.
UPtr apply_opt(const UPtr& kernel, const Opt& opt);
UPtr apply_opts(UPtr kernel, const std::vector<Opt>& opts);

// The most copies of a kernel's body the expander makes (the product of its UPCAST and UNROLL factors).
inline constexpr int64_t kMaxUpcast = 256;

}  // namespace rg
