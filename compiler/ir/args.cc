#include "compiler/ir/args.h"

#include "compiler/ir/shape.h"
#include "compiler/ir/uop.h"

namespace rg {

std::string_view axis_type_name(AxisType t) {
  static constexpr std::string_view kNames[kNumAxisTypes] = {"global", "local",        "loop",   "reduce", "upcast",
                                                             "unroll", "group_reduce", "thread", "warp"};
  const int i = static_cast<int>(t);
  return i < kNumAxisTypes ? kNames[i] : "?";
}

Arg to_arg(const RangeArg& a) { return std::vector<int64_t>{a.axis, static_cast<int64_t>(a.type)}; }

Arg to_arg(const ReduceAxisArg& a) {
  std::vector<int64_t> v{static_cast<int64_t>(a.op)};
  v.insert(v.end(), a.axes.begin(), a.axes.end());
  return v;
}

Arg to_arg(const BufferArg& a) {
  if (a.image_w) return std::vector<int64_t>{a.id, a.size, a.image_h, a.image_w};
  return std::vector<int64_t>{a.id, a.size};
}

Arg to_arg(const Pairs& p) {
  std::vector<int64_t> v;
  for (const auto& [a, b] : p) {
    v.push_back(a);
    v.push_back(b);
  }
  return v;
}

namespace {

// What an Arg holds, in words.
const char* held(const Arg& a) {
  static constexpr const char* kHeld[] = {"no arg",   "an integer", "a float", "Invalid",
                                          "integers", "a string",   "an op",   "a variable"};
  return kHeld[a.index()];
}

[[noreturn]] void bad(Op op, const std::string& why) { throw Error(std::string(name(op)) + ": " + why); }

bool is_reduce_op(int64_t v) { return v == int64_t(Op::ADD) || v == int64_t(Op::MUL) || v == int64_t(Op::MAX); }

// The stored ints of op's typed arg of kind `want`: op has that kind and `a` encodes one.
const std::vector<int64_t>& typed_ints(Op op, const Arg& a, ArgKind want) {
  if (info(op).arg != want)
    bad(op, std::string("arg is ") + arg_kind_name(info(op).arg) + ", not " + arg_kind_name(want));
  const auto* v = std::get_if<std::vector<int64_t>>(&a);
  if (!v) bad(op, std::string("arg must be ") + arg_kind_name(want) + ", got " + held(a));
  bool ok = false;
  switch (want) {
    case ArgKind::Range:
      ok = v->size() == 2 && (*v)[1] >= 0 && (*v)[1] < kNumAxisTypes;
      break;
    case ArgKind::ReduceAxis:
      if (!v->empty() && !is_reduce_op((*v)[0]))
        bad(op, "reduces with add, mul or max, not " +
                    ((*v)[0] >= 0 && (*v)[0] < kNumOps ? lower_name(Op((*v)[0])) : "op #" + std::to_string((*v)[0])));
      ok = !v->empty();
      break;
    case ArgKind::Buffer:
      ok = (v->size() == 2 && (*v)[1] >= 0) ||
           (v->size() == 4 && (*v)[2] > 0 && (*v)[3] > 0 && (*v)[1] == (*v)[2] * (*v)[3] * 4);
      break;
    case ArgKind::Pairs:
      ok = v->size() % 2 == 0;
      break;
    default:
      break;
  }
  if (!ok) bad(op, std::string("arg must be ") + arg_kind_name(want) + ", got " + shape_str(*v));
  return *v;
}

}  // namespace

RangeArg range_arg(Op op, const Arg& a) {
  const std::vector<int64_t>& v = typed_ints(op, a, ArgKind::Range);
  return {v[0], static_cast<AxisType>(v[1])};
}

ReduceAxisArg reduce_axis_arg(Op op, const Arg& a) {
  const std::vector<int64_t>& v = typed_ints(op, a, ArgKind::ReduceAxis);
  return {static_cast<Op>(v[0]), std::vector<int64_t>(v.begin() + 1, v.end())};
}

BufferArg buffer_arg(Op op, const Arg& a) {
  const std::vector<int64_t>& v = typed_ints(op, a, ArgKind::Buffer);
  if (v.size() == 4) return {v[0], v[1], v[2], v[3]};
  return {v[0], v[1]};
}

Pairs pairs_arg(Op op, const Arg& a) {
  const std::vector<int64_t>& v = typed_ints(op, a, ArgKind::Pairs);
  Pairs p;
  for (size_t i = 0; i + 1 < v.size(); i += 2) p.emplace_back(v[i], v[i + 1]);
  return p;
}

void check_arg(Op op, const Arg& a) {
  const ArgKind k = info(op).arg;
  bool ok = false;
  switch (k) {
    case ArgKind::None:
      if (!std::holds_alternative<std::monostate>(a)) bad(op, std::string("takes no arg, got ") + held(a));
      return;
    case ArgKind::Const:
      ok = std::holds_alternative<int64_t>(a) || std::holds_alternative<double>(a) ||
           std::holds_alternative<InvalidT>(a);
      break;
    case ArgKind::Int:  // a COPY without one copies whole (copy_scatter)
      ok = std::holds_alternative<int64_t>(a) || (op == Op::COPY && std::holds_alternative<std::monostate>(a));
      break;
    case ArgKind::Ints:
      ok = std::holds_alternative<std::vector<int64_t>>(a);
      break;
    case ArgKind::Op:
      ok = std::holds_alternative<Op>(a);
      break;
    case ArgKind::Str:
      ok = std::holds_alternative<std::string>(a);
      break;
    case ArgKind::Var:
      ok = std::holds_alternative<VarArg>(a);
      break;
    case ArgKind::Range:
    case ArgKind::ReduceAxis:
    case ArgKind::Buffer:
    case ArgKind::Pairs:
      typed_ints(op, a, k);
      return;
  }
  if (!ok) bad(op, std::string("arg must be ") + arg_kind_name(k) + ", got " + held(a));
}

}  // namespace rg
