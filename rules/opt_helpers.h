// C++ helpers for rules/opt.rules: the kernel optimizer's range replacements (compiler/opt) and the
// CPU's THREAD axes. Unit-tested in opt_helpers_test.cc.
#pragma once

#include "compiler/ir/uop.h"

namespace rg {

// Context of apply_axis_opt: each range an action replaces, with its replacement.
struct RangeRewrite {
  UMap with;
  bool replaces(const UPtr& r) const { return with.count(r) > 0; }
};
UPtr replaced_range(const RangeRewrite& ctx, const UPtr& r);
// REDUCE(x, where(c, e, Invalid), ...) (a reduce range rounded up) as REDUCE(where(c, x, Invalid), ranges of
// the e's): the invalid rules make that the reduce op's identity where c fails. Null when no range source is
// gated.
UPtr gated_reduce(const UPtr& red);
bool any_gated(USpan ranges);  // some source is where(c, e, Invalid)

// Context of tile_reduction: `tiles`, the loop of a reduce axis split by TILE, already the kernel's outermost loop.
struct ReductionTiles {
  UPtr tiles;
  bool closes(const UPtr& reduce) const;      // one of its ranges is the tile loop
  bool tiled(const UPtr& store) const;        // it stores an ADD or MAX REDUCE whose value reads through the tile loop
  bool opens(const UPtr& end_or_sink) const;  // a store under it uses the tile loop, and nothing there closes it
};
// The REDUCE without the tile loop among its ranges: it reduces one tile.
UPtr without_tiles(const ReductionTiles& ctx, const UPtr& reduce);
// STORE(i, part) as STORE(i, where(tiles < 1, part, part op earlier)): `earlier` is the element the earlier tiles
// stored, read under the gate 0 < tiles (ungated, a load of the same address in every tile would be hoisted).
UPtr adding_earlier_tiles(const ReductionTiles& ctx, const UPtr& store);
// END(store, ranges...) with the tile loop among its ranges (in range order); a SINK with each of its stores that
// uses the tile loop under an END of it.
UPtr closing_tiles(const ReductionTiles& ctx, const UPtr& end_or_sink);

// The variable a THREAD axis becomes: kCoreIdVar in [0, bound - 1].
bool is_thread_axis(const UPtr& r);
UPtr core_id(const UPtr& r);

}  // namespace rg
