// rules/devectorize.rules and its helpers on small hand-built graphs: the fold of
// offsets to widths, PTRCAT grouping of loads and stores and its distribution at the fold widths (each
// rule where it fires and where it must not), vector lanes through ALU ops.
#include "rules/devectorize.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "compiler/codegen/ptrcat.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/devectorize_helpers.h"

namespace rg {
namespace {

using Runs = std::vector<std::pair<int64_t, int>>;
const std::vector<int> kCpu{4, 2};

using namespace testk;

UPtr gep(const UPtr& v, int64_t k) { return UOp::make(Op::GEP, v->dtype.scalar_type(), {v}, std::vector<int64_t>{k}); }
UPtr vec(std::vector<UPtr> lanes) {
  DType dt = lanes[0]->dtype.vec(static_cast<int>(lanes.size()));
  return UOp::make(Op::VECTORIZE, dt, std::move(lanes));
}

TEST(Devectorize, FoldRunsTakeTheLargestAlignedWidth) {
  AffineIndex flat;                                                                     // constant addresses
  EXPECT_EQ(fold_runs({0, 1, 2, 3, 4, 5}, kCpu, flat, false), (Runs{{0, 4}, {4, 2}}));  // seed 004's input
  EXPECT_EQ(fold_runs({0, 1, 2, 3, 4, 5, 6}, kCpu, flat, false), (Runs{{0, 4}, {4, 2}}));
  EXPECT_EQ(fold_runs({1, 2, 3, 4}, kCpu, flat, false), (Runs{{2, 2}}));  // 1 and 4 misaligned or alone
  EXPECT_EQ(fold_runs({0, 2, 4}, kCpu, flat, false), Runs{});
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, {}, flat, false), Runs{});  // no widths: scalar
  UPtr r = range(8, 0);
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, kCpu, *affine_index(r * 4), false), (Runs{{0, 4}}));
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, kCpu, *affine_index(r * 2), false), (Runs{{0, 2}, {2, 2}}));
  EXPECT_EQ(fold_runs({0, 1, 2, 3}, kCpu, *affine_index(r), false), Runs{});  // r: any alignment
}

// A target whose vectors need one lane's alignment (the CPU backends) folds from any offset, largest first: a
// 10-wide row at y * 10 + x is a float8 and a float2 whatever y is.
TEST(Devectorize, UnalignedFoldRunsTakeTheLargestWidthAnywhere) {
  const std::vector<int> avx2{8, 4, 2};
  UPtr y = range(8, 0);
  EXPECT_EQ(fold_runs({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, avx2, *affine_index(y * 10), true), (Runs{{0, 8}, {8, 2}}));
  EXPECT_EQ(fold_runs({1, 2, 3, 4}, kCpu, *affine_index(y), true), (Runs{{1, 4}}));
  EXPECT_EQ(fold_runs({3, 4, 5, 6, 7, 8, 9}, kCpu, AffineIndex{}, true), (Runs{{3, 4}, {7, 2}}));  // 9 alone
  EXPECT_EQ(fold_runs({0, 2, 4}, avx2, AffineIndex{}, true), Runs{});
  EXPECT_EQ(fold_runs({0, 1, 2}, {}, AffineIndex{}, true), Runs{});
}

TEST(Devectorize, PlainBufferAndVectorPointer) {
  UPtr in = param(1, dtypes::float32, 8), r = range(8, 0);
  EXPECT_EQ(plain_buffer(address(in, r)), in.get());
  EXPECT_EQ(plain_buffer(UOp::make(Op::INDEX, in->dtype, {in, r, r < idx(4)})), in.get());  // behind a bool gate
  EXPECT_EQ(plain_buffer(UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {in, r})), nullptr);  // a vector
  UPtr local = UOp::make(Op::DEFINE_LOCAL, dtypes::float32.ptr_to(8, AddrSpace::Local), {}, int64_t(0));
  EXPECT_EQ(plain_buffer(address(local, r)), nullptr);  // not a PARAM
  EXPECT_EQ(plain_buffer(load_at(in, r)), nullptr);     // not an INDEX
  EXPECT_EQ(vector_ptr(in, 4), dtypes::float32.vec(4).ptr_to(-1));
  EXPECT_EQ(vector_ptr(local, 2), dtypes::float32.vec(2).ptr_to(-1, AddrSpace::Local));
}

// --- grouping (seed 003's phase 1) ---
// The rules that fired while f ran, by name, with their counts.
template <typename F>
std::map<std::string, uint64_t> fired_by(F f) {
  RuleFirings firings;
  f();
  std::map<std::string, uint64_t> fired;
  for (const auto& [rule, n] : firings.counts()) fired[rule->name] += n;
  return fired;
}
using Fired = std::map<std::string, uint64_t>;

