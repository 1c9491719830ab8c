// 200 random chains of movement, elementwise and reduce ops (fixed seed) over
// small integer-valued floats, including negatives and broadcasting, checked
// exactly against a reference that works on explicit multi-indices. Built
// twice: through the whole compiler (to_vector), and with RG_GRAPH_EVAL against
// the direct graph evaluator, which checks the Tensor API's graphs alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/shape.h"
#include "compiler/tensor/tensor.h"
#include "compiler/tensor/tensor_graph.h"
#ifdef RG_GRAPH_EVAL
#include "compiler/tensor/graph_eval.h"
#endif

namespace rg {
namespace {

// ---------------------------------------------------------------- the reference

using Index = std::vector<int64_t>;

struct Nd {
  Shape shape;
  std::vector<double> v;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  int64_t offset(const Index& idx) const {
    int64_t o = 0;
    for (size_t i = 0; i < shape.size(); ++i) o = o * shape[i] + idx[i];
    return o;
  }
  double at(const Index& idx) const { return v[offset(idx)]; }
};

// Builds a tensor of shape s whose element at each multi-index is f(index), visiting indices in row-major order.
Nd generate(const Shape& s, const std::function<double(const Index&)>& f) {
  Nd out{s, {}};
  Index idx(s.size(), 0);
  for (int64_t n = out.numel(), k = 0; k < n; ++k) {
    out.v.push_back(f(idx));
    for (int64_t i = int64_t(s.size()) - 1; i >= 0; --i) {
      if (++idx[i] < s[i]) break;
      idx[i] = 0;
    }
  }
  return out;
}

Nd ref_permute(const Nd& x, const std::vector<int64_t>& order) {
  Shape s;
  for (int64_t o : order) s.push_back(x.shape[o]);
  return generate(s, [&](const Index& i) {
    Index src(i.size());
    for (size_t k = 0; k < order.size(); ++k) src[order[k]] = i[k];
    return x.at(src);
  });
}

Nd ref_expand(const Nd& x, const Shape& s) {
  return generate(s, [&](const Index& i) {
    Index src = i;
    for (size_t k = 0; k < s.size(); ++k)
      if (x.shape[k] == 1) src[k] = 0;
    return x.at(src);
  });
}

Nd ref_pad(const Nd& x, const Pairs& p, double value) {
  Shape s = x.shape;
  for (size_t k = 0; k < s.size(); ++k) s[k] += p[k].first + p[k].second;
  return generate(s, [&](const Index& i) {
    Index src = i;
    for (size_t k = 0; k < s.size(); ++k) {
      src[k] -= p[k].first;
      if (src[k] < 0 || src[k] >= x.shape[k]) return value;
    }
    return x.at(src);
  });
}

Nd ref_shrink(const Nd& x, const Pairs& b) {
  Shape s;
  for (const auto& [lo, hi] : b) s.push_back(hi - lo);
  return generate(s, [&](const Index& i) {
    Index src = i;
    for (size_t k = 0; k < s.size(); ++k) src[k] += b[k].first;
    return x.at(src);
  });
}

Nd ref_flip(const Nd& x, int64_t axis) {
  return generate(x.shape, [&](const Index& i) {
    Index src = i;
    src[axis] = x.shape[axis] - 1 - i[axis];
    return x.at(src);
  });
}

Nd ref_map(const Nd& x, const std::function<double(double)>& f) {
  Nd out = x;
  for (double& v : out.v) v = f(v);
  return out;
}

// numpy broadcasting: align shapes on the right; an axis of length 1 reads element 0.
Nd ref_binary(const Nd& a, const Nd& b, const std::function<double(double, double)>& f) {
  const size_t n = std::max(a.shape.size(), b.shape.size());
  Shape s(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t da = k < n - a.shape.size() ? 1 : a.shape[k - (n - a.shape.size())];
    int64_t db = k < n - b.shape.size() ? 1 : b.shape[k - (n - b.shape.size())];
    s[k] = std::max(da, db);
  }
  auto pick = [&](const Nd& x, const Index& i) {
    Index src;
    for (size_t k = n - x.shape.size(); k < n; ++k) src.push_back(x.shape[k - (n - x.shape.size())] == 1 ? 0 : i[k]);
    return x.at(src);
  };
  return generate(s, [&](const Index& i) { return f(pick(a, i), pick(b, i)); });
}

enum class RedOp { Sum, Max, Min };

Nd ref_reduce(const Nd& x, int64_t axis, RedOp op, bool keepdim) {
  Shape kept = x.shape;
  kept[axis] = 1;
  Nd r = generate(kept, [&](const Index& i) {
    Index src = i;
    double acc = op == RedOp::Sum ? 0 : x.at([&] {
      Index j = i;
      j[axis] = 0;
      return j;
    }());
    for (int64_t k = 0; k < x.shape[axis]; ++k) {
      src[axis] = k;
      double v = x.at(src);
      acc = op == RedOp::Sum ? acc + v : op == RedOp::Max ? std::max(acc, v) : std::min(acc, v);
    }
    return acc;
  });
  if (!keepdim) r.shape.erase(r.shape.begin() + axis);
  return r;
}

// ---------------------------------------------------------------- the random chains

struct Case {
  std::mt19937& rng;
  std::ostringstream log;  // the chain, printed when a case fails

