// The fuzzer's generator: random programs over the Tensor API (docs/testing.md#the-fuzzer), step by step,
// each drawn step kept only when apply() builds it (fuzz_steps.h).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "compiler/ir/shape.h"
#include "tools/fuzz.h"
#include "tools/fuzz_steps.h"

namespace rg::fuzz {

namespace {

Step step(Kind k) {
  Step s;
  s.kind = k;
  return s;
}

struct Gen {
  std::mt19937_64& rng;
  const GenOptions& o;
  Program p;
  std::vector<Value> vals;

  int64_t rand(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); }
  bool chance(double q) { return std::uniform_real_distribution<double>(0, 1)(rng) < q; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[size_t(rand(0, int64_t(v.size()) - 1))];
  }

  DType any_dtype() {
    std::vector<DType> d = {dtypes::float32, dtypes::float32, dtypes::float32, dtypes::int32,
                            dtypes::int8,    dtypes::uint8,   dtypes::bool_};
    if (o.float16) d.push_back(dtypes::float16);
    return pick(d);
  }

  int64_t dim() {
    static const std::vector<int64_t> dims = {1, 1, 2, 2, 3, 3, 4, 5, 5, 7, 8, 11, 13, 16, 17, 31, 32, 33, 37, 40};
    if (chance(0.03)) return 0;
    return std::min(pick(dims), o.max_dim);
  }

  // A shape of `rank` axes within the element budget: large axes halve until it fits.
  Shape shape(int64_t rank, int64_t budget) {
    Shape s(rank);
    for (int64_t& d : s) d = dim();
    while (product(s) > budget) {
      int64_t& big = *std::max_element(s.begin(), s.end());
      big = std::max<int64_t>(1, big / 2);
    }
    return s;
  }
  Shape any_shape() { return shape(pick(std::vector<int64_t>{0, 1, 1, 2, 2, 2, 3, 3, 4}), o.max_numel / 4); }

  double value(DType dt, int kind) {
    if (dt == dtypes::bool_) return double(rand(0, 1));
    if (dt == dtypes::int8) return double(kind == 0 ? rand(-128, 127) : rand(-5, 5));
    if (dt == dtypes::uint8) return double(kind == 0 ? rand(0, 255) : rand(0, 10));
    if (dt == dtypes::int32) return double(kind == 0 ? rand(-1000, 1000) : rand(-5, 5));
    if (dt == dtypes::float32 && kind == 0)
      return double(float(std::uniform_real_distribution<double>(-2, 2)(rng)));  // off any grid
    return double(rand(-16, 16)) / 4;
  }

  Step data(const Shape& s, DType dt) {
    if (dt != dtypes::float16 && dt != dtypes::int8 && dt != dtypes::uint8 && dt != dtypes::bool_)
      dt = dt.is_int() ? dtypes::int32 : dtypes::float32;  // a promoted dtype (int16, uint32, ...): the nearest drawn
    Step d = step(Kind::Data);
    d.a = s, d.dt = dt;
    const int kind = chance(0.25) ? 0 : 1;
    for (int64_t i = 0; i < product(s); ++i) d.data.push_back(value(dt, kind));
    return d;
  }

  // Appends the steps if the program stays valid; the last one's value is the new output.
  bool add(const std::vector<Step>& steps) {
    std::vector<Value> added;
    for (const Step& s : steps) {
      Program q;
      std::vector<const Value*> in;
      std::vector<std::string> names;
      for (int i : s.in) {
        const Value& v = size_t(i) < vals.size() ? vals[i] : added.at(size_t(i) - vals.size());
        in.push_back(&v), names.push_back("t" + std::to_string(i));
      }
      try {
        if (s.kind == Kind::Realize) {
          if (in.at(0)->t.dtype() == dtypes::float16) return false;  // see build()
          added.push_back(*in.at(0));
          added.back().param.reset();
          continue;
        }
        Built b = apply(s, in, names, "CPU");
        if (b.v.t.numel() > o.max_numel) return false;
        added.push_back(std::move(b.v));
      } catch (const Reject&) {
        return false;
      } catch (const Error&) {
        return false;
      }
    }
    for (size_t k = 0; k < steps.size(); ++k) p.steps.push_back(steps[k]), vals.push_back(std::move(added[k]));
    return true;
  }