UPtr ptrcat(std::vector<UPtr> ptrs) {
  DType dt = ptrs[0]->dtype.base().vec(static_cast<int>(ptrs.size())).ptr_to(-1);
  return UOp::make(Op::PTRCAT, dt, std::move(ptrs));
}
UPtr vload(const UPtr& addr) { return UOp::make(Op::LOAD, addr->dtype.base(), {addr}); }
UPtr vindex(const UPtr& buf, int w, const UPtr& i) {
  return UOp::make(Op::INDEX, buf->dtype.base().vec(w).ptr_to(-1), {buf, i});
}
UPtr gated(const UPtr& buf, const UPtr& i, const UPtr& alt, const UPtr& gate) {
  return UOp::make(Op::LOAD, buf->dtype.base(), {address(buf, i), alt, gate});
}
using Runs2 = std::vector<std::vector<size_t>>;

TEST(Devectorize, PtrcatGroupsByGateBufferAndBase) {
  UPtr a = param(1, dtypes::float32, 64), b = param(2, dtypes::float32, 64);
  UPtr r = range(8, 0), g = r < idx(5), h = r < idx(6);
  auto at = [&](const UPtr& buf, int64_t o, const UPtr& gate = UPtr()) {
    return Access{address(buf, r * 4 + idx(o)), gate};
  };
  // Given out of order: one run, by offset.
  EXPECT_EQ(ptrcat_groups({at(a, 2), at(a, 0), at(a, 1)}, kCpu, false), (Runs2{{1, 2, 0}}));
  // A gap cuts a run; a lone offset is no run.
  EXPECT_EQ(ptrcat_groups({at(a, 0), at(a, 1), at(a, 4), at(a, 5), at(a, 7)}, kCpu, false), (Runs2{{0, 1}, {2, 3}}));
  // Another buffer, another gate or another base is another group.
  EXPECT_EQ(ptrcat_groups({at(a, 0), at(b, 1), at(a, 2, g), at(a, 3, g), at(a, 4, h)}, kCpu, false), (Runs2{{2, 3}}));
  EXPECT_EQ(ptrcat_groups({Access{address(a, r * 4), {}}, Access{address(a, r * 8 + idx(1)), {}}}, kCpu, false),
            Runs2{});
  // An address given twice keeps its first access.
  EXPECT_EQ(ptrcat_groups({at(a, 0), at(a, 0), at(a, 1)}, kCpu, false), (Runs2{{0, 2}}));
  EXPECT_EQ(ptrcat_groups({}, kCpu, false), Runs2{});
  // A run no fold width can cut stays scalar: 3, 4 (3 is not 2-aligned and 4 has no 5), a base of
  // coefficient 1, the image-style width 4 on two lanes, no widths at all.
  EXPECT_EQ(ptrcat_groups({at(a, 3), at(a, 4)}, kCpu, false), Runs2{});
  EXPECT_EQ(ptrcat_groups({at(a, 3), at(a, 4)}, kCpu, true), (Runs2{{0, 1}}));  // where vectors may start anywhere
  EXPECT_EQ(ptrcat_groups({Access{address(a, r), {}}, Access{address(a, r + idx(1)), {}}}, kCpu, true),
            (Runs2{{0, 1}}));
  EXPECT_EQ(ptrcat_groups({Access{address(a, r), {}}, Access{address(a, r + idx(1)), {}}}, kCpu, false), Runs2{});
  EXPECT_EQ(ptrcat_groups({at(a, 0), at(a, 1)}, {4}, false), Runs2{});
  EXPECT_EQ(ptrcat_groups({at(a, 0), at(a, 1)}, {}, false), Runs2{});
  // A run of which a piece folds is grouped whole: 1..4 (a float2 at 2, scalars at 1 and 4).
  EXPECT_EQ(ptrcat_groups({at(a, 1), at(a, 2), at(a, 3), at(a, 4)}, kCpu, false), (Runs2{{0, 1, 2, 3}}));
}

