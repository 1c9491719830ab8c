// Every ALU op of compiler/ir/ops.def at every dtype the reference evaluator defines it for, lowered with each
// device's options, rendered, compiled and run, against the evaluator (compiler/ir/eval.h) on the same operands:
// the renderers spell ops and the decompositions stage supplies their semantics (docs/pipeline.md#decompositions),
// so every backend must compute what the evaluator says. One kernel per dtype holds every op, each over its own
// operands: small and large values, zero divisors, the dtype's extremes, infinities.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/cuda/host_emulator.h"
#include "backends/metal/renderer.h"
#include "compiler/codegen/codegen.h"
#include "compiler/ir/eval.h"
#include "compiler/ir/kernel_builders.h"
#include "runtime/device.h"
#include "tests/device_test.h"

namespace rg {
namespace {

using namespace testk;

const DType kDtypes[] = {dtypes::bool_,  dtypes::int8,  dtypes::uint8,  dtypes::int16,   dtypes::int32,
                         dtypes::uint32, dtypes::int64, dtypes::uint64, dtypes::float32, dtypes::float64};

// Operands worth trying at dt, as the evaluator holds them.
std::vector<Value> samples(DType dt) {
  std::vector<Value> v;
  if (dt.is_float()) {
    const double inf = std::numeric_limits<double>::infinity();
    for (double f : {0.0, -0.0, 1.0, -1.5, 2.25, 3.0, -7.0, 0.001, 100.5, 1e30, -inf, inf})
      v.push_back(Value{0, round_float(dt, f)});
    return v;
  }
  if (dt.is_bool()) return {Value{0}, Value{1}};
  const int bits = dt.bits();
  const int64_t max = bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << (bits - 1)) - 1;
  std::vector<int64_t> ints{0, 1, 2, 3, 7, 100, max, -1, -2, -3, -100, -max - 1, 5 * bits - 1, bits - 1, bits};
  for (int64_t i : ints) v.push_back(*eval_alu(Op::ADD, dt, {Value{i}, Value{0}}));  // wrapped to dt, as C converts
  return v;
}

struct Case {
  Op op;
  std::vector<std::vector<Value>> args;  // per element, the operands
  std::vector<Value> want;
  DType out;  // bool for comparisons
};

// The operand dtypes of op's sources at dt: WHERE's condition is bool.
DType operand_dtype(Op op, size_t i, DType dt) { return op == Op::WHERE && i == 0 ? dtypes::bool_ : dt; }

// Every ALU op with the operand tuples of samples(dt) it is defined on (at most 48 of them, spread over the
// cross product).
std::vector<Case> cases(DType dt) {
  std::vector<Case> out;
  const Op all[] = {
#define OP(name, arity, arg, classes, infix) Op::name,
#include "compiler/ir/ops.def"
#undef OP
  };
  for (Op op : all) {
    if (!is(op, kALU)) continue;
    const int arity = is(op, kUnary) ? 1 : is(op, kBinary) ? 2 : 3;
    std::vector<std::vector<Value>> pools;
    for (int i = 0; i < arity; ++i) pools.push_back(samples(operand_dtype(op, size_t(i), dt)));
    Case c{op, {}, {}, is(op, kComparison) ? dtypes::bool_ : dt};
    size_t total = 1;
    for (const auto& p : pools) total *= p.size();
    const size_t step = std::max<size_t>(1, total / 48);
    for (size_t t = 0; t < total && c.args.size() < 48; t += step) {
      std::vector<Value> a;
      size_t rest = t;
      for (const auto& p : pools) a.push_back(p[rest % p.size()]), rest /= p.size();
      std::optional<Value> r = eval_alu(op, dt, a);
      if (!r) continue;
      c.args.push_back(a);
      c.want.push_back(*r);
    }
    if (!c.args.empty()) out.push_back(std::move(c));
  }
  return out;
}

void put(std::vector<uint8_t>& mem, size_t i, DType dt, Value v) {
  const size_t s = size_t(dt.itemsize());
  if (dt == dtypes::float32) {
    const float f = float(v.f);
    std::memcpy(&mem[i * s], &f, s);
  } else if (dt == dtypes::float64) {
    std::memcpy(&mem[i * s], &v.f, s);
  } else {
    std::memcpy(&mem[i * s], &v.i, s);  // little-endian: the low bytes
  }
}

Value get(const std::vector<uint8_t>& mem, size_t i, DType dt) {
  const size_t s = size_t(dt.itemsize());
  Value v;
  if (dt == dtypes::float32) {
    float f;
    std::memcpy(&f, &mem[i * s], s);
    v.f = f;
  } else if (dt == dtypes::float64) {
    std::memcpy(&v.f, &mem[i * s], s);
  } else {
    uint64_t bits = 0;
    std::memcpy(&bits, &mem[i * s], s);
    v = *eval_alu(Op::ADD, dt, {Value{int64_t(bits)}, Value{0}});  // sign-extended as dt holds it
  }
  return v;
}

// The kernel of every case at dt: each case its own output slot and one slot per source after it, its own range.
struct Built {
  UPtr kernel;
  std::vector<std::vector<uint8_t>> buffers;  // by slot
  std::vector<size_t> out_slot;               // per case
};

Built build(const std::vector<Case>& cs, DType dt) {
  Built b;
  std::vector<UPtr> ends;
  int64_t slot = 0;
  for (size_t k = 0; k < cs.size(); ++k) {
    const Case& c = cs[k];
    const int64_t n = int64_t(c.args.size());
    UPtr out = param(slot, c.out, n);
    b.out_slot.push_back(size_t(slot++));
    b.buffers.emplace_back(size_t(n * c.out.itemsize()), 0xAB);
    UPtr r = range(n, int64_t(k));
    std::vector<UPtr> src;
    for (size_t i = 0; i < c.args[0].size(); ++i) {
      const DType odt = operand_dtype(c.op, i, dt);
      std::vector<uint8_t> mem(size_t(n * odt.itemsize()));
      for (int64_t e = 0; e < n; ++e) put(mem, size_t(e), odt, c.args[size_t(e)][i]);
      src.push_back(load(param(slot++, odt, n), r));
      b.buffers.push_back(std::move(mem));
    }
    ends.push_back(end(store(out, r, UOp::make(c.op, c.out, std::move(src))), {r}));
  }
  b.kernel = sink(std::move(ends));
  return b;
}

// Transcendental ops and the fused multiply-add may differ from the evaluator's double math in the last bits.
bool close(Op op, DType dt, Value got, Value want) {
  if (!dt.is_float()) return got.i == want.i;
  if (std::isnan(want.f)) return std::isnan(got.f);
  // MAX of 0 and -0 may be either (IEEE's maxNum leaves it open; C's a < b ? b : a picks by order).
  if (got.f == want.f) return std::signbit(got.f) == std::signbit(want.f) || want.f != 0 || op == Op::MAX;
  const bool inexact = op == Op::EXP2 || op == Op::LOG2 || op == Op::SIN || op == Op::POW || op == Op::MULACC;
  const double ulp = dt == dtypes::float32 ? 1.2e-7 : 2.3e-16;
  return inexact && std::fabs(got.f - want.f) <= 4 * ulp * std::fabs(want.f);
}

std::string str(DType dt, Value v) { return dt.is_float() ? std::to_string(v.f) : std::to_string(v.i); }

void expect_values(const std::vector<Case>& cs, const Built& b, DType dt, const std::string& where) {
  for (size_t k = 0; k < cs.size(); ++k) {
    const Case& c = cs[k];
    int wrong = 0;
    for (size_t e = 0; e < c.args.size() && wrong < 3; ++e) {
      const Value got = get(b.buffers[b.out_slot[k]], e, c.out);
      if (close(c.op, c.out, got, c.want[e])) continue;
      ++wrong;
      std::string args;
      for (size_t i = 0; i < c.args[e].size(); ++i)
        args += (i ? ", " : "") + str(operand_dtype(c.op, i, dt), c.args[e][i]);
      ADD_FAILURE() << where << ": " << name(c.op) << "(" << args << ") at " << dt.name() << " gave " << str(c.out, got)
                    << ", the evaluator " << str(c.out, c.want[e]);
    }
  }
}

class EveryOp : public OnDevice {};

TEST_P(EveryOp, AgreesWithTheEvaluatorAtEveryDtype) {
  Device& dev = get_device(device(), "test");
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dt.name());
    const std::vector<Case> cs = cases(dt);
    Built b = build(cs, dt);
    const Program p = lower(b.kernel, dev.lower_options());
    std::shared_ptr<const Runner> runner = dev.compile(p, dev.render(p));
    std::vector<std::unique_ptr<Allocation>> mem;
    std::vector<Allocation*> args;
    for (const std::vector<uint8_t>& m : b.buffers) {
      mem.push_back(dev.alloc(m.size(), false));
      dev.copy_in(*mem.back(), m.data(), m.size());
      args.push_back(mem.back().get());
    }
    runner->run(dev, args, {});
    for (size_t i = 0; i < b.buffers.size(); ++i) dev.copy_out(b.buffers[i].data(), *mem[i], b.buffers[i].size());
    expect_values(cs, b, dt, device());
  }
}

RG_INSTANTIATE_ON_DEVICES(EveryOp);

#ifndef RG_TEST_CUDA
// CUDA C through the host emulator, and Metal rendered (there is no Metal runtime here: every op must at least
// spell).
TEST(EveryOpEmulated, CudaAgreesWithTheEvaluatorAtEveryDtype) {
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dt.name());
    const std::vector<Case> cs = cases(dt);
    Built b = build(cs, dt);
    emulate_cuda(lower(b.kernel, cuda_lower_options()), b.buffers);
    expect_values(cs, b, dt, "CUDA (emulated)");
  }
}

TEST(EveryOpEmulated, MetalRendersEveryOp) {
  for (DType dt : kDtypes) {
    if (dt.bits() == 64) continue;  // Metal has no 64-bit types
    SCOPED_TRACE(dt.name());
    const std::vector<Case> cs = cases(dt);
    const std::string src = render_metal(lower(build(cs, dt).kernel, metal_lower_options()));
    EXPECT_NE(src.find("kernel void"), std::string::npos) << src;
  }
}
#endif

}  // namespace
}  // namespace rg
