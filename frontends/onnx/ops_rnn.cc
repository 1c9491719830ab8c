// RNN, GRU and LSTM, unrolled over the sequence with Tensor ops (the sequence length is static).
#include "compiler/ir/shape.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

T slice0(const T& x, int64_t i, int64_t axis = 0) {
  Pairs b;
  for (int64_t a = 0; a < x.ndim(); ++a)
    b.push_back(a == axis ? std::pair<int64_t, int64_t>{i, i + 1} : std::pair<int64_t, int64_t>{0, x.shape()[a]});
  return x.shrink(b).squeeze(axis);
}
// Rows [k*h, (k+1)*h) of a matrix or vector: gate k of a stacked weight.
T gate(const T& w, int64_t k, int64_t h) {
  Pairs b;
  for (int64_t a = 0; a < w.ndim(); ++a)
    b.push_back(a == 0 ? std::pair<int64_t, int64_t>{k * h, (k + 1) * h}
                       : std::pair<int64_t, int64_t>{0, w.shape()[a]});
  return w.shrink(b);
}

using Act = T (*)(const T&);
T act_sigmoid(const T& x) { return x.sigmoid(); }
T act_tanh(const T& x) { return x.tanh(); }
T act_relu(const T& x) { return x.relu(); }

struct Rnn {
  int64_t seq, batch, input, hidden, dirs;
  bool layout1;
  std::vector<Act> acts;  // per direction, the op's number of activations each
  double clip = 0;
};

Rnn common(OpContext& c, const std::vector<std::string>& default_acts) {
  Rnn r;
  const T& x = c.t(0);
  r.layout1 = c.i("layout", 0);
  if (x.ndim() != 3) c.fail("X must have 3 axes");
  r.seq = x.shape()[r.layout1 ? 1 : 0], r.batch = x.shape()[r.layout1 ? 0 : 1], r.input = x.shape()[2];
  std::string dir = c.s("direction", "forward");
  r.dirs = dir == "bidirectional" ? 2 : 1;
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    c.fail("direction '" + dir + "' is not supported");
  r.hidden = c.i("hidden_size", c.t(2).shape()[2]);
  r.clip = c.f("clip", 0);
  std::vector<std::string> names = c.strings("activations");
  if (names.empty())
    for (int64_t d = 0; d < r.dirs; ++d) names.insert(names.end(), default_acts.begin(), default_acts.end());
  for (auto& n : names) {
    if (n == "Sigmoid")
      r.acts.push_back(act_sigmoid);
    else if (n == "Tanh")
      r.acts.push_back(act_tanh);
    else if (n == "Relu")
      r.acts.push_back(act_relu);
    else
      c.fail("activation '" + n + "' is not supported");
  }
  if (r.acts.size() != default_acts.size() * size_t(r.dirs)) c.fail("wrong number of activations");
  if (c.has(4)) {
    for (int64_t l : c.ints_in(4))
      if (l != r.seq) c.fail("sequence_lens shorter than the sequence are not supported");
  }
  return r;
}

T clipped(const Rnn& r, const T& x) { return r.clip > 0 ? x.clip(-r.clip, r.clip) : x; }

// Runs one direction of a cell over the sequence; `step` maps (x_t, state) to the new state, whose first
// entry is h. Returns (Y as (seq, batch, hidden), final state).
template <class Step>
std::pair<T, std::vector<T>> unroll(const T& xs, std::vector<T> state, bool reverse, Step step) {
  const int64_t seq = xs.shape()[0];
  std::vector<T> ys(size_t(seq), state[0]);
  for (int64_t k = 0; k < seq; ++k) {
    int64_t t = reverse ? seq - 1 - k : k;
    state = step(slice0(xs, t), state);
    ys[size_t(t)] = state[0];
  }
  return {T::stack(ys, 0), state};
}

// The outputs from per-direction Y (seq, batch, hidden) and final states (batch, hidden), in the layout.
Outs finish(const Rnn& r, const std::vector<T>& ys, const std::vector<std::vector<T>>& finals) {
  T y = T::stack(ys, 1);  // (seq, dirs, batch, hidden)
  if (r.layout1) y = y.permute({2, 0, 1, 3});
  Outs out{y};
  for (size_t k = 0; k < finals[0].size(); ++k) {
    std::vector<T> hs;
    for (auto& f : finals) hs.push_back(f[k]);
    T h = T::stack(hs, 0);  // (dirs, batch, hidden)
    if (r.layout1) h = h.permute({1, 0, 2});
    out.push_back(h);
  }
  return out;
}

T initial(OpContext& c, size_t input, const Rnn& r, int64_t d, DType dt) {
  if (!c.has(input)) return T::zeros({r.batch, r.hidden}, dt);
  T h = c.t(input);
  if (r.layout1) h = h.permute({1, 0, 2});
  return slice0(h, d);
}

T xs_of(OpContext& c, const Rnn& r) { return r.layout1 ? c.t(0).permute({1, 0, 2}) : c.t(0); }

