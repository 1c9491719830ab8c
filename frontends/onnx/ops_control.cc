// Sequences, optionals and control flow (If, Loop, Scan), and the op table that gathers every op.
#include "compiler/ir/shape.h"
#include "frontends/onnx/checks.h"
#include "frontends/onnx/ops.h"

namespace rg::onnx {

namespace {

using T = rg::Tensor;
using Outs = std::vector<Value>;

const Value& seq_in(OpContext& c, size_t i) {
  if (!c.has(i) || c.in[i].kind != Value::Kind::Sequence) c.fail("input " + std::to_string(i) + " is not a sequence");
  return c.in[i];
}

int64_t seq_pos(OpContext& c, size_t input, int64_t size, bool insert) {
  int64_t p = int64_t(c.scalar_in(input));
  if (p < 0) p += size;
  if (p < 0 || p > size || (!insert && p == size))
    c.fail("position out of range for a sequence of " + std::to_string(size));
  return p;
}

Outs op_SequenceEmpty(OpContext& c) { return {Value::sequence({})}; }
Outs op_SequenceConstruct(OpContext& c) {
  std::vector<Value> items;
  for (size_t i = 0; i < c.n(); ++i) items.push_back(c.in[i]);
  return {Value::sequence(items)};
}
Outs op_SequenceLength(OpContext& c) {
  return {T::from_vector(std::vector<int64_t>{int64_t(seq_in(c, 0).items.size())}, Shape{}, c.device)};
}
Outs op_SequenceAt(OpContext& c) {
  const Value& s = seq_in(c, 0);
  return {s.items[seq_pos(c, 1, int64_t(s.items.size()), false)]};
}
Outs op_SequenceInsert(OpContext& c) {
  Value s = seq_in(c, 0);
  int64_t p = c.has(2) ? seq_pos(c, 2, int64_t(s.items.size()), true) : int64_t(s.items.size());
  s.items.insert(s.items.begin() + p, c.in.at(1));
  return {s};
}
Outs op_SequenceErase(OpContext& c) {
  Value s = seq_in(c, 0);
  int64_t p = c.has(1) ? seq_pos(c, 1, int64_t(s.items.size()), false) : int64_t(s.items.size()) - 1;
  if (p < 0) c.fail("erasing from an empty sequence");
  s.items.erase(s.items.begin() + p);
  return {s};
}
Outs op_ConcatFromSequence(OpContext& c) {
  const Value& s = seq_in(c, 0);
  int64_t axis = c.i("axis", 0);
  bool new_axis = c.i("new_axis", 0);
  std::vector<T> ts;
  for (auto& v : s.items) {
    if (v.kind != Value::Kind::Tensor) c.fail("sequence items must be tensors");
    ts.push_back(*v.tensor);
  }
  if (ts.empty()) c.fail("empty sequence");
  if (new_axis) return {T::stack(ts, norm_axis(c, axis, ts[0].ndim() + 1))};
  return {T::cat(ts, norm_axis(c, axis, ts[0].ndim()))};
}
Outs op_SplitToSequence(OpContext& c) {
  const T& x = c.t(0);
  int64_t axis = norm_axis(c, c.i("axis", 0), x.ndim());
  bool keep = c.i("keepdims", 1);
  const int64_t d = x.shape()[axis];
  std::vector<int64_t> sizes;
  if (!c.has(1)) {
    sizes.assign(d, 1);
  } else {
    std::vector<int64_t> sp = c.ints_in(1);
    if (c.t(1).ndim() == 0) {
      if (sp.at(0) < 1) c.fail("split " + std::to_string(sp[0]) + " must be positive");
      for (int64_t at = 0; at < d; at += sp[0]) sizes.push_back(std::min(sp[0], d - at));
    } else {
      sizes = sp;
    }
  }
  std::vector<Value> items;
  int64_t at = 0;
  for (int64_t s : sizes) {
    Pairs b;
    for (int64_t i = 0; i < x.ndim(); ++i)
      b.push_back(i == axis ? std::pair<int64_t, int64_t>{at, at + s} : std::pair<int64_t, int64_t>{0, x.shape()[i]});
    T piece = x.shrink(b);
    if (!c.has(1) && !keep) piece = piece.squeeze(axis);
    items.push_back(piece);
    at += s;
  }
  return {Value::sequence(items)};
}

Outs op_Optional(OpContext& c) { return {c.has(0) ? c.in[0] : Value()}; }
Outs op_OptionalHasElement(OpContext& c) { return {T::from_vector(std::vector<bool>{c.has(0)}, Shape{}, c.device)}; }
Outs op_OptionalGetElement(OpContext& c) {
  if (!c.has(0)) c.fail("the optional is empty");
  return {c.in[0]};
}

const ::onnx::GraphProto& graph_attr(OpContext& c, const std::string& name);

// SequenceMap: the body once per item of the first sequence; other sequences give their item, tensors themselves.
Outs op_SequenceMap(OpContext& c) {
  const auto& body = graph_attr(c, "body");
  const size_t n = seq_in(c, 0).items.size();
  for (size_t j = 1; j < c.n(); ++j)
    if (c.in[j].kind == Value::Kind::Sequence && c.in[j].items.size() != n) c.fail("sequences differ in length");
  std::vector<std::vector<Value>> outs(size_t(body.output_size()));
  for (size_t i = 0; i < n; ++i) {
    std::vector<Value> in;
    for (size_t j = 0; j < c.n(); ++j) in.push_back(c.in[j].kind == Value::Kind::Sequence ? c.in[j].items[i] : c.in[j]);
    std::vector<Value> out = c.run_graph(body, in);
    for (size_t k = 0; k < out.size(); ++k) outs[k].push_back(out[k]);
  }
  Outs r;
  for (auto& o : outs) r.push_back(Value::sequence(o));
  return r;
}

const ::onnx::GraphProto& graph_attr(OpContext& c, const std::string& name) {
  auto a = c.attr(name);
  if (!a || !a->has_g()) c.fail("needs the graph attribute '" + name + "'");
  return a->g();
}

Outs op_If(OpContext& c) {
  bool cond = c.scalar_in(0) != 0;
  const auto& then_g = graph_attr(c, "then_branch");
  const auto& else_g = graph_attr(c, "else_branch");
  return c.run_graph(cond ? then_g : else_g, {});
}

// Loop: the body maps (iteration, condition, carried...) to (condition, carried..., scan outputs...); scan
// outputs are stacked on a new first axis. The trip count and conditions are read on the host; the body's arity
// was checked when the model loaded (checks.h). The carried state is realized every kRealizeEvery iterations:
// a body that adds lazily would otherwise build a graph as deep as the trip count.
Outs op_Loop(OpContext& c) {
  const auto& body = graph_attr(c, "body");
  int64_t max_trip = INT64_MAX;
  if (c.has(0)) {
    std::vector<int64_t> trip = c.ints_in(0);
    if (trip.size() != 1) c.fail("input 0 must hold one value, has " + std::to_string(trip.size()));
    max_trip = trip[0];
  }
  bool cond = c.has(1) ? c.scalar_in(1) != 0 : true;
  std::vector<Value> carried(c.in.begin() + 2, c.in.end());
  const size_t n_carried = carried.size();
  const size_t n_scan = size_t(body.output_size()) - 1 - n_carried;
  std::vector<std::vector<Value>> scans(n_scan);
  const T still_true = T::from_vector(std::vector<bool>{true}, Shape{}, c.device);  // the body's condition input
  std::optional<T> numbers;  // the iteration numbers of kRealizeEvery iterations from `block`
  int64_t block = 0;
  for (int64_t i = 0; i < max_trip && cond; ++i) {
    if (i == kMaxIterations) c.fail("more than " + std::to_string(kMaxIterations) + " iterations");
    // The iteration number from a buffer, not a constant: kernels that read it stay the same kernel. One
    // buffer per block of iterations, as a host write per iteration is most of a small body's time.
    if (i % kRealizeEvery == 0) {
      block = i;
      std::vector<int64_t> v(static_cast<size_t>(kRealizeEvery));
      for (int64_t k = 0; k < kRealizeEvery; ++k) v[size_t(k)] = i + k;
      numbers = T::from_vector(v, Shape{kRealizeEvery}, c.device);
    }
    std::vector<Value> in{numbers->shrink({{i - block, i - block + 1}}).reshape({}), still_true};
    in.insert(in.end(), carried.begin(), carried.end());
    std::vector<Value> out = c.run_graph(body, in);
    if (out.size() != 1 + n_carried + n_scan) c.fail("the body returns " + std::to_string(out.size()) + " values");
    if (out[0].kind == Value::Kind::Tensor) {
      std::vector<double> next = host_doubles(*out[0].tensor);
      if (next.size() != 1) c.fail("the body's condition holds " + std::to_string(next.size()) + " values, not one");
      cond = next[0] != 0;
    }
    for (size_t j = 0; j < n_carried; ++j) carried[j] = out[1 + j];
    for (size_t j = 0; j < n_scan; ++j) scans[j].push_back(out[1 + n_carried + j]);
    if ((i + 1) % kRealizeEvery == 0) realize_values(carried);
  }
  Outs r = carried;
  for (size_t j = 0; j < n_scan; ++j) {
    if (scans[j].empty()) c.fail("a scan output of zero iterations has no known shape");
    std::vector<T> ts;
    for (auto& v : scans[j]) {
      if (v.kind != Value::Kind::Tensor) c.fail("scan outputs must be tensors");
      ts.push_back(*v.tensor);
    }
    r.push_back(stack_bounded(ts));
  }
  return r;
}

// The scan loop: states carried, scan inputs sliced along axis 0 (already in iteration order), the scan
// outputs stacked on a new axis 0 (reversed where out_dirs asks). Returns states then scan outputs.
Outs scan_loop(OpContext& c, const ::onnx::GraphProto& body, std::vector<Value> state, const std::vector<T>& xs,
               const std::vector<int64_t>& out_dirs) {
  const size_t n_state = state.size(), n_out = out_dirs.size();
  const int64_t len = xs.empty() ? 0 : xs[0].shape()[0];
  std::vector<std::vector<T>> outs(n_out);
  for (int64_t i = 0; i < len; ++i) {
    std::vector<Value> in = state;
    for (auto& x : xs) {
      Pairs b;
      for (int64_t k = 0; k < x.ndim(); ++k)
        b.push_back(k == 0 ? std::pair<int64_t, int64_t>{i, i + 1} : std::pair<int64_t, int64_t>{0, x.shape()[k]});
      in.push_back(x.shrink(b).squeeze(0));
    }
    std::vector<Value> out = c.run_graph(body, in);
    if (out.size() != n_state + n_out) c.fail("the body returns " + std::to_string(out.size()) + " values");
    for (size_t j = 0; j < n_state; ++j) state[j] = out[j];
    for (size_t j = 0; j < n_out; ++j) {
      if (out[n_state + j].kind != Value::Kind::Tensor) c.fail("scan outputs must be tensors");
      outs[j].push_back(*out[n_state + j].tensor);
    }
    if ((i + 1) % kRealizeEvery == 0) realize_values(state);  // bounded graphs, as Loop's
  }
  Outs r = state;
  for (size_t j = 0; j < n_out; ++j) {
    if (outs[j].empty()) c.fail("zero iterations");
    T st = stack_bounded(outs[j]);
    r.push_back(out_dirs[j] ? st.flip(0) : st);
  }
  return r;
}

// Scan: opset 9+ takes state variables and scan inputs along their axes; opset 8 has a batch axis 0 on every
// input and output and the scan axis 1 (sequence_lens, when given, must be the full length).
Outs op_Scan(OpContext& c) {
  const auto& body = graph_attr(c, "body");
  int64_t n_scan_in = c.i("num_scan_inputs", 0);
  const size_t first = c.opset < 9 ? 1 : 0;
  if (c.n() < first + size_t(n_scan_in)) c.fail("fewer inputs than num_scan_inputs");
  const size_t n_state = c.n() - first - size_t(n_scan_in);
  const size_t n_scan_out = size_t(body.output_size()) - n_state;
  if (c.opset < 9) {
    std::vector<int64_t> dirs = c.ints("directions", std::vector<int64_t>(n_scan_in, 0));
    const int64_t batch = c.t(first + n_state).shape()[0], len = c.t(first + n_state).shape()[1];
    if (c.has(0))
      for (int64_t l : c.ints_in(0))
        if (l != len) c.fail("sequence_lens shorter than the sequence are not supported");
    std::vector<std::vector<Value>> per_batch;
    for (int64_t b = 0; b < batch; ++b) {
      auto row = [&](const T& t) {
        Pairs p;
        for (int64_t k = 0; k < t.ndim(); ++k)
          p.push_back(k == 0 ? std::pair<int64_t, int64_t>{b, b + 1} : std::pair<int64_t, int64_t>{0, t.shape()[k]});
        return t.shrink(p).squeeze(0);
      };
      std::vector<Value> state;
      for (size_t j = 0; j < n_state; ++j) state.push_back(row(c.t(first + j)));
      std::vector<T> xs;
      for (int64_t j = 0; j < n_scan_in; ++j) {
        T x = row(c.t(first + n_state + size_t(j)));
        xs.push_back(dirs[size_t(j)] ? x.flip(0) : x);
      }
      per_batch.push_back(scan_loop(c, body, state, xs, std::vector<int64_t>(n_scan_out, 0)));
    }
    Outs r;
    for (size_t j = 0; j < n_state + n_scan_out; ++j) {
      std::vector<T> ts;
      for (auto& pb : per_batch) ts.push_back(*pb[j].tensor);
      r.push_back(T::stack(ts, 0));
    }
    return r;
  }
  std::vector<int64_t> in_axes = c.ints("scan_input_axes", std::vector<int64_t>(n_scan_in, 0));
  std::vector<int64_t> in_dirs = c.ints("scan_input_directions", std::vector<int64_t>(n_scan_in, 0));
  std::vector<int64_t> out_axes = c.ints("scan_output_axes", std::vector<int64_t>(n_scan_out, 0));
  std::vector<int64_t> out_dirs = c.ints("scan_output_directions", std::vector<int64_t>(n_scan_out, 0));
  std::vector<Value> state(c.in.begin(), c.in.begin() + n_state);
  std::vector<T> xs;
  for (int64_t j = 0; j < n_scan_in; ++j) {
    T x = c.t(n_state + j);
    x = x.transpose(0, norm_axis(c, in_axes[j], x.ndim()));
    if (in_dirs[j]) x = x.flip(0);
    if (!xs.empty() && x.shape()[0] != xs[0].shape()[0]) c.fail("scan inputs differ in length");
    xs.push_back(x);
  }
  Outs r = scan_loop(c, body, state, xs, out_dirs);
  for (size_t j = 0; j < n_scan_out; ++j) {
    T s = *r[n_state + j].tensor;
    int64_t a = norm_axis(c, out_axes[j], s.ndim());
    if (a != 0) {
      std::vector<int64_t> perm;
      for (int64_t k = 1; k <= a; ++k) perm.push_back(k);
      perm.push_back(0);
      for (int64_t k = a + 1; k < s.ndim(); ++k) perm.push_back(k);
      r[n_state + j] = s.permute(perm);
    }
  }
  return r;
}

}  // namespace

void add_sequence_ops(OpTable& t) {
  static const std::pair<const char*, OpFn> kOps[] = {{"SequenceEmpty", op_SequenceEmpty},
                                                      {"SequenceConstruct", op_SequenceConstruct},
                                                      {"SequenceLength", op_SequenceLength},
                                                      {"SequenceAt", op_SequenceAt},
                                                      {"SequenceInsert", op_SequenceInsert},
                                                      {"SequenceErase", op_SequenceErase},
                                                      {"ConcatFromSequence", op_ConcatFromSequence},
                                                      {"SplitToSequence", op_SplitToSequence},
                                                      {"Optional", op_Optional},
                                                      {"OptionalHasElement", op_OptionalHasElement},
                                                      {"OptionalGetElement", op_OptionalGetElement},
                                                      {"If", op_If},
                                                      {"Loop", op_Loop},
                                                      {"Scan", op_Scan},
                                                      {"SequenceMap", op_SequenceMap}};
  for (const auto& [name, fn] : kOps) t[std::string(":") + name] = fn;
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(t);
    add_shape_ops(t);
    add_nn_ops(t);
    add_sequence_ops(t);
    add_resize_ops(t);
    add_rnn_ops(t);
    add_extra_ops(t);
    add_sample_ops(t);
    return t;
  }();
  return table;
}

}  // namespace rg::onnx
