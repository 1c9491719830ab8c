// rules/image.rules and its helpers: image buffers read and written as float4 texels at int2 coordinates.
// Coordinates are checked by value (each index substituted and simplified) against ((i/4) % w, (i/4) / w)
// computed by hand.
#include "rules/image.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "compiler/ir/error_of.h"
#include "compiler/ir/kernel_builders.h"
#include "compiler/ir/rewrite.h"
#include "rules/image_helpers.h"
#include "rules/symbolic.h"

namespace rg {
namespace {

using namespace testk;

UPtr image_param(int64_t slot, int64_t h, int64_t w) { return UOp::make(Op::PARAM, dtypes::imagef(h, w), {}, slot); }
const DType kFloat4Ptr = dtypes::float32.vec(4).ptr_to();

// The value of index expression e where RANGE r is v.
int64_t at(const UPtr& e, const UPtr& r, int64_t v) {
  UPtr x = graph_rewrite(substitute(e, {{r, idx(v)}}), rules::symbolic);
  EXPECT_TRUE(x->is_const()) << render(x);
  return x->is_const() ? x->as_int() : -1;
}

std::set<std::string> fired(const RuleFirings& f) {
  std::set<std::string> names;
  for (const auto& [rule, n] : f.counts()) names.insert(rule->name);
  return names;
}

TEST(ImageHelpers, ImageOfSeesThroughAfter) {
  UPtr img = image_param(0, 2, 3);
  EXPECT_EQ(image_of(img), img.get());
  EXPECT_EQ(image_of(UOp::make(Op::AFTER, img->dtype, {img, sink(std::vector<UPtr>{})})), img.get());
  EXPECT_EQ(image_of(param(0, dtypes::float32, 24)), nullptr);
  EXPECT_TRUE(float_access(img, idx(4)));
  EXPECT_FALSE(float_access(param(0, dtypes::float32, 24), idx(4)));
}

TEST(ImageHelpers, TexelAlignedWhereverItRuns) {
  UPtr r = range(6, 0);
  EXPECT_TRUE(texel_aligned(r * 4));
  EXPECT_TRUE(texel_aligned(r * 8 + 12));
  EXPECT_FALSE(texel_aligned(r * 4 + 2));
  EXPECT_FALSE(texel_aligned(r * 2));  // r = 1 is float 2
}

TEST(ImageHelpers, TexelCoordIsColumnThenRow) {
  // 6 texels of a 3-wide image: texel t is at (t % 3, t / 3); float 4t + c is in texel t.
  UPtr t = range(6, 0);
  for (int64_t c = 0; c < 4; ++c) {
    UPtr xy = texel_coord(t * 4 + c, 3);
    ASSERT_EQ(xy->op, Op::VECTORIZE);
    EXPECT_EQ(xy->dtype, dtypes::index.vec(2));
    for (int64_t v = 0; v < 6; ++v) {
      EXPECT_EQ(at(xy->src[0], t, v), v % 3) << "texel " << v << " channel " << c;
      EXPECT_EQ(at(xy->src[1], t, v), v / 3) << "texel " << v << " channel " << c;
    }
  }
  // Simplified: an aligned index's coordinate is t % 3 and t / 3, without the / 4.
  EXPECT_EQ(texel_coord(t * 4, 3)->src[0], graph_rewrite(t % 3, rules::symbolic));
}

TEST(ImageFixup, WholeTexelLoadIsOneTexelRead) {
  UPtr img = image_param(1, 2, 3), t = range(6, 0);
  UPtr vload = UOp::make(Op::LOAD, dtypes::float32.vec(4), {UOp::make(Op::INDEX, kFloat4Ptr, {img, t * 4})});
  RuleFirings f;
  UPtr out = graph_rewrite(vload, rules::image_fixup);
  EXPECT_TRUE(fired(f).count("texel_load"));
  ASSERT_EQ(out->op, Op::LOAD);
  EXPECT_EQ(out->dtype, dtypes::float32.vec(4));
  const UPtr& a = out->src[0];
  ASSERT_EQ(a->op, Op::INDEX);
  EXPECT_EQ(a->dtype, kFloat4Ptr);
  EXPECT_EQ(a->src[0], img);
  EXPECT_EQ(a->src[1], texel_coord(t * 4, 3));
}

TEST(ImageFixup, ScalarLoadSelectsItsChannel) {
  UPtr img = image_param(1, 2, 3), t = range(6, 0);
  // Float 4t + 2: channel 2 (z) of texel t, known from the index.
  UPtr out = graph_rewrite(load_at(img, t * 4 + 2), rules::image_fixup);
  ASSERT_EQ(out->op, Op::GEP) << render(out);
  EXPECT_EQ(out->arg_ints(), std::vector<int64_t>{2});
  const UPtr& texel = out->src[0];
  ASSERT_EQ(texel->op, Op::LOAD);
  EXPECT_EQ(texel->dtype, dtypes::float32.vec(4));
  EXPECT_EQ(texel->src[0]->src[1], texel_coord(t * 4, 3));
  // Float r (any channel): a WHERE on r % 4 between the texel's four lanes.
  UPtr r = range(24, 0);
  UPtr any = graph_rewrite(load_at(img, r), rules::image_fixup);
  EXPECT_EQ(any->op, Op::WHERE) << render(any);
  size_t loads = 0;
  for (const UPtr& u : toposort(any)) loads += u->op == Op::LOAD;
  EXPECT_EQ(loads, 1u) << "one texel read for the four channels";
  // Where r is known, the WHERE is lane r % 4 of texel r / 4.
  for (int64_t v : {0, 5, 10, 23}) {
    UPtr known = graph_rewrite(substitute(any, {{r, idx(v)}}), rules::symbolic);
    ASSERT_EQ(known->op, Op::GEP) << render(known);
    EXPECT_EQ(known->arg_ints(), std::vector<int64_t>{v % 4});
    const UPtr& xy = known->src[0]->src[0]->src[1];
    EXPECT_EQ(xy->src[0], idx(v / 4 % 3));
    EXPECT_EQ(xy->src[1], idx(v / 4 / 3));
  }
}

// Four lanes from float 4t + 2 straddle two texels: lanes z, w of texel t, then x, y of texel t + 1.
TEST(ImageFixup, UnalignedLoadReadsEachLanesTexel) {
  UPtr img = image_param(1, 2, 3), t = range(5, 0);
  UPtr vload = UOp::make(Op::LOAD, dtypes::float32.vec(4), {UOp::make(Op::INDEX, kFloat4Ptr, {img, t * 4 + 2})});
  RuleFirings f;
  UPtr out = graph_rewrite(vload, rules::image_fixup);
  EXPECT_TRUE(fired(f).count("channel_of_texel"));
  ASSERT_EQ(out->op, Op::VECTORIZE) << render(out);
  ASSERT_EQ(out->src.size(), 4u);
  const std::vector<int64_t> channel = {2, 3, 0, 1};
  for (size_t k = 0; k < 4; ++k) {
    const UPtr& g = out->src[k];
    ASSERT_EQ(g->op, Op::GEP) << render(g);
    EXPECT_EQ(g->arg_ints(), std::vector<int64_t>{channel[k]});
    const UPtr& xy = g->src[0]->src[0]->src[1];
    for (int64_t v = 0; v < 5; ++v) {
      const int64_t texel = v + (k < 2 ? 0 : 1);
      EXPECT_EQ(at(xy->src[0], t, v), texel % 3) << "lane " << k << " at t = " << v;
      EXPECT_EQ(at(xy->src[1], t, v), texel / 3) << "lane " << k << " at t = " << v;
    }
  }
  EXPECT_EQ(out->src[0]->src[0], out->src[1]->src[0]) << "lanes of one texel share its read";
}

TEST(ImageFixup, GatedLoadKeepsItsGate) {
  UPtr img = image_param(1, 2, 3), t = range(6, 0);
  UPtr gate = t < 5;
  UPtr l = UOp::make(Op::LOAD, dtypes::float32, {address(img, t * 4 + 1), f32(0), gate});
  UPtr out = graph_rewrite(l, rules::image_fixup);
  ASSERT_EQ(out->op, Op::GEP) << render(out);
  const UPtr& texel = out->src[0];
  ASSERT_EQ(texel->src.size(), 3u);
  EXPECT_EQ(texel->src[2], gate);
  // Outside the gate each channel reads the load's alternative.
  EXPECT_EQ(texel->src[1], UOp::make(Op::VECTORIZE, dtypes::float32.vec(4), {f32(0), f32(0), f32(0), f32(0)}));
}

TEST(ImageFixup, TexelStoreKeepsItsGate) {
  UPtr img = image_param(0, 2, 3), t = range(6, 0);
  UPtr v = UOp::make(Op::VECTORIZE, dtypes::float32.vec(4), {f32(1), f32(2), f32(3), f32(4)});
  UPtr gate = t < 5;
  UPtr st = store(UOp::make(Op::INDEX, kFloat4Ptr, {img, t * 4, gate}), v);
  RuleFirings f;
  UPtr out = graph_rewrite(st, rules::image_fixup);
  EXPECT_TRUE(fired(f).count("texel_store"));
  ASSERT_EQ(out->op, Op::STORE);
  EXPECT_EQ(out->src[1], v);
  const UPtr& a = out->src[0];
  EXPECT_EQ(a->src[1], texel_coord(t * 4, 3));
  ASSERT_EQ(a->src.size(), 3u);
  EXPECT_EQ(a->src[2], gate);
}

TEST(ImageFixup, PartialTexelStoreIsAnError) {
  UPtr img = image_param(0, 2, 3), t = range(6, 0);
  EXPECT_EQ(error_of([&] { graph_rewrite(store(img, t * 4 + 1, f32(1)), rules::image_fixup); }),
            "a store of 1 lane to imagef(2, 3) at float r0*4+1: an image is written a whole texel "
            "at a time (4 lanes at a multiple of 4; upcast the innermost output axis by 4)");
  // Four lanes at an unaligned float straddle two texels.
  UPtr v = UOp::make(Op::VECTORIZE, dtypes::float32.vec(4), {f32(1), f32(2), f32(3), f32(4)});
  EXPECT_NE(error_of([&] {
              graph_rewrite(store(UOp::make(Op::INDEX, kFloat4Ptr, {img, t * 4 + 2}), v), rules::image_fixup);
            }).find("a store of 4 lanes to imagef(2, 3)"),
            std::string::npos);
}

TEST(ImageFixup, PlainBuffersAreUntouched) {
  UPtr buf = param(1, dtypes::float32, 24), t = range(6, 0);
  UPtr l = load_at(buf, t * 4 + 1);
  EXPECT_EQ(graph_rewrite(l, rules::image_fixup), l);
}

}  // namespace
}  // namespace rg
