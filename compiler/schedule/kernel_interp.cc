#include "compiler/schedule/kernel_interp.h"

#include <cmath>
#include <functional>
#include <string>

#include "compiler/ir/placement.h"

namespace rg {

namespace {

struct Val {
  bool invalid = false;
  double v = 0;
};

struct Interp {
  std::vector<std::vector<double>*> slots;  // PARAM slot → memory
  std::vector<DType> slot_dtype;
  std::unordered_map<const UOp*, int64_t> env;  // RANGE → current value
  std::unordered_map<const UOp*, Val> memo;     // valid for the current env only

  static double round_to(DType dt, double v) {
    if (dt.is_bool()) return v != 0;
    if (dt.scalar == Scalar::Float32) return static_cast<float>(v);
    if (dt.is_float()) return v;
    return std::trunc(v);
  }

  // Calls f once for every assignment of the ranges.
  void loop(const std::vector<UPtr>& ranges, size_t i, const std::function<void()>& f) {
    if (i == ranges.size()) {
      memo.clear();
      f();
      return;
    }
    const int64_t n = ranges[i]->src[0]->as_int();
    for (int64_t k = 0; k < n; ++k) {
      env[ranges[i].get()] = k;
      loop(ranges, i + 1, f);
    }
    env.erase(ranges[i].get());
    memo.clear();
  }

  double load(const UPtr& index) {
    const UOp* p = index->src[0].get();
    if (p->op != Op::PARAM) throw Error("interp: index of " + lower_name(p->op));
    Val i = eval(index->src[1]);
    if (i.invalid) throw Error("interp: address is Invalid");
    int64_t slot = p->arg_int();
    auto& buf = *slots.at(slot);
    if (i.v < 0 || i.v >= double(buf.size()))
      throw Error("interp: slot " + std::to_string(slot) + " read at " + std::to_string(int64_t(i.v)) + " of " +
                  std::to_string(buf.size()));
    return buf[size_t(i.v)];
  }

  Val eval(const UPtr& u) {
    if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
    Val r = compute(u);
    memo[u.get()] = r;
    return r;
  }

