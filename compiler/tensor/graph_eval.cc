#include "compiler/tensor/graph_eval.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <unordered_map>

#include "compiler/ir/eval.h"
#include "compiler/ir/rewrite.h"
#include "compiler/ir/shape.h"
#include "compiler/tensor/backend.h"
#include "rules/gradient.h"

namespace rg {

namespace {

using Elem = std::optional<Value>;  // nullopt: Invalid

struct Arr {
  Shape shape;
  std::vector<Elem> v;
};

int64_t numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

int64_t offset(const Shape& s, const std::vector<int64_t>& idx) {
  int64_t o = 0;
  for (size_t i = 0; i < s.size(); ++i) o = o * s[i] + idx[i];
  return o;
}

// Fills an array of shape s from f(multi-index), in row-major order.
Arr generate(const Shape& s, const std::function<Elem(const std::vector<int64_t>&)>& f) {
  Arr out{s, {}};
  std::vector<int64_t> idx(s.size(), 0);
  for (int64_t k = 0, n = numel(s); k < n; ++k) {
    out.v.push_back(f(idx));
    for (int64_t i = int64_t(s.size()) - 1; i >= 0; --i) {
      if (++idx[i] < s[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

Value load(DType dt, const unsigned char* p) {
  auto get = [&](auto x) {
    std::memcpy(&x, p, sizeof(x));
    return x;
  };
  switch (dt.scalar) {
    case Scalar::Float32:
      return Value{0, get(float())};
    case Scalar::Float64:
      return Value{0, get(double())};
    case Scalar::Bool:
      return Value{get(uint8_t()) != 0, 0};
    case Scalar::Int8:
      return Value{get(int8_t()), 0};
    case Scalar::Int16:
      return Value{get(int16_t()), 0};
    case Scalar::Int32:
      return Value{get(int32_t()), 0};
    case Scalar::Int64:
      return Value{get(int64_t()), 0};
    case Scalar::UInt8:
      return Value{get(uint8_t()), 0};
    case Scalar::UInt16:
      return Value{get(uint16_t()), 0};
    case Scalar::UInt32:
      return Value{get(uint32_t()), 0};
    case Scalar::UInt64:
      return Value{int64_t(get(uint64_t())), 0};
    default:
      throw Error("eval_graph: cannot load " + dt.name());
  }
}

Arr eval_node(const UPtr& u, const std::vector<const Arr*>& in) {
  const Shape& s = u->shape;
  switch (u->op) {
    case Op::BUFFER: {
      const int64_t n = u->buffer_arg().size;
      std::vector<unsigned char> bytes(n * u->dtype.itemsize());
      backend::read(u, bytes.data(), bytes.size());
      Arr a{s, {}};
      for (int64_t i = 0; i < n; ++i) a.v.push_back(load(u->dtype, bytes.data() + i * u->dtype.itemsize()));
      return a;
    }
    case Op::CONST:
      return Arr{{}, {u->is_invalid() ? Elem() : Elem(const_value(u))}};
    case Op::RESHAPE:
    case Op::CONTIGUOUS:
    case Op::COPY:  // the same values on another device
      return Arr{s, in[0]->v};
    case Op::PERMUTE: {
      const auto& order = u->arg_ints();
      return generate(s, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src(i.size());
        for (size_t k = 0; k < order.size(); ++k) src[order[k]] = i[k];
        return in[0]->v[offset(in[0]->shape, src)];
      });
    }
    case Op::EXPAND:
      return generate(s, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src = i;
        for (size_t k = 0; k < i.size(); ++k)
          if (in[0]->shape[k] == 1) src[k] = 0;
        return in[0]->v[offset(in[0]->shape, src)];
      });
    case Op::PAD: {
      const Pairs a = u->pairs_arg();
      const Elem fill = u->dtype.is_bool() ? Elem(Value{0, 0}) : Elem();
      return generate(s, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src = i;
        for (size_t k = 0; k < i.size(); ++k) {
          src[k] -= a[k].first;
          if (src[k] < 0 || src[k] >= in[0]->shape[k]) return fill;
        }
        return in[0]->v[offset(in[0]->shape, src)];
      });
    }
    case Op::SHRINK: {
      const Pairs a = u->pairs_arg();
      return generate(s, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src = i;
        for (size_t k = 0; k < i.size(); ++k) src[k] += a[k].first;
        return in[0]->v[offset(in[0]->shape, src)];
      });
    }
    case Op::FLIP: {
      const auto& a = u->arg_ints();
      return generate(s, [&](const std::vector<int64_t>& i) {
        std::vector<int64_t> src = i;
        for (size_t k = 0; k < i.size(); ++k)
          if (a[k]) src[k] = s[k] - 1 - i[k];
        return in[0]->v[offset(in[0]->shape, src)];
      });
    }
    case Op::REDUCE_AXIS: {
      const ReduceAxisArg a = u->reduce_axis_arg();
      const Op op = a.op;
      const Arr& x = *in[0];
      std::vector<bool> red(x.shape.size(), false);
      for (int64_t k : a.axes) red[k] = true;
      return generate(s, [&](const std::vector<int64_t>& i) {
        // Identities: ADD 0, MUL 1, MAX the dtype's minimum; Invalid elements are skipped.
        Value acc = const_value(cnst(u->dtype, op == Op::ADD ? 0 : op == Op::MUL ? 1 : u->dtype.min_value()));
        Shape window = x.shape;
        for (size_t k = 0; k < window.size(); ++k)
          if (!red[k]) window[k] = 1;
        generate(window, [&](const std::vector<int64_t>& w) {
          std::vector<int64_t> src = i;
          for (size_t k = 0; k < src.size(); ++k)
            if (red[k]) src[k] = w[k];
          const Elem& e = x.v[offset(x.shape, src)];
          if (e) acc = *eval_alu(op, u->dtype, {acc, *e});
          return Elem();
        });
        return Elem(acc);
      });
    }
    default:
      break;
  }
  if (u->op == Op::CAST || is(u->op, kALU)) {
    return generate(s, [&](const std::vector<int64_t>& i) -> Elem {
      std::vector<Value> args;
      for (size_t k = 0; k < in.size(); ++k) {
        const Arr& x = *in[k];
        const Elem& e = x.shape.empty() ? x.v[0] : x.v[offset(x.shape, i)];
        if (!e) {
          if (u->op == Op::WHERE && k > 0 && args[0].i != (k == 1)) {  // the branch not taken
            args.push_back(Value{});
            continue;
          }
          return Elem();  // Invalid poisons
        }
        args.push_back(*e);
      }
      if (u->op == Op::CAST) {
        UPtr c = fold(UOp::make(Op::CAST, u->dtype, {value_const(u->src[0]->dtype, args[0])}));
        return const_value(c);
      }
      DType operand = u->op == Op::WHERE ? u->src[1]->dtype : u->src[0]->dtype;
      std::optional<Value> r = eval_alu(u->op, operand, args);
      if (!r) throw Error("eval_graph: " + lower_name(u->op) + " undefined at " + operand.name());
      return r;
    });
  }
  throw Error("eval_graph: cannot evaluate " + lower_name(u->op));
}

}  // namespace

std::vector<double> eval_graph(const UPtr& given) {
  const UPtr root = graph_rewrite(given, rules::forward_values);
  std::unordered_map<const UOp*, Arr> memo;
  for (const UPtr& u : toposort(root)) {
    if (u->op == Op::DEVICE) continue;
    std::vector<const Arr*> in;
    if (u->op != Op::BUFFER)
      for (const UPtr& s : u->src)
        if (s->op != Op::DEVICE) in.push_back(&memo.at(s.get()));  // a COPY's target names no values
    memo.emplace(u.get(), eval_node(u, in));
  }
  std::vector<double> out;
  for (const Elem& e : memo.at(root.get()).v)
    out.push_back(!e                                                      ? NAN
                  : root->dtype.is_float()                                ? e->f
                  : root->dtype.is_unsigned() && root->dtype.bits() == 64 ? double(uint64_t(e->i))
                                                                          : double(e->i));
  return out;
}

}  // namespace rg
