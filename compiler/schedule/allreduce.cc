#include "compiler/schedule/allreduce.h"

#include "compiler/ir/args.h"
#include "compiler/ir/env.h"

namespace rg {

namespace {

UPtr on_device(const UPtr& v, const std::string& device) {
  return UOp::make(Op::COPY, v->dtype, {v, UOp::make(Op::DEVICE, dtypes::void_, {}, device)});
}

UPtr flat(const UPtr& v) {
  const Shape n{int64_t(v->numel())};
  return v->shape == n ? v : UOp::make(Op::RESHAPE, v->dtype, {v}, n);
}

// A 1-d constant of `size` elements in the tensor graph's form: CONST, RESHAPE to (1,), EXPAND unless size is 1.
UPtr constant_1d(DType dt, double v, int64_t size) {
  UPtr c = UOp::make(Op::RESHAPE, dt, {cnst(dt, v)}, Shape{1});
  return size == 1 ? c : UOp::make(Op::EXPAND, dt, {c}, Shape{size});
}

// 1-d pieces one after the other, as Tensor::cat builds it: each padded to the whole with 0 under an explicit
// mask (PAD fills Invalid), and the padded pieces added (or-ed for bools).
UPtr cat_flat(const std::vector<UPtr>& pieces) {
  if (pieces.size() == 1) return pieces[0];
  int64_t total = 0;
  for (const UPtr& p : pieces) total += p->shape[0];
  UPtr acc;
  int64_t at = 0;
  for (const UPtr& p : pieces) {
    const Arg pad = to_arg(Pairs{{at, total - at - p->shape[0]}});
    at += p->shape[0];
    UPtr mask = UOp::make(Op::PAD, dtypes::bool_, {constant_1d(dtypes::bool_, 1, p->shape[0])}, pad);
    UPtr padded =
        UOp::make(Op::WHERE, p->dtype, {mask, UOp::make(Op::PAD, p->dtype, {p}, pad), constant_1d(p->dtype, 0, total)});
    acc = !acc ? padded : UOp::make(p->dtype.is_bool() ? Op::OR : Op::ADD, p->dtype, {acc, padded});
  }
  return acc;
}

UPtr naive(Op op, const UPtr& partial, const std::vector<std::string>& devices, const std::string& tuple) {
  const int64_t n = int64_t(devices.size());
  UPtr acc;
  for (int64_t j = 0; j < n; ++j) {
    UPtr copied = on_device(on_device(partial, devices[j]), tuple);
    // tinygrad's `dnum.eq(j).where(buf, state)`: device j reads its own partial, the others the copy of it.
    UPtr v = UOp::make(Op::WHERE, partial->dtype, {is_device(j, n, partial->shape), partial, copied});
    acc = acc ? UOp::make(op, v->dtype, {acc, v}) : v;
  }
  return acc;
}

// The flat partials cut into n chunks (sizes a multiple of the largest of 32, 16, ..., 2 that divides them).
// Ring: chunk i travels the ring from device i, each device adding its own chunk i (reduce-scatter), then the
// sum of chunk i travels on round the ring (allgather). All-to-all: every device's chunk i is copied to device
// i and reduced there, then sent from device i to every other device. Device k concatenates the chunks it
// holds, and a COPY of the STACK of those n values puts each in its device's shard (tinygrad's MSTACK).
UPtr chunked(Op op, const UPtr& partial, const std::vector<std::string>& devices, const std::string& tuple,
             bool all_to_all) {
  const int64_t n = int64_t(devices.size()), numel = int64_t(partial->numel());
  std::vector<UPtr> own;  // device k's partial, on device k, flat
  for (int64_t k = 0; k < n; ++k) own.push_back(flat(on_device(partial, devices[k])));
  int64_t factor = 1;
  for (int64_t f : {32, 16, 8, 4, 2})
    if (numel % f == 0) {
      factor = f;
      break;
    }
  const int64_t base = numel / factor / n, left = numel / factor % n;
  std::vector<std::vector<UPtr>> held(n);  // held[k]: the reduced chunks on device k, in order
  auto to = [&](const UPtr& v, int64_t k) { return on_device(v, devices[k]); };
  for (int64_t i = 0, at = 0; i < n; ++i) {
    const int64_t size = (base + (i < left)) * factor;
    if (size == 0) continue;
    const Arg bounds = to_arg(Pairs{{at, at + size}});
    auto chunk = [&](int64_t k) { return UOp::make(Op::SHRINK, partial->dtype, {own[k]}, bounds); };
    at += size;
    if (all_to_all) {
      UPtr r;
      for (int64_t j = 0; j < n; ++j) {
        UPtr c = j == i ? chunk(j) : to(chunk(j), i);
        r = r ? UOp::make(op, c->dtype, {r, c}) : c;
      }
      for (int64_t step = 0; step < n; ++step) {
        const int64_t dest = (i + step) % n;
        held[dest].push_back(dest == i ? r : to(r, dest));
      }
      continue;
    }
    UPtr r = chunk(i);
    for (int64_t step = 0; step + 1 < n; ++step) {
      const int64_t dest = (i + step + 1) % n;
      r = UOp::make(op, r->dtype, {to(r, dest), chunk(dest)});
    }
    held[(i + n - 1) % n].push_back(r);
    for (int64_t step = 0; step + 1 < n; ++step) held[(i + step) % n].push_back(r = to(r, (i + step) % n));
  }
  std::vector<UPtr> whole;
  for (int64_t k = 0; k < n; ++k) whole.push_back(cat_flat(held[k]));
  UPtr stack = UOp::make(Op::STACK, partial->dtype, whole);
  UPtr stacked = UOp::make(Op::COPY, partial->dtype, {stack, UOp::make(Op::DEVICE, dtypes::void_, {}, tuple)}, n);
  return stacked->shape == partial->shape ? stacked : UOp::make(Op::RESHAPE, partial->dtype, {stacked}, partial->shape);
}

}  // namespace

UPtr is_device(int64_t k, int64_t devices, const Shape& s) {
  UPtr c = UOp::make(Op::CMPEQ, dtypes::bool_, {device_num(devices), cnst_int(dtypes::index, k)});
  if (s.empty()) return c;
  return UOp::make(Op::EXPAND, dtypes::bool_, {UOp::make(Op::RESHAPE, dtypes::bool_, {c}, Shape(s.size(), 1))}, s);
}

Allreduce allreduce_kind(int64_t devices, int64_t numel) {
  const bool large = devices > 2 && numel > env_count("RG_RING_ALLREDUCE_THRESHOLD", 0, 1 << 30, 256000);
  const int all_to_all = env_count("RG_ALL2ALL", 0, 2, 0), ring = env_count("RG_RING", 0, 2, 1);
  if (all_to_all == 2 || (all_to_all == 1 && large)) return Allreduce::all_to_all;
  if (ring == 2 || (ring == 1 && large)) return Allreduce::ring;
  return Allreduce::naive;
}

UPtr allreduce(Op op, const UPtr& partial, const std::vector<std::string>& devices, const std::string& tuple,
               Allreduce kind) {
  return kind == Allreduce::naive ? naive(op, partial, devices, tuple)
                                  : chunked(op, partial, devices, tuple, kind == Allreduce::all_to_all);
}

}  // namespace rg
