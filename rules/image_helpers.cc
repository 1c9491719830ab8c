#include "rules/image_helpers.h"

#include <string>
#include <vector>

#include "compiler/ir/rewrite.h"
#include "rules/symbolic.h"

namespace rg {

namespace {

UPtr simplified(const UPtr& x) { return graph_rewrite(x, rules::symbolic); }

DType texel_ptr() { return dtypes::float32.vec(4).ptr_to(); }

// INDEX(img, i, rest...) with i replaced by its texel's coordinate.
UPtr texel_address_of(const UPtr& addr, const UPtr& i) {
  std::vector<UPtr> src(addr->src.begin(), addr->src.end());
  src[1] = texel_coord(i, image_of(addr->src[0])->dtype.image_w);
  return UOp::make(Op::INDEX, texel_ptr(), std::move(src));
}

// Lane k of v, or v itself when it is a scalar.
UPtr lane(const UPtr& v, int64_t k) {
  if (v->dtype.count == 1) return v;
  return UOp::make(Op::GEP, v->dtype.scalar_type(), {v}, std::vector<int64_t>{k});
}

// Float i of the image: its texel read (gated like the load), then its channel.
UPtr channel(const UPtr& load, const UPtr& i, int64_t k) {
  std::vector<UPtr> src{texel_address_of(load->src[0], i)};
  if (load->src.size() == 3) {
    const UPtr alt = lane(load->src[1], k);
    src.push_back(UOp::make(Op::VECTORIZE, alt->dtype.vec(4), {alt, alt, alt, alt}));
    src.push_back(load->src[2]);
  }
  UPtr texel = UOp::make(Op::LOAD, dtypes::float32.vec(4), std::move(src));
  auto gep = [&](int64_t c) { return lane(texel, c); };
  const UPtr c = simplified(i % 4);
  if (c->is_const()) return gep(c->as_int());
  auto is = [&](int64_t v) { return eq(c, cnst_int(c->dtype, v)); };
  return where(is(0), gep(0), where(is(1), gep(1), where(is(2), gep(2), gep(3))));
}

}  // namespace

const UOp* image_of(const UPtr& buf) {
  const UOp* b = buf.get();
  while (b->op == Op::AFTER) b = b->src[0].get();
  return b->op == Op::PARAM && b->dtype.is_image() ? b : nullptr;
}

bool float_access(const UPtr& b, const UPtr& i) { return image_of(b) && i->dtype.count == 1; }

bool texel_aligned(const UPtr& i) {
  const UPtr c = simplified(i % 4);
  return c->is_const() && c->as_int() == 0;
}

UPtr texel_coord(const UPtr& i, int64_t width) {
  const UPtr t = i / 4;
  return UOp::make(Op::VECTORIZE, i->dtype.vec(2), {simplified(t % width), simplified(t / width)});
}

UPtr texel_address(const UPtr& addr) { return texel_address_of(addr, addr->src[1]); }

UPtr channels_of_texels(const UPtr& load) {
  const UPtr& i = load->src[0]->src[1];
  const int n = load->dtype.count;
  if (n == 1) return channel(load, i, 0);
  std::vector<UPtr> lanes;
  for (int k = 0; k < n; ++k) lanes.push_back(channel(load, simplified(i + k), k));
  return UOp::make(Op::VECTORIZE, load->dtype, std::move(lanes));
}

UPtr partial_texel_store(const UPtr& store) {
  const UPtr& addr = store->src[0];
  const int n = store->src[1]->dtype.count;
  throw Error("a store of " + std::to_string(n) + (n == 1 ? " lane" : " lanes") + " to " +
              image_of(addr->src[0])->dtype.name() + " at float " + render_expr(addr->src[1]) +
              ": an image is written a whole texel at a time (4 lanes at a multiple of 4; upcast the innermost "
              "output axis by 4)");
}

}  // namespace rg