TEST(Devectorize, StridedGroupsCutEveryOffsetAtOneStride) {
  UPtr a = param(1, dtypes::float32, 1 << 16), b = param(2, dtypes::float32, 1 << 16);
  UPtr r = range(8, 0);
  auto at = [&](const UPtr& buf, int64_t o) { return Access{address(buf, r * 4 + idx(o)), UPtr()}; };
  // 4 lanes 100 apart, given out of order: one run, by offset.
  EXPECT_EQ(strided_groups({at(a, 300), at(a, 0), at(a, 200), at(a, 100)}, {}, 4), (Runs2{{1, 3, 2, 0}}));
  // A tile's 2 columns by 4 rows 6625 apart: cut by rows, the smallest stride that takes every offset.
  std::vector<Access> tile;
  for (int64_t row = 0; row < 4; ++row)
    for (int64_t col = 0; col < 2; ++col) tile.push_back(at(a, row * 6625 + col));
  EXPECT_EQ(strided_groups(tile, {}, 4), (Runs2{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Accesses a run of `taken` holds are left out; consecutive ones (stride 1) are not a strided run.
  EXPECT_EQ(strided_groups(tile, {{0, 2, 4, 6}}, 4), (Runs2{{1, 3, 5, 7}}));
  EXPECT_EQ(strided_groups({at(a, 0), at(a, 1), at(a, 2), at(a, 3)}, {}, 4), Runs2{});
  // Offsets no stride cuts whole, a count no run of 4 divides, another buffer: nothing.
  EXPECT_EQ(strided_groups({at(a, 0), at(a, 5), at(a, 10), at(a, 16)}, {}, 4), Runs2{});
  EXPECT_EQ(strided_groups({at(a, 0), at(a, 5), at(a, 10)}, {}, 4), Runs2{});
  EXPECT_EQ(strided_groups({at(a, 0), at(a, 5), at(b, 10), at(a, 15)}, {}, 4), Runs2{});
}

// out[i] = in[3 - i]: the four loads are one LOAD(PTRCAT) in address order, each read by its lane (the GEP
// permutation restores the element order).
TEST(Devectorize, LoadsGroupThroughOnePtrcatInAddressOrder) {
  UPtr in = param(1, dtypes::float32, 4), out = param(0, dtypes::float32, 4);
  std::vector<UPtr> stores;
  for (int i = 0; i < 4; ++i) stores.push_back(store(out, idx(i), load_at(in, idx(3 - i))));
  UPtr k = sink(stores);
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  plan_ptrcats(k, ctx);
  EXPECT_EQ(ctx.lanes.size(), 4u);
  UPtr p = ptrcat({address(in, idx(0)), address(in, idx(1)), address(in, idx(2)), address(in, idx(3))});
  UPtr all = UOp::make(Op::LOAD, dtypes::float32.vec(4), {p});
  std::vector<UPtr> want;
  for (int i = 0; i < 4; ++i) want.push_back(store(out, idx(i), gep(all, 3 - i)));
  UPtr grouped;
  EXPECT_EQ(fired_by([&] { grouped = graph_rewrite(k, rules::group_loads, ctx); }),
            (Fired{{"load_to_lane_of_ptrcat", 4}}));
  EXPECT_EQ(grouped, sink(want));
  // Nothing to group: a lone load, loads two apart, loads of two buffers, bool loads.
  UPtr other = param(2, dtypes::float32, 4), flags = param(3, dtypes::bool_, 4);
  for (const UPtr& lone : {sink(store(out, idx(0), load_at(in, idx(0)))),
                           sink({store(out, idx(0), load_at(in, idx(0))), store(out, idx(1), load_at(in, idx(2)))}),
                           sink({store(out, idx(0), load_at(in, idx(0))), store(out, idx(1), load_at(other, idx(1)))}),
                           sink({store(out, idx(0), cast(load_at(flags, idx(0)), dtypes::float32)),
                                 store(out, idx(1), cast(load_at(flags, idx(1)), dtypes::float32))})}) {
    FoldCtx none{kCpu, vector_scalars(), {}};
    plan_ptrcats(lone, none);
    EXPECT_TRUE(none.lanes.empty()) << lone;
    EXPECT_EQ(graph_rewrite(lone, rules::group_loads, none), lone);
  }
}

// Loads behind one gate group, the LOAD keeping the gate and each lane's alternative; other gates do not.
TEST(Devectorize, GatedLoadsGroupBehindOneGate) {
  UPtr in = param(1, dtypes::float32, 16), out = param(0, dtypes::float32, 16);
  UPtr r = range(4, 0), g = r < idx(3), h = idx(0) < r;
  UPtr zero = f32(0), one = f32(1);
  UPtr k = sink(
      {store(out, r * 2, gated(in, r * 2, zero, g)), store(out, r * 2 + idx(1), gated(in, r * 2 + idx(1), one, g))});
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  plan_ptrcats(k, ctx);
  UPtr p = ptrcat({address(in, r * 2), address(in, r * 2 + idx(1))});
  UPtr both = UOp::make(Op::LOAD, dtypes::float32.vec(2), {p, vec({zero, one}), g});
  EXPECT_EQ(graph_rewrite(k, rules::group_loads, ctx),
            sink({store(out, r * 2, gep(both, 0)), store(out, r * 2 + idx(1), gep(both, 1))}));
  FoldCtx none{kCpu, vector_scalars(), {}};
  plan_ptrcats(sink({store(out, r * 2, gated(in, r * 2, zero, g)),
                     store(out, r * 2 + idx(1), gated(in, r * 2 + idx(1), zero, h))}),
               none);
  EXPECT_TRUE(none.lanes.empty());
}

TEST(Devectorize, SiblingStoresGroupThroughOnePtrcat) {
  UPtr out = param(0, dtypes::float32, 8);
  UPtr r = range(2, 0);
  std::vector<UPtr> v, stores;
  for (int i = 0; i < 4; ++i) v.push_back(f32(10 + i));
  // Written 2, 0, 3, 1: one store at the first's place, its values by address.
  for (int i : {2, 0, 3, 1}) stores.push_back(store(out, r * 4 + idx(i), v[i]));
  UPtr noop = UOp::make(Op::NOOP, dtypes::void_, stores);
  UPtr p = ptrcat({address(out, r * 4 + idx(0)), address(out, r * 4 + idx(1)), address(out, r * 4 + idx(2)),
                   address(out, r * 4 + idx(3))});
  UPtr want = UOp::make(Op::NOOP, dtypes::void_, {store(p, vec(v))});
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  EXPECT_EQ(ptrcat_stores(ctx, noop), want);
  EXPECT_EQ(ptrcat_stores(ctx, sink(stores)), sink(store(p, vec(v))));
  // Gated stores behind one gate group; an address stored twice, a gap and a lone store stay.
  UPtr g = r < idx(1);
  UPtr ga = UOp::make(Op::INDEX, out->dtype, {out, r * 4, g}),
       gb = UOp::make(Op::INDEX, out->dtype, {out, r * 4 + idx(1), g});
  EXPECT_EQ(ptrcat_stores(ctx, sink({store(ga, v[0]), store(gb, v[1])})),
            sink(store(ptrcat({ga, gb}), vec({v[0], v[1]}))));
  for (const UPtr& stay :
       {sink({stores[1], stores[3], store(out, r * 4 + idx(1), v[2])}), sink({stores[1], stores[0]}), sink(stores[0])})
    EXPECT_FALSE(ptrcat_stores(ctx, stay)) << stay;
}

// --- distribution (seed 003's phases 3 and 4) ---

// Offsets 2..9 of a 4-aligned base cut as seed 003's fold widths allow: a float2, a float4, a float2.
TEST(Devectorize, PtrcatCutsAtAlignedFoldWidths) {
  UPtr in = param(1, dtypes::float32, 64), out = param(0, dtypes::float32, 64);
  UPtr r = range(4, 0);
  std::vector<UPtr> ptrs;
  for (int o = 2; o < 10; ++o) ptrs.push_back(address(in, r * 12 + idx(o)));
  UPtr p = ptrcat(ptrs);
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  UPtr p2 = vindex(in, 2, r * 12 + idx(2)), p4 = vindex(in, 4, r * 12 + idx(4)), p2b = vindex(in, 2, r * 12 + idx(8));
  UPtr pieces = UOp::make(Op::PTRCAT, p->dtype, {p2, p4, p2b});
  EXPECT_EQ(ptrcat_pieces(ctx, p), pieces);
  EXPECT_FALSE(ptrcat_pieces(ctx, pieces)) << "already in pieces";
  // A load through it: the CAT of three loads, each lane a lane of its piece.
  UPtr all = UOp::make(Op::LOAD, dtypes::float32.vec(8), {p});
  std::vector<UPtr> lanes, want;
  for (int k = 0; k < 8; ++k) lanes.push_back(store(out, idx(k), gep(all, k)));
  UPtr l2 = vload(p2), l4 = vload(p4), l2b = vload(p2b);
  for (int k = 0; k < 8; ++k)
    want.push_back(store(out, idx(k), k < 2 ? gep(l2, k) : k < 6 ? gep(l4, k - 2) : gep(l2b, k - 6)));
  UPtr cut;
  EXPECT_EQ(fired_by([&] { cut = graph_rewrite(sink(lanes), rules::distribute_ptrcats, ctx); }),
            (Fired{{"ptrcat_to_fold_widths", 1}, {"load_of_ptrcat_to_cat", 1}, {"lane_of_cat", 8}}));
  EXPECT_EQ(cut, sink(want));
  // Offsets 1..4 of a constant base: a scalar, a float2, a scalar.
  std::vector<UPtr> flat;
  for (int o = 1; o < 5; ++o) flat.push_back(address(in, idx(o)));
  EXPECT_EQ(ptrcat_pieces(ctx, ptrcat(flat)),
            UOp::make(Op::PTRCAT, ptrcat(flat)->dtype, {flat[0], vindex(in, 2, idx(2)), flat[3]}));
  // Nothing aligned (a base of coefficient 1), or no widths: no pieces, and the loads are the scalar ones again.
  UPtr odd = ptrcat({address(in, r), address(in, r + idx(1))});
  EXPECT_FALSE(ptrcat_pieces(ctx, odd));
  EXPECT_FALSE(ptrcat_pieces(FoldCtx{{}, vector_scalars(), {}}, p));
  UPtr odd_load = UOp::make(Op::LOAD, dtypes::float32.vec(2), {odd});
  EXPECT_EQ(graph_rewrite(sink({store(out, idx(0), gep(odd_load, 0)), store(out, idx(1), gep(odd_load, 1))}),
                          rules::distribute_ptrcats, ctx),
            sink({store(out, idx(0), load_at(in, r)), store(out, idx(1), load_at(in, r + idx(1)))}));
}

TEST(Devectorize, LoadsAndStoresOfPtrcatDistribute) {
  UPtr in = param(1, dtypes::float32, 8), out = param(0, dtypes::float32, 8);
  std::vector<UPtr> ptrs, alts, vals;
  for (int o = 0; o < 6; ++o) {
    ptrs.push_back(address(in, idx(o)));
    alts.push_back(f32(-o));
    vals.push_back(f32(o));
  }
  UPtr g = range(4, 9) < idx(2);
  UPtr v4 = vindex(in, 4, idx(0)), v2 = vindex(in, 2, idx(4));
  UPtr pieces = UOp::make(Op::PTRCAT, ptrcat(ptrs)->dtype, {v4, v2});
  // A gated load keeps its gate; each piece takes its lanes of the alternative.
  UPtr l = UOp::make(Op::LOAD, dtypes::float32.vec(6), {pieces, vec(alts), g});
  UPtr want =
      UOp::make(Op::CAT, dtypes::float32.vec(6),
                {UOp::make(Op::LOAD, dtypes::float32.vec(4), {v4, vec({alts[0], alts[1], alts[2], alts[3]}), g}),
                 UOp::make(Op::LOAD, dtypes::float32.vec(2), {v2, vec({alts[4], alts[5]}), g})});
  EXPECT_EQ(cat_of_loads(l), want);
  // An alternative that is not a VECTORIZE is read lane by lane.
  UPtr x = UOp::make(Op::LOAD, dtypes::float32.vec(6), {vindex(out, 6, idx(0))});
  UPtr lx = UOp::make(Op::LOAD, dtypes::float32.vec(6), {pieces, x, g});
  EXPECT_EQ(cat_of_loads(lx)->src[1]->src[1], vec({gep(x, 4), gep(x, 5)}));
  // A lane of a CAT: the lane of its piece; a GEP of several lanes or past the end declines.
  EXPECT_EQ(lane_of_cat(want, {5}), gep(want->src[1], 1));
  EXPECT_EQ(lane_of_cat(want, {3}), gep(want->src[0], 3));
  EXPECT_FALSE(lane_of_cat(want, {6}));
  EXPECT_FALSE(lane_of_cat(want, {0, 1}));
  // A scalar piece is its own lane.
  UPtr s = load_at(in, idx(5));
  EXPECT_EQ(lane_of_cat(UOp::make(Op::CAT, dtypes::float32.vec(2), {vload(vindex(in, 1, idx(4))), s}), {1}), s);
  // A store through pieces: one store per piece, in place.
  UPtr other = store(out, idx(7), f32(7));
  UPtr noop = UOp::make(Op::NOOP, dtypes::void_, {other, store(pieces, vec(vals))});
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  EXPECT_EQ(graph_rewrite(noop, rules::distribute_ptrcats, ctx), noop);  // the pass store_pieces splits it
  EXPECT_EQ(split_ptrcat_stores(noop), UOp::make(Op::NOOP, dtypes::void_,
                                                 {other, store(v4, vec({vals[0], vals[1], vals[2], vals[3]})),
                                                  store(v2, vec({vals[4], vals[5]}))}));
  EXPECT_FALSE(split_ptrcat_stores(UOp::make(Op::NOOP, dtypes::void_, {other})));
  // Pieces that do not hold the access's lanes: no rule answers.
  EXPECT_FALSE(cat_of_loads(UOp::make(Op::LOAD, dtypes::float32.vec(8), {pieces})));
  EXPECT_FALSE(split_ptrcat_stores(sink(store(pieces, vec({vals[0], vals[1]})))));
  // One piece is the pointer itself.
  UPtr one = UOp::make(Op::PTRCAT, dtypes::float32.vec(4).ptr_to(-1), {v4});
  UPtr whole;
  EXPECT_EQ(fired_by([&] {
              whole = graph_rewrite(sink(store(one, vec({vals[0], vals[1], vals[2], vals[3]}))),
                                    rules::distribute_ptrcats, ctx);
            }),
            (Fired{{"ptrcat_of_one_pointer", 1}}));
  EXPECT_EQ(whole, sink(store(v4, vec({vals[0], vals[1], vals[2], vals[3]}))));
}

TEST(Devectorize, StoresGroupAndValuesBecomeVectorOps) {
  UPtr a = param(1, dtypes::float32, 8), out = param(0, dtypes::float32, 8);
  UPtr r = range(2, 0);
  std::vector<UPtr> stores;
  for (int i = 0; i < 4; ++i)
    stores.push_back(store(out, r * 4 + idx(i), load_at(a, r * 4 + idx(i)) + load_at(a, r * 4 + idx(i))));
  UPtr noop = UOp::make(Op::NOOP, dtypes::void_, stores);
  // Through the rule sets and helpers as the passes ptrcat, group_stores, devectorize, store_pieces and
  // vector_lanes run them (the C++ passes on each group: here the one NOOP): one vector load, add and store.
  UPtr k = sink(UOp::make(Op::END, dtypes::void_, {noop, r}));
  FoldCtx ctx{kCpu, vector_scalars(), {}};
  plan_ptrcats(k, ctx);
  UPtr group = graph_rewrite(k, rules::group_loads, ctx)->src[0]->src[0];
  group = graph_rewrite(ptrcat_stores(ctx, group), rules::distribute_ptrcats, ctx);
  EXPECT_FALSE(split_ptrcat_stores(group));  // the PTRCAT of one float4 pointer is that pointer
  group = graph_rewrite(group, rules::vector_lanes);
  UPtr vl = vload(vindex(a, 4, r * 4 + idx(0)));
  UPtr want = store(vindex(out, 4, r * 4 + idx(0)), vl + vl);
  EXPECT_EQ(group, UOp::make(Op::NOOP, dtypes::void_, {want})) << group;
}

TEST(Devectorize, VectorLanes) {
  UPtr x = UOp::make(Op::LOAD, dtypes::float32.vec(2),
                     {UOp::make(Op::INDEX, dtypes::float32.vec(2).ptr_to(-1), {param(0, dtypes::float32, 2), idx(0)})});
  EXPECT_EQ(graph_rewrite(vec({gep(x, 0), gep(x, 1)}), rules::whole_vectors), x);
  // A shuffle, a part of x, lanes of two vectors stay.
  UPtr y =
      UOp::make(Op::LOAD, x->dtype, {UOp::make(Op::INDEX, x->src[0]->dtype, {param(1, dtypes::float32, 2), idx(0)})});
  for (const UPtr& stays : {vec({gep(x, 1), gep(x, 0)}), vec({gep(x, 0)}), vec({gep(x, 0), gep(y, 1)})})
    EXPECT_EQ(graph_rewrite(stays, rules::whole_vectors), stays) << stays;
  // A lane of a VECTORIZE is that lane; a GEP of two lanes, or past the end, stays (the rule declines).
  UPtr swapped = vec({gep(x, 1), gep(x, 0)});
  EXPECT_EQ(graph_rewrite(gep(swapped, 1), rules::lanes_of_vectors), gep(x, 0));
  UPtr two = UOp::make(Op::GEP, dtypes::float32.vec(2), {swapped}, std::vector<int64_t>{0, 1});
  EXPECT_EQ(graph_rewrite(two, rules::lanes_of_vectors), two);
  UPtr past = UOp::make(Op::GEP, dtypes::float32, {swapped}, std::vector<int64_t>{2});
  EXPECT_EQ(graph_rewrite(past, rules::lanes_of_vectors), past);
  UPtr c = cnst(dtypes::float32, 2);
  UPtr lanes = vec({gep(x, 0) * c, gep(x, 1) * c});
  EXPECT_TRUE(vector_alu_lanes(lanes));
  EXPECT_EQ(lane_operands(lanes, 1), vec({c, c}));
  EXPECT_EQ(graph_rewrite(lanes, rules::vector_lanes), x * vec({c, c}));
  EXPECT_EQ(graph_rewrite(vec({-gep(x, 0), -gep(x, 1)}), rules::vector_lanes), -x);
  // Mixed ops, comparisons (bool vectors), casts, integer division and 16-bit floats stay per lane.
  UPtr i = cnst_int(dtypes::int32, 3), h = cnst(dtypes::float16, 1);
  for (const UPtr& stays : {vec({gep(x, 0) * c, gep(x, 1) + c}), vec({gep(x, 0) < c, gep(x, 1) < c}),
                            vec({where(gep(x, 0) < c, c, c), where(gep(x, 1) < c, c, c)}),
                            vec({cast(gep(x, 0), dtypes::int32), cast(gep(x, 1), dtypes::int32)}), vec({i / i, i / i}),
                            vec({h + h, h + h})})
    EXPECT_EQ(graph_rewrite(stays, rules::vector_lanes), stays) << stays;
  EXPECT_FALSE(vector_alu_lanes(vec({i / i, i / i})));
  EXPECT_TRUE(vector_alu_lanes(vec({i * i, i * i})));  // every integer type the targets have vectors of
  EXPECT_FALSE(vector_alu_lanes(vec({h + h, h + h})));
  UPtr l = cnst_int(dtypes::int64, 3);
  EXPECT_FALSE(
      vector_alu_lanes(vec({i * i, UOp::make(Op::MUL, dtypes::int32, {i, l})})));  // an operand of another type
  // uniform_lanes: one foldable dtype in every lane.
  EXPECT_TRUE(uniform_lanes(vec({i, i * i})));
  EXPECT_FALSE(uniform_lanes(UOp::make(Op::VECTORIZE, dtypes::int32.vec(2), {i, l})));
  EXPECT_FALSE(uniform_lanes(vec({h, h})));
}

// Lanes that one scalar condition picks between (a reduction run tile by tile): one WHERE of vectors, whose
// operands then fold as every vector lane does.
TEST(Devectorize, LanesOfOneConditionAreOneVectorWhere) {
  UPtr x = UOp::make(Op::LOAD, dtypes::float32.vec(2),
                     {UOp::make(Op::INDEX, dtypes::float32.vec(2).ptr_to(-1), {param(0, dtypes::float32, 2), idx(0)})});
  UPtr t = range(4, 0), first = t < idx(1), c = cnst(dtypes::float32, 2);
  UPtr lanes = vec({where(first, c, gep(x, 0) + c), where(first, c, gep(x, 1) + c)});
  EXPECT_EQ(graph_rewrite(lanes, rules::vector_lanes),
            UOp::make(Op::WHERE, dtypes::float32.vec(2), {first, vec({c, c}), x + vec({c, c})}));
  // A condition per lane, and a gate (an Invalid lane), stay per lane.
  UPtr own = vec({where(gep(x, 0) < c, c, c), where(first, c, c)});
  EXPECT_EQ(graph_rewrite(own, rules::vector_lanes), own);
  UPtr gated = vec({where(first, c, invalid(dtypes::float32)), where(first, c, invalid(dtypes::float32))});
  EXPECT_EQ(graph_rewrite(gated, rules::vector_lanes), gated);
}

// With vector comparisons: lanes each chosen by a comparison of its own (a relu) are a WHERE of vectors under a
// vector comparison; lanes of MAX a MAX of vectors.
TEST(Devectorize, LanesComparedEachAreOneVectorCompareAndWhere) {
  UPtr x = UOp::make(Op::LOAD, dtypes::float32.vec(2),
                     {UOp::make(Op::INDEX, dtypes::float32.vec(2).ptr_to(-1), {param(0, dtypes::float32, 2), idx(0)})});
  UPtr zero = cnst(dtypes::float32, 0), zeros = vec({zero, zero});
  auto relu = [&](const UPtr& v) { return where(zero < v, v, zero); };
  auto lanes = [](const UPtr& g) { return graph_rewrite(g, {&rules::vector_lanes, &rules::vector_compares}); };
  EXPECT_EQ(lanes(vec({relu(gep(x, 0)), relu(gep(x, 1))})), where(zeros < x, x, zeros));
  EXPECT_EQ(lanes(vec({gep(x, 0) < zero, gep(x, 1) < zero})), x < zeros);
  UPtr m = UOp::make(Op::MAX, dtypes::float32, {gep(x, 0), zero}),
       n = UOp::make(Op::MAX, dtypes::float32, {gep(x, 1), zero});
  EXPECT_EQ(lanes(vec({m, n})), UOp::make(Op::MAX, x->dtype, {x, zeros}));
  // Compared lanes cast to floats (a max pool's gradient) select 1 or 0; a cast of a bool that is no comparison
  // (a gate) stays per lane.
  UPtr ones = vec({cnst(dtypes::float32, 1), cnst(dtypes::float32, 1)});
  auto hit = [&](const UPtr& v) { return cast(UOp::make(Op::CMPEQ, dtypes::bool_, {v, zero}), dtypes::float32); };
  EXPECT_EQ(lanes(vec({hit(gep(x, 0)), hit(gep(x, 1))})),
            where(UOp::make(Op::CMPEQ, dtypes::bool_.vec(2), {x, zeros}), ones, zeros));
  UPtr gate_cast = vec({cast(range(4, 0) < idx(2), dtypes::float32), cast(range(4, 0) < idx(3), dtypes::float32)});
  EXPECT_EQ(lanes(gate_cast), gate_cast);
  // Stay per lane: conditions of different ops, or not comparisons (a gate's AND), comparisons of 64-bit lanes, an
  // Invalid lane; and a relu without the vector_compares rules.
  UPtr d = cnst(dtypes::float64, 1), t = range(4, 0), g = (t < idx(2)) & (t < idx(3));
  UPtr one = cnst(dtypes::float32, 1);
  for (const UPtr& stays :
       {vec({where(zero < gep(x, 0), one, zero),
             where(UOp::make(Op::CMPEQ, dtypes::bool_, {gep(x, 1), zero}), one, zero)}),
        vec({where(g, gep(x, 0), zero), where(zero < gep(x, 1), gep(x, 1), zero)}), vec({d < d, d < d + d}),
        vec({where(zero < gep(x, 0), gep(x, 0), invalid(dtypes::float32)), relu(gep(x, 1))})}) {
    EXPECT_EQ(lanes(stays), stays) << stays;
  }
  EXPECT_EQ(graph_rewrite(vec({relu(gep(x, 0)), relu(gep(x, 1))}), rules::vector_lanes),
            vec({relu(gep(x, 0)), relu(gep(x, 1))}));
  EXPECT_TRUE(vector_compare_lanes(vec({gep(x, 0) < zero, gep(x, 1) < one})));
  EXPECT_FALSE(vector_compare_lanes(vec({d < d, d < d + d})));
}

// The expander's accumulator lanes: REDUCEs of one op over the same ranges are one REDUCE of a vector.
TEST(Devectorize, LanesOfReducesAreOneVectorReduce) {
  UPtr in = param(1, dtypes::float32, 8);
  UPtr r = range(4, 0, AxisType::Reduce), s = range(2, 1, AxisType::Reduce);
  auto red = [](const UPtr& x, std::vector<UPtr> rs, Op op = Op::ADD) {
    rs.insert(rs.begin(), x);
    return UOp::make(Op::REDUCE, x->dtype, std::move(rs), op);
  };
  UPtr a = load_at(in, r * 2), b = load_at(in, r * 2 + idx(1));
  EXPECT_EQ(graph_rewrite(vec({red(a, {r}), red(b, {r})}), rules::vector_reduce),
            UOp::make(Op::REDUCE, dtypes::float32.vec(2), {vec({a, b}), r}, Op::ADD));
  for (const UPtr& stays : {vec({red(a, {r}), red(b, {s})}), vec({red(a, {r}), red(b, {r}, Op::MAX)}),
                            vec({red(a, {r}), red(b, {r, s})}), vec({red(a, {r}), b})})
    EXPECT_EQ(graph_rewrite(stays, rules::vector_reduce), stays) << stays;
}

// Seed 003's GEP pushing, for a target without vector ALU ops: a lane of an ALU op on vectors is the op on
// the lanes of its operands, down to the lanes of the loads.
TEST(Devectorize, GepPushedThroughAluOps) {
  auto vload = [](int slot) {
    return UOp::make(
        Op::LOAD, dtypes::float32.vec(4),
        {UOp::make(Op::INDEX, dtypes::float32.vec(4).ptr_to(-1), {param(slot, dtypes::float32, 4), idx(0)})});
  };
  UPtr a = vload(1), b = vload(2);
  UPtr sum = UOp::make(Op::ADD, dtypes::float32.vec(4), {a, b});
  UPtr e = UOp::make(Op::EXP2, dtypes::float32.vec(4), {sum});
  EXPECT_EQ(graph_rewrite(gep(e, 2), rules::scalar_lanes),
            UOp::make(Op::EXP2, dtypes::float32, {gep(a, 2) + gep(b, 2)}));
  // A comparison keeps its GEP: its operands' lanes are floats, its own bool.
  UPtr lt = UOp::make(Op::CMPLT, dtypes::bool_.vec(4), {a, b});
  UPtr g = UOp::make(Op::GEP, dtypes::bool_, {lt}, std::vector<int64_t>{1});
  EXPECT_EQ(graph_rewrite(g, rules::scalar_lanes), g);
}

}  // namespace
}  // namespace rg