  int64_t rand(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }

  std::pair<Nd, Tensor> fresh(const Shape& s) {
    Nd r = generate(s, [&](const Index&) { return double(rand(-5, 5)); });
    std::vector<float> f(r.v.begin(), r.v.end());
    return {r, Tensor::from_vector(f, s)};
  }

  Shape random_shape() {
    Shape s(rand(1, 3));
    for (int64_t& d : s) d = rand(1, 4);
    return s;
  }

  // A shape that broadcasts with s: some axes set to 1, maybe fewer or more leading axes.
  Shape broadcastable(const Shape& s) {
    Shape o = s;
    for (int64_t& d : o)
      if (rand(0, 2) == 0) d = 1;
    if (!o.empty() && rand(0, 3) == 0)
      o.erase(o.begin());
    else if (o.size() < 3 && rand(0, 4) == 0)
      o.insert(o.begin(), rand(1, 3));
    return o;
  }

  void step(Nd& r, Tensor& t) {
    const int64_t nd = int64_t(r.shape.size());
    switch (rand(0, 11)) {
      case 0: {  // reshape: split or merge via a divisor of numel
        int64_t n = r.numel(), d = rand(1, std::max<int64_t>(1, n));
        while (n % d) --d;
        Shape s = rand(0, 1) ? Shape{d, n / d} : Shape{n / d, 1, d};
        log << ".reshape(" << s.size() << "d)";
        r.shape = s;
        t = t.reshape(s);
        return;
      }
      case 1: {
        if (nd < 2) return;
        std::vector<int64_t> order(nd);
        for (int64_t i = 0; i < nd; ++i) order[i] = i;
        std::shuffle(order.begin(), order.end(), rng);
        log << ".permute";
        r = ref_permute(r, order);
        t = t.permute(order);
        return;
      }
      case 2: {  // a new axis of length 1, expanded
        if (r.numel() > 200 || nd >= 4) return;
        int64_t at = rand(0, nd), n = rand(2, 3);
        Shape s = r.shape;
        s.insert(s.begin() + at, 1);
        Shape e = s;
        e[at] = n;
        log << ".unsqueeze(" << at << ").expand";
        r.shape = s;
        r = ref_expand(r, e);
        t = t.unsqueeze(at).expand(e);
        return;
      }
      case 3: {
        if (r.numel() > 200) return;
        Pairs p;
        for (int64_t i = 0; i < nd; ++i) p.push_back({rand(0, 2), rand(0, 2)});
        double v = double(rand(-3, 3));
        log << ".pad(" << v << ")";
        r = ref_pad(r, p, v);
        t = t.pad(p, v);
        return;
      }
      case 4: {
        Pairs b;
        for (int64_t i = 0; i < nd; ++i) {
          int64_t lo = rand(0, r.shape[i] - 1);
          b.push_back({lo, rand(lo + 1, r.shape[i])});
        }
        log << ".shrink";
        r = ref_shrink(r, b);
        t = t.shrink(b);
        return;
      }
      case 5: {
        if (nd == 0) return;
        int64_t a = rand(0, nd - 1);
        log << ".flip(" << a << ")";
        r = ref_flip(r, a);
        t = t.flip(a);
        return;
      }
      case 6: {
        int64_t k = rand(0, 2);
        log << (k == 0 ? ".neg" : k == 1 ? ".relu" : ".abs");
        r = ref_map(r, [k](double v) { return k == 0 ? -v : k == 1 ? std::max(v, 0.0) : std::abs(v); });
        t = k == 0 ? -t : k == 1 ? t.relu() : t.abs();
        return;
      }
      case 7: {  // with a scalar on either side
        double s = double(rand(-2, 2));
        int64_t k = rand(0, 4);
        log << " op" << k << "(" << s << ")";
        r = ref_map(r, [&](double v) {
          return k == 0 ? v + s : k == 1 ? s - v : k == 2 ? v * s : k == 3 ? std::max(v, s) : v - s;
        });
        Tensor st = TensorGraph::scalar_like(t, s);
        t = k == 0 ? t + s : k == 1 ? s - t : k == 2 ? t * s : k == 3 ? maximum(t, st) : t - s;
        return;
      }
      case 8: {  // with a broadcast tensor
        if (r.numel() > 200) return;
        auto [o, ot] = fresh(broadcastable(r.shape));
        int64_t k = rand(0, 4);
        log << " bin" << k << shape_str(o.shape);
        r = ref_binary(r, o, [k](double a, double b) {
          return k == 0 ? a + b : k == 1 ? a - b : k == 2 ? a * b : k == 3 ? std::max(a, b) : std::min(a, b);
        });
        t = k == 0 ? t + ot : k == 1 ? t - ot : k == 2 ? t * ot : k == 3 ? maximum(t, ot) : minimum(t, ot);
        return;
      }
      case 9: {  // where(x > c, x, other)
        double c = double(rand(-2, 2));
        auto [o, ot] = fresh(broadcastable(r.shape));
        log << ".where(>" << c << ")" << shape_str(o.shape);
        // The condition is elementwise in x, so the whole where is one broadcast binary op.
        r = ref_binary(r, o, [c](double x, double w) { return x > c ? x : w; });
        t = where(t > c, t, ot);
        return;
      }
      case 10: {
        if (nd == 0) return;
        int64_t a = rand(0, nd - 1), k = rand(0, 2);
        bool keep = rand(0, 1);
        log << (k == 0 ? ".sum(" : k == 1 ? ".max(" : ".min(") << a << (keep ? ", keep)" : ")");
        r = ref_reduce(r, a, k == 0 ? RedOp::Sum : k == 1 ? RedOp::Max : RedOp::Min, keep);
        Tensor ta = rand(0, 1) ? t : t.contiguous();
        t = k == 0 ? ta.sum(a - (rand(0, 1) ? nd : 0), keep) : k == 1 ? ta.max(a, keep) : ta.min(a, keep);
        return;
      }
      case 11: {
        log << ".realize";
#ifndef RG_GRAPH_EVAL
        t.realize();
#endif
        return;
      }
    }
  }
};

// Every case runs (an error in one does not hide the others); failures print their chain.
TEST(Random, Chains) {
  std::mt19937 rng(20240611);
  int failed = 0;
  for (int c = 0; c < 200; ++c) {
    Case k{rng, {}};
    auto [r, t] = k.fresh(k.random_shape());
    k.log << "case " << c << ": x" << shape_str(r.shape);
    int64_t steps = k.rand(3, 8);
    try {
      for (int64_t s = 0; s < steps; ++s) k.step(r, t);
      std::vector<float> want(r.v.begin(), r.v.end());
#ifdef RG_GRAPH_EVAL
      std::vector<double> g = eval_graph(graph_of(t));
      std::vector<float> got(g.begin(), g.end());
#else
      std::vector<float> got = t.to_vector<float>();
#endif
      if (t.shape() != r.shape || got != want) {
        ++failed;
        ADD_FAILURE() << k.log.str() << ": got shape " << shape_str(t.shape()) << ", want " << shape_str(r.shape)
                      << (got != want ? ", values differ" : "");
      }
    } catch (const Error& e) {
      ++failed;
      ADD_FAILURE() << k.log.str() << ": " << e.what();
    }
  }
  EXPECT_EQ(failed, 0);
}

}  // namespace
}  // namespace rg