  Val compute(const UPtr& u) {
    switch (u->op) {
      case Op::CONST:
        return u->is_invalid() ? Val{true, 0} : Val{false, u->as_float()};
      case Op::RANGE:
        return {false, double(env.at(u.get()))};
      case Op::INDEX: {
        Val i = eval(u->src[1]);
        if (i.invalid) return {true, 0};  // a gated read: no value
        return {false, load(u)};
      }
      case Op::WHERE: {
        Val c = eval(u->src[0]);
        if (c.invalid) return c;
        return eval(u->src[c.v != 0 ? 1 : 2]);
      }
      case Op::REDUCE: {
        Op op = u->arg_op();
        double acc = op == Op::ADD ? 0 : op == Op::MUL ? 1 : -INFINITY;
        if (!u->dtype.is_float() && op == Op::MAX) acc = double(u->dtype.min_int());
        std::vector<UPtr> ranges(u->src.begin() + 1, u->src.end());
        loop(ranges, 0, [&] {
          Val x = eval(u->src[0]);
          if (x.invalid) return;  // no value: the identity
          acc = op == Op::ADD ? acc + x.v : op == Op::MUL ? acc * x.v : std::max(acc, x.v);
          acc = round_to(u->dtype, acc);
        });
        return {false, acc};
      }
      default:
        break;
    }
    if (!is(u->op, kElementwise)) throw Error("interp: unexpected " + lower_name(u->op));
    std::vector<double> a;
    for (const UPtr& s : u->src) {
      Val x = eval(s);
      if (x.invalid) return {true, 0};  // Invalid poisons ALU ops
      a.push_back(x.v);
    }
    const DType in = u->src[0]->dtype;
    const bool ints = !in.is_float();
    auto i = [&](int k) { return int64_t(a[k]); };
    double r = 0;
    switch (u->op) {
      case Op::CAST:
        r = a[0];
        break;
      case Op::NEG:
        r = -a[0];
        break;
      case Op::EXP2:
        r = std::exp2(a[0]);
        break;
      case Op::LOG2:
        r = std::log2(a[0]);
        break;
      case Op::SIN:
        r = std::sin(a[0]);
        break;
      case Op::SQRT:
        r = std::sqrt(a[0]);
        break;
      case Op::RECIPROCAL:
        r = 1 / a[0];
        break;
      case Op::TRUNC:
        r = std::trunc(a[0]);
        break;
      case Op::ADD:
        r = a[0] + a[1];
        break;
      case Op::SUB:
        r = a[0] - a[1];
        break;
      case Op::MUL:
        r = a[0] * a[1];
        break;
      case Op::DIV:
        if (ints && i(1) == 0) throw Error("interp: integer division by zero");
        r = ints ? double(i(0) / i(1)) : a[0] / a[1];
        break;
      case Op::MOD:
        if (ints && i(1) == 0) throw Error("interp: integer modulo by zero");
        r = ints ? double(i(0) % i(1)) : std::fmod(a[0], a[1]);
        break;
      case Op::MAX:
        r = std::max(a[0], a[1]);
        break;
      case Op::POW:
        r = std::pow(a[0], a[1]);
        break;
      case Op::CMPLT:
        r = a[0] < a[1];
        break;
      case Op::CMPNE:
        r = a[0] != a[1];
        break;
      case Op::CMPEQ:
        r = a[0] == a[1];
        break;
      case Op::AND:
        r = double(i(0) & i(1));
        break;
      case Op::OR:
        r = double(i(0) | i(1));
        break;
      case Op::XOR:
        r = double(i(0) ^ i(1));
        break;
      case Op::MULACC:
        r = a[0] * a[1] + a[2];
        break;
      default:
        throw Error("interp: unexpected " + lower_name(u->op));
    }
    return {false, round_to(u->dtype, r)};
  }

  void exec(const UPtr& u) {
    switch (u->op) {
      case Op::SINK:
        for (const UPtr& s : u->src) exec(s);
        return;
      case Op::END:
        loop(std::vector<UPtr>(u->src.begin() + 1, u->src.end()), 0, [&] { exec(u->src[0]); });
        return;
      case Op::STORE: {
        const UPtr& addr = u->src[0];
        Val i = eval(addr->src[1]), v = eval(u->src[1]);
        if (i.invalid || v.invalid) return;  // a gated store, or a store of no value
        int64_t slot = addr->src[0]->arg_int();
        auto& buf = *slots.at(slot);
        if (i.v < 0 || i.v >= double(buf.size())) throw Error("interp: store out of bounds");
        buf[size_t(i.v)] = round_to(slot_dtype.at(slot), v.v);
        return;
      }
      default:
        throw Error("interp: unexpected statement " + lower_name(u->op));
    }
  }
};

}  // namespace

void interpret(const UPtr& linear, HostMemory& mem) {
  for (const UPtr& call : linear->src) {
    if (call->src[0]->op == Op::COPY) {  // CALL(COPY, dst, src): a transfer between devices
      mem[call->src[1]] = mem[call->src[2]];
      mem[call->src[1]].resize(size_t(call->src[1]->buffer_arg().size), 0.0);
      continue;
    }
    Interp in;
    for (size_t k = 1; k < call->src.size(); ++k) {
      const UPtr& b = call->src[k];
      auto& data = mem[b];
      data.resize(size_t(b->buffer_arg().size), 0.0);
      in.slots.push_back(&data);
      in.slot_dtype.push_back(b->dtype);
    }
    in.exec(call->src[0]);
  }
}

std::vector<double> read_output(const UPtr& output, const HostMemory& mem) {
  const UPtr& b = base_buffer(output);
  if (!b) throw Error("read_output: not a buffer view: " + lower_name(output->op));
  return mem.at(b);
}

}  // namespace rg