  int next() const { return int(p.steps.size()); }
  // An operand: mostly the latest value, so programs are chains with branches joining them.
  int operand() { return chance(0.7) ? next() - 1 : int(rand(0, next() - 1)); }
  const Tensor& t(int i) const { return vals[size_t(i)].t; }

  std::vector<int64_t> axes_subset(int64_t nd) {
    std::vector<int64_t> a;
    for (int64_t i = 0; i < nd; ++i)
      if (chance(0.5)) a.push_back(chance(0.2) ? i - nd : i);
    return a;
  }
  int64_t axis(int64_t nd) {  // of a tensor of nd axes (a 0-d tensor takes 0 and -1)
    const int64_t n = std::max<int64_t>(nd, 1);
    const int64_t a = rand(0, n - 1);
    return chance(0.25) ? a - n : a;
  }

  // A shape that broadcasts with s: some axes 1, maybe fewer leading axes or one more.
  Shape broadcastable(const Shape& s) {
    Shape b = s;
    for (int64_t& d : b)
      if (chance(0.3)) d = 1;
    if (!b.empty() && chance(0.2)) b.erase(b.begin());
    if (b.size() < 4 && chance(0.1)) b.insert(b.begin(), rand(1, 3));
    return b;
  }

  // A random factorization of n into `rank` axes.
  Shape factor(int64_t n, int64_t rank) {
    if (rank == 0) return {};
    Shape s(rank, 1);
    if (n == 0) {
      s[rand(0, rank - 1)] = 0;
      for (int64_t& d : s)
        if (d != 0 && chance(0.3)) d = rand(1, 3);
      return s;
    }
    int64_t left = n;
    for (int64_t i = 0; i + 1 < rank; ++i) {
      std::vector<int64_t> divs;
      for (int64_t d = 1; d <= left; ++d)
        if (left % d == 0) divs.push_back(d);
      s[i] = pick(divs);
      left /= s[i];
    }
    s[rank - 1] = left;
    std::shuffle(s.begin(), s.end(), rng);
    return s;
  }

