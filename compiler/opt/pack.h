// Packing: an operand a kernel re-reads along its reduction with a large stride (a matmul's B, read down its
// columns) is first copied by a layout kernel into contiguous panels, the kernel then reads the copy. The
// heuristics tile such a kernel by columns of registers (heuristics.h); a panel holds one tile's columns for
// every step of the reduction, so each step reads one contiguous run instead of one line per row of B,
// lines whose 4 KiB strides crowd a few sets of L1 (matmul 1024: 50 GFLOP/s unpacked, 153 packed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>

#include "compiler/ir/uop.h"
#include "compiler/opt/machine.h"

namespace rg {

// A load INDEX(PARAM s, idx) inside a REDUCE, idx affine in the kernel's ranges, is packed when
//  - an output range j walks it with stride 1 and the tile's columns (2 x the machine's vector lanes) divide j,
//  - a reduce range k walks it with a stride of at least kPackStrideBytes,
//  - the output ranges it does not use re-read it at least kPackReuse times (the cost: one more read and
//    write of the operand, against that many reads from panels).
// The copy's layout is (the load's other output ranges, j / w, its reduce ranges in loop order, j % w), row-major:
// the kernel reads a panel in the order it stores it (a weight gradient's reduction over the batch, then the image's
// rows and columns, reads one run of w; with k alone after j / w, the column steps crossed 64 KiB each).
struct PackedOperand {
  UPtr kernel;           // the kernel, reading the copy at that load through slot `copy_slot`
  UPtr pack;             // the layout kernel: stores the copy (PARAM0, `elements` of `dtype`) from slot 1, the operand
  size_t slot = 0;       // the operand's slot in the kernel
  size_t copy_slot = 0;  // `slot` when no other load of the kernel reads the operand, else a new last slot
  int64_t elements = 0;
  DType dtype;
};
// `copies`: the slots that already hold a copy made by packing, never packed again (a copy's index can look
// like an operand to pack once more: the loop of pack_operands would not end).
std::optional<PackedOperand> pack_operand(const UPtr& kernel, const Machine& machine,
                                          const std::set<size_t>& copies = {});

inline constexpr int64_t kPackStrideBytes = 1024;
inline constexpr int64_t kPackReuse = 64;

}  // namespace rg