bool reverse_of(OpContext& c, int64_t d) {
  std::string dir = c.s("direction", "forward");
  return dir == "reverse" || (dir == "bidirectional" && d == 1);
}

Outs op_RNN(OpContext& c) {
  Rnn r = common(c, {"Tanh"});
  const T &W = c.t(1), &R = c.t(2);
  const DType dt = W.dtype();
  const int64_t h = r.hidden;
  std::vector<T> ys;
  std::vector<std::vector<T>> finals;
  for (int64_t d = 0; d < r.dirs; ++d) {
    T w = slice0(W, d), rr = slice0(R, d);
    T b = c.has(3) ? gate(slice0(c.t(3), d), 0, h) + gate(slice0(c.t(3), d), 1, h) : T::zeros({h}, dt);
    Act f = r.acts[size_t(d)];
    auto [y, fin] =
        unroll(xs_of(c, r), {initial(c, 5, r, d, dt)}, reverse_of(c, d), [&](const T& x, const std::vector<T>& s) {
          return std::vector<T>{f(clipped(r, x.matmul(w.T()) + s[0].matmul(rr.T()) + b))};
        });
    ys.push_back(y), finals.push_back(fin);
  }
  return finish(r, ys, finals);
}

Outs op_GRU(OpContext& c) {
  Rnn r = common(c, {"Sigmoid", "Tanh"});
  const T &W = c.t(1), &R = c.t(2);
  const DType dt = W.dtype();
  const int64_t h = r.hidden;
  bool lbr = c.i("linear_before_reset", 0);
  std::vector<T> ys;
  std::vector<std::vector<T>> finals;
  for (int64_t d = 0; d < r.dirs; ++d) {
    T w = slice0(W, d), rr = slice0(R, d);
    T B = c.has(3) ? slice0(c.t(3), d) : T::zeros({6 * h}, dt);
    Act f = r.acts[size_t(2 * d)], g = r.acts[size_t(2 * d + 1)];
    auto [y, fin] =
        unroll(xs_of(c, r), {initial(c, 5, r, d, dt)}, reverse_of(c, d), [&](const T& x, const std::vector<T>& s) {
          const T& hp = s[0];
          auto xw = [&](int k) { return x.matmul(gate(w, k, h).T()) + gate(B, k, h); };
          auto hr = [&](const T& v, int k) { return v.matmul(gate(rr, k, h).T()); };
          T z = f(clipped(r, xw(0) + hr(hp, 0) + gate(B, 3, h)));
          T rt = f(clipped(r, xw(1) + hr(hp, 1) + gate(B, 4, h)));
          T hh = lbr ? g(clipped(r, xw(2) + rt * (hr(hp, 2) + gate(B, 5, h))))
                     : g(clipped(r, xw(2) + hr(rt * hp, 2) + gate(B, 5, h)));
          return std::vector<T>{(1 - z) * hh + z * hp};
        });
    ys.push_back(y), finals.push_back(fin);
  }
  return finish(r, ys, finals);
}

Outs op_LSTM(OpContext& c) {
  Rnn r = common(c, {"Sigmoid", "Tanh", "Tanh"});
  const T &W = c.t(1), &R = c.t(2);
  const DType dt = W.dtype();
  const int64_t h = r.hidden;
  if (c.i("input_forget", 0)) c.fail("input_forget is not supported");
  std::vector<T> ys;
  std::vector<std::vector<T>> finals;
  for (int64_t d = 0; d < r.dirs; ++d) {
    T w = slice0(W, d), rr = slice0(R, d);
    T B = c.has(3) ? slice0(c.t(3), d) : T::zeros({8 * h}, dt);
    T P = c.has(7) ? slice0(c.t(7), d) : T::zeros({3 * h}, dt);
    Act f = r.acts[size_t(3 * d)], g = r.acts[size_t(3 * d + 1)], hf = r.acts[size_t(3 * d + 2)];
    std::vector<T> init{initial(c, 5, r, d, dt), initial(c, 6, r, d, dt)};
    auto [y, fin] = unroll(xs_of(c, r), init, reverse_of(c, d), [&](const T& x, const std::vector<T>& s) {
      const T &hp = s[0], &cp = s[1];
      auto pre = [&](int k) {
        return x.matmul(gate(w, k, h).T()) + hp.matmul(gate(rr, k, h).T()) + gate(B, k, h) + gate(B, 4 + k, h);
      };
      T i = f(clipped(r, pre(0) + gate(P, 0, h) * cp));
      T fg = f(clipped(r, pre(2) + gate(P, 2, h) * cp));
      T ct = g(clipped(r, pre(3)));
      T C = fg * cp + i * ct;
      T o = f(clipped(r, pre(1) + gate(P, 1, h) * C));
      return std::vector<T>{o * hf(C), C};
    });
    ys.push_back(y), finals.push_back(fin);
  }
  return finish(r, ys, finals);
}

}  // namespace

void add_rnn_ops(OpTable& t) {
  t[":RNN"] = op_RNN;
  t[":GRU"] = op_GRU;
  t[":LSTM"] = op_LSTM;
}

}  // namespace rg::onnx