  // One random op on the program's values (with the fresh inputs it needs).
  std::vector<Step> draw() {
    const int x = operand();
    const Tensor& xt = t(x);
    const Shape xs = xt.shape();
    const int64_t nd = xt.ndim();
    const DType dt = xt.dtype();
    Step s;
    s.in = {x};
    const int64_t r = rand(0, 99);
    auto with = [&](Step fresh) {  // s over x and a fresh input, which goes first
      const int f = next();
      Step op = s;
      op.in.push_back(f);
      return std::vector<Step>{std::move(fresh), std::move(op)};
    };
    if (r < 5) {
      s.kind = Kind::Reshape;
      s.a = factor(xt.numel(), rand(0, 4));
      if (!s.a.empty() && xt.numel() > 0 && chance(0.3)) s.a[rand(0, int64_t(s.a.size()) - 1)] = -1;
      if (s.a.empty() && xt.numel() != 1) s.a = {xt.numel()};
    } else if (r < 9) {
      s.kind = Kind::Permute;
      s.a.resize(nd);
      std::iota(s.a.begin(), s.a.end(), 0);
      std::shuffle(s.a.begin(), s.a.end(), rng);
    } else if (r < 12) {
      s.kind = Kind::Expand;
      Shape e = xs;
      for (int64_t& d : e)
        if (d == 1 && chance(0.6)) d = rand(2, 6);
      if (e.size() < 4 && chance(0.3)) e.insert(e.begin(), rand(1, 4));
      if (chance(0.2) && !e.empty()) e[rand(0, int64_t(e.size()) - 1)] = -1;
      s.a = e;
    } else if (r < 20) {
      s.kind = Kind::Pad;
      s.sub = chance(0.5) ? 0 : int(rand(1, 3));
      for (int64_t d : xs) {
        const int64_t m = s.sub == 1 ? std::max<int64_t>(d - 1, 0) : s.sub == 3 ? d : 3;
        s.a.push_back(
            chance(0.4) ? 0 : rand(s.sub == 0 && chance(0.2) ? -std::min<int64_t>(d, 2) : 0, std::min<int64_t>(m, 3)));
        s.a.push_back(chance(0.4) ? 0 : rand(0, std::min<int64_t>(m, 3)));
      }
      s.flag = dt.is_float() || chance(0.3);
      s.x = s.flag ? double(rand(-8, 8)) / 4 : double(rand(-3, 3));
    } else if (r < 25) {
      s.kind = Kind::Shrink;
      for (int64_t d : xs) {
        const int64_t lo = chance(0.4) ? 0 : rand(0, d);
        s.a.push_back(lo), s.a.push_back(chance(0.4) ? d : rand(lo, d));
      }
    } else if (r < 27) {
      s.kind = Kind::Flip;
      s.a = axes_subset(nd);
      if (s.a.empty() && nd > 0) s.a = {axis(nd)};
    } else if (r < 29) {
      s.kind = Kind::Transpose;
      s.a = {axis(nd), axis(nd)};
    } else if (r < 30) {
      s.kind = Kind::Squeeze;
      if (chance(0.5)) s.a = {axis(nd)};
    } else if (r < 31) {
      s.kind = Kind::Unsqueeze;
      s.a = {rand(-nd - 1, nd)};
    } else if (r < 32) {
      s.kind = Kind::Flatten;
      const int64_t a = axis(nd), b = axis(nd);
      s.a = {std::min(a, b) < 0 && std::max(a, b) >= 0 ? std::max(a, b) : std::min(a, b), std::max(a, b)};
    } else if (r < 38) {
      s.kind = chance(0.6) ? Kind::Cat : Kind::Stack;
      s.a = {axis(nd + (s.kind == Kind::Stack ? 1 : 0))};
      const int64_t parts = rand(1, 4);
      std::vector<Step> out;
      for (int64_t k = 1; k < parts; ++k) {
        if (chance(0.4)) {
          s.in.push_back(x);
          continue;
        }
        Shape ps = xs;
        if (s.kind == Kind::Cat && nd > 0) ps[(s.a[0] + nd) % nd] = rand(0, 5);
        s.in.push_back(next() + int(out.size()));
        out.push_back(data(ps, chance(0.8) ? dt : any_dtype()));
      }
      out.push_back(s);
      return out;
    } else if (r < 48) {
      s.kind = Kind::Unary;
      s.sub = int(rand(0, o.transcendental ? kUnaryOps - 1 : kTanh));
      if (!o.transcendental && s.sub >= kExp && s.sub <= kTanh) s.sub = kNeg;
    } else if (r < 62) {
      s.kind = chance(0.7) ? Kind::Binary : Kind::BinaryScalar;
      s.sub = int(rand(0, kBinaryOps - 1));
      s.raw = o.zero_divisors && chance(0.5);
      if (s.kind == Kind::BinaryScalar) {
        s.flag = chance(0.3);
        s.dt = chance(0.3) ? dtypes::float32 : dtypes::int32;
        s.x = s.dt.is_float() ? double(rand(-8, 8)) / 4 : double(rand(-4, 4));
        if ((s.sub == kIdiv || s.sub == kMod) && !s.raw && !s.flag && s.x == 0) s.x = 3;
        return {s};
      }
      if (chance(0.25) && next() > 1) {
        s.in.push_back(int(rand(0, next() - 1)));
        return {s};
      }
      const DType pd = chance(0.7) ? dt : any_dtype();
      return with(data(broadcastable(xs), pd));
    } else if (r < 66) {
      s.kind = Kind::Where;
      Step c = data(broadcastable(xs), dtypes::bool_);
      Step other = data(broadcastable(xs), chance(0.7) ? dt : any_dtype());
      const int f = next();
      s.in = {f, x, f + 1};
      return {c, other, s};
    } else if (r < 70) {
      s.kind = Kind::Cast;
      s.dt = any_dtype();
    } else if (r < 78) {
      s.kind = Kind::Reduce;
      s.sub = int(rand(0, kReduceOps - 1));
      s.a = chance(0.25) ? std::vector<int64_t>{} : axes_subset(nd);
      s.flag = chance(0.4);
    } else if (r < 80) {
      s.kind = Kind::Arg;
      s.sub = int(rand(0, 1));
      if (chance(0.7)) s.a = {axis(nd)};
      s.flag = chance(0.4);
    } else if (r < 85) {
      s.kind = Kind::Matmul;
      if (nd == 0) return {};
      const int64_t k = xs.back();
      const DType pd = chance(0.7) ? dt : any_dtype();
      if (chance(0.2)) return with(data({k}, pd));
      if (nd >= 2 && chance(0.2)) {
        Step tr = step(Kind::Transpose);
        tr.in = {x}, tr.a = {-1, -2};
        s.in.push_back(next());
        return {tr, s};
      }
      return with(data({k, dim() % 9 + 1}, pd));
    } else if (r < 88) {
      s.kind = chance(0.5) ? Kind::Realize : Kind::Contiguous;
    } else {
      if (!o.nn) return {};
      return nn(x);
    }
    return {s};
  }

  std::vector<Step> nn(int x) {
    const Tensor& xt = t(x);
    const Shape xs = xt.shape();
    const int64_t nd = xt.ndim();
    Step s;
    s.in = {x};
    const int64_t r = rand(0, 5);
    if (r == 0) {  // conv2d over x viewed as (N, C, H, W)
      std::vector<Step> out;
      int in = x;
      Shape v = xs;
      if (nd != 4) {
        Step rs = step(Kind::Reshape);
        rs.in = {x}, rs.a = factor(xt.numel(), 4);
        in = next(), v = rs.a;
        out.push_back(rs);
      }
      const int64_t c = v[1];
      std::vector<int64_t> groups;
      for (int64_t g = 1; g <= std::max<int64_t>(c, 1); ++g)
        if (c % g == 0) groups.push_back(g);
      const int64_t g = chance(0.7) ? 1 : pick(groups);
      const int64_t cout = g * rand(1, 3);
      const int64_t pad = rand(0, 1), dil = chance(0.8) ? 1 : 2;
      const int64_t kh = rand(1, std::max<int64_t>(1, std::min<int64_t>(3, v[2]))),
                    kw = rand(1, std::max<int64_t>(1, std::min<int64_t>(3, v[3])));
      const DType wd = xt.dtype().is_float() ? xt.dtype() : (chance(0.5) ? xt.dtype() : dtypes::float32);
      Step w = data({cout, g > 0 ? c / g : c, kh, kw}, wd);
      Step conv = step(Kind::Conv2d);
      conv.a = {g, rand(1, 2), dil, pad};
      conv.in = {in, next() + int(out.size())};
      out.push_back(w);
      if (chance(0.5)) {
        conv.in.push_back(next() + int(out.size()));
        out.push_back(data({cout}, wd));
      }
      out.push_back(conv);
      return out;
    }
    if (r == 1) {
      if (nd < 2) return {};
      s.kind = Kind::Pool;
      s.sub = int(rand(0, 1));
      const int64_t kh = rand(1, 3), kw = rand(1, 3);
      s.a = {kh, kw, chance(0.3) ? 0 : rand(1, 3), rand(1, 3), rand(0, std::min(kh, kw) / 2)};
      s.flag = chance(0.5);
      return {s};
    }
    if (r == 2) {
      if (nd == 0) return {};
      s.kind = Kind::Gather;
      const int64_t d = rand(0, nd - 1);
      if (xs[d] == 0) return {};
      s.a = {chance(0.2) ? d - nd : d};
      Shape is = xs;
      for (int64_t a = 0; a < nd; ++a) is[a] = a == d ? rand(1, 5) : rand(std::min<int64_t>(1, xs[a]), xs[a]);
      Step idx = step(Kind::Data);
      idx.a = is, idx.dt = dtypes::int32;
      for (int64_t i = 0; i < product(is); ++i) idx.data.push_back(double(rand(0, xs[d] - 1)));
      s.in.push_back(next());
      return {idx, s};
    }
    s.kind = r == 3 ? Kind::Cumsum : r == 4 ? Kind::Softmax : Kind::LogSoftmax;
    s.a = {axis(nd)};
    return {s};
  }
};

}  // namespace

Program generate(std::mt19937_64& rng, const GenOptions& o) {
  Gen g{rng, o, {}, {}};
  while (!g.add({g.data(g.any_shape(), g.any_dtype())})) {
  }
  const int64_t ops = g.rand(1, o.max_steps);
  for (int64_t k = 0, tries = 0; k < ops && tries < 40 * o.max_steps; ++tries) {
    std::vector<Step> s = g.draw();
    if (!s.empty() && g.add(s)) ++k;
  }
  return g.p;
}

}  // namespace rg::fuzz
