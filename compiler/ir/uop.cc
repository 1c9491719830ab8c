#include "compiler/ir/uop.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "compiler/ir/eval.h"
#include "compiler/ir/index.h"
#include "compiler/ir/shape.h"

namespace rg {

// ---------------------------------------------------------------- op names

std::string lower_name(Op op) {
  std::string s(name(op));
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<Op> op_from_name(std::string_view n) {
  for (int i = 0; i < kNumOps; ++i) {
    std::string_view u = kOpInfo[i].name;
    if (u.size() != n.size()) continue;
    bool same = true;
    for (size_t k = 0; k < u.size() && same; ++k) same = std::toupper(static_cast<unsigned char>(n[k])) == u[k];
    if (same && (n == u || n == lower_name(Op(i)))) return Op(i);
  }
  return std::nullopt;
}

// ---------------------------------------------------------------- hashing

namespace {

size_t mix(size_t h, size_t v) { return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2)); }

size_t hash_arg(const Arg& a) {
  size_t h = a.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>)
          h = mix(h, std::hash<int64_t>()(v));
        else if constexpr (std::is_same_v<T, double>) {
          uint64_t bits;
          std::memcpy(&bits, &v, 8);
          h = mix(h, bits);
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t x : v) h = mix(h, std::hash<int64_t>()(x));
        } else if constexpr (std::is_same_v<T, std::string>)
          h = mix(h, std::hash<std::string>()(v));
        else if constexpr (std::is_same_v<T, Op>)
          h = mix(h, size_t(v));
        else if constexpr (std::is_same_v<T, VarArg>)
          h = mix(mix(mix(h, std::hash<std::string>()(v.name)), v.lo), v.hi);
      },
      a);
  return h;
}

// Args compare by value; doubles by bits, so NaN constants intern too and -0.0 != 0.0.
bool same_arg(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (auto* x = std::get_if<double>(&a)) return std::memcmp(x, &std::get<double>(b), 8) == 0;
  return a == b;
}

}  // namespace

// ---------------------------------------------------------------- interning

namespace {
std::atomic<ReleaseHook> release_hooks[kNumOps];
}  // namespace

void set_release_hook(Op op, ReleaseHook hook) { release_hooks[static_cast<int>(op)].store(hook); }

struct Interner {
  static constexpr int kShards = 64;
  struct Shard {
    std::mutex mu;
    std::unordered_multimap<size_t, UOp*> table;
  };
  Shard shards[kShards];
  std::atomic<size_t> live{0};

  Shard& shard(size_t h) { return shards[(h >> 7) % kShards]; }

  static bool try_retain(const UOp* u) {
    int64_t r = u->refs_.load(std::memory_order_relaxed);
    while (r > 0)
      if (u->refs_.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) return true;
    return false;  // dying: another thread is about to free it
  }

  static bool equal(const UOp* u, Op op, const DType& dt, const std::vector<UPtr>& src, const Arg& arg) {
    if (u->op != op || !(u->dtype == dt) || u->src.size() != src.size() || !same_arg(u->arg, arg)) return false;
    for (size_t i = 0; i < src.size(); ++i)
      if (u->src[i] != src[i]) return false;
    return true;
  }

  UOp* find(Shard& s, size_t h, Op op, const DType& dt, const std::vector<UPtr>& src, const Arg& arg) {
    auto [b, e] = s.table.equal_range(h);
    for (auto it = b; it != e; ++it)
      if (equal(it->second, op, dt, src, arg) && try_retain(it->second)) return it->second;
    return nullptr;
  }

  // Frees u and, iteratively, the sources that die with it. The work list is a
  // local of the outermost call; nested calls (a freed node releasing its
  // sources) only append to it. A plain pointer, not a thread_local vector: its
  // destructor would run before those of static handles at exit.
  void destroy(const UOp* u) {
    thread_local std::vector<const UOp*>* pending = nullptr;
    if (pending) {
      pending->push_back(u);
      return;
    }
    std::vector<const UOp*> work;  // stays unallocated unless a source dies too
    pending = &work;
    for (const UOp* q = u; q;) {
      {
        Shard& s = shard(q->hash);
        std::lock_guard<std::mutex> lock(s.mu);
        auto [b, e] = s.table.equal_range(q->hash);
        for (auto it = b; it != e; ++it)
          if (it->second == q) {
            s.table.erase(it);
            break;
          }
      }
      if (ReleaseHook h = release_hooks[static_cast<int>(q->op)].load(std::memory_order_acquire)) h(*q);
      delete q;  // releasing q's sources may queue more
      live.fetch_sub(1, std::memory_order_relaxed);
      q = nullptr;
      if (!work.empty()) {
        q = work.back();
        work.pop_back();
      }
    }
    pending = nullptr;
  }
};

namespace {
Interner& interner() {
  static Interner* in = new Interner();  // never destroyed: handles in static storage outlive main
  return *in;
}
}  // namespace

size_t live_uops() { return interner().live.load(); }

UPtr::UPtr(const UOp* p) : p_(p) {
  if (p_) p_->refs_.fetch_add(1, std::memory_order_relaxed);
}
UPtr::~UPtr() {
  if (p_ && p_->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) interner().destroy(p_);
}

// ---------------------------------------------------------------- bounds

namespace {

int64_t sat(__int128 v) {
  if (v > INT64_MAX) return INT64_MAX;
  if (v < INT64_MIN) return INT64_MIN;
  return static_cast<int64_t>(v);
}

int64_t cdiv(int64_t a, int64_t b) { return b == -1 ? sat(-__int128(a)) : a / b; }

// C's truncating a / b, b != 0, exact (INT64_MIN / -1 leaves int64).
__int128 ctrunc128(int64_t a, int64_t b) { return __int128(a) / b; }
// 2^k - 1 for the fewest k bits that hold v >= 0: every value of that bit length or less.
int64_t bit_fill(int64_t v) {
  uint64_t m = static_cast<uint64_t>(v);
  for (int s = 1; s < 64; s <<= 1) m |= m >> s;
  return static_cast<int64_t>(m);
}

struct Bounds {
  int64_t lo, hi;
};

Bounds dtype_bounds(const DType& dt) {
  if (dt.is_int() || dt.is_bool()) return {dt.min_int(), dt.max_int()};
  return {INT64_MIN, INT64_MAX};
}

bool is_invalid_const(const UPtr& u) { return u->op == Op::CONST && std::holds_alternative<InvalidT>(u->arg); }

Bounds compute_bounds(Op op, const DType& dt, const std::vector<UPtr>& s, const Arg& arg) {
  const Bounds full = dtype_bounds(dt);
  if (dt.ptr || dt.count != 1 || !(dt.is_int() || dt.is_bool())) return full;
  auto lo = [&](int i) { return s[i]->vmin; };
  auto hi = [&](int i) { return s[i]->vmax; };
  Bounds b = full;
  switch (op) {
    case Op::CONST:
      if (auto* v = std::get_if<int64_t>(&arg)) b = {*v, *v};
      break;
    case Op::DEFINE_VAR:
      b = {std::get<VarArg>(arg).lo, std::get<VarArg>(arg).hi};
      break;
    case Op::RANGE:
    case Op::SPECIAL:
      b = {0, std::max<int64_t>(0, hi(0) - 1)};
      break;
    case Op::BIND:
      b = {lo(0), hi(0)};
      break;
    case Op::ADD:
      b = {sat(__int128(lo(0)) + lo(1)), sat(__int128(hi(0)) + hi(1))};
      break;
    case Op::SUB:
      b = {sat(__int128(lo(0)) - hi(1)), sat(__int128(hi(0)) - lo(1))};
      break;
    case Op::NEG:
      b = {sat(-__int128(hi(0))), sat(-__int128(lo(0)))};
      break;
    case Op::MUL: {
      __int128 c[4] = {__int128(lo(0)) * lo(1), __int128(lo(0)) * hi(1), __int128(hi(0)) * lo(1),
                       __int128(hi(0)) * hi(1)};
      b = {sat(*std::min_element(c, c + 4)), sat(*std::max_element(c, c + 4))};
      break;
    }
    case Op::DIV:
      if (lo(1) > 0 || hi(1) < 0) {  // divisor's sign is known: extremes are at the corners
        int64_t c[4] = {cdiv(lo(0), lo(1)), cdiv(lo(0), hi(1)), cdiv(hi(0), lo(1)), cdiv(hi(0), hi(1))};
        b = {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
      }
      break;
    case Op::MOD:
      if (lo(1) == hi(1) && lo(1) != 0 && ctrunc128(lo(0), lo(1)) == ctrunc128(hi(0), lo(1))) {
        // A constant divisor and a dividend within one period of C's modulo: the quotient
        // (monotone in a) is one value q, and a - c*q increases with a ([5, 7] % 4 is [1, 3]).
        __int128 off = ctrunc128(lo(0), lo(1)) * lo(1);
        b = {sat(lo(0) - off), sat(hi(0) - off)};
      } else if (lo(1) > 0) {
        int64_t m = hi(1) - 1;
        if (lo(0) >= 0)
          b = (hi(0) < lo(1)) ? Bounds{lo(0), hi(0)} : Bounds{0, std::min(hi(0), m)};
        else if (hi(0) <= 0)
          b = {std::max(lo(0), -m), 0};
        else
          b = {std::max(lo(0), -m), std::min(hi(0), m)};
      }
      break;
    case Op::FLOORDIV:
      // floor(a/b) is monotone in a for a fixed b, and in b over a divisor range of one sign.
      // A corner past the dtype (MIN // -1 wraps) leaves the whole range.
      if (lo(1) > 0 || hi(1) < 0) {
        __int128 c[4] = {floordiv_wide(lo(0), lo(1)), floordiv_wide(lo(0), hi(1)), floordiv_wide(hi(0), lo(1)),
                         floordiv_wide(hi(0), hi(1))};
        __int128 l = *std::min_element(c, c + 4), h = *std::max_element(c, c + 4);
        if (l >= full.lo && h <= full.hi) b = {int64_t(l), int64_t(h)};
      }
      break;
    case Op::FLOORMOD:
      // A constant divisor and a dividend within one period: a - c*q is increasing in a.
      if (lo(1) == hi(1) && lo(1) != 0 && floordiv_wide(lo(0), lo(1)) == floordiv_wide(hi(0), lo(1))) {
        __int128 off = lo(1) * floordiv_wide(lo(0), lo(1));
        b = {sat(lo(0) - off), sat(hi(0) - off)};
      } else if (lo(1) > 0) {  // floor modulo takes the divisor's sign, and a % b <= a for a >= 0
        b = {0, lo(0) >= 0 ? std::min(hi(0), hi(1) - 1) : hi(1) - 1};
      } else if (hi(1) < 0) {
        b = {lo(1) + 1, 0};
      }
      break;
    case Op::MAX:
      b = {std::max(lo(0), lo(1)), std::max(hi(0), hi(1))};
      break;
    case Op::CMPLT:
      b = hi(0) < lo(1) ? Bounds{1, 1} : lo(0) >= hi(1) ? Bounds{0, 0} : Bounds{0, 1};
      break;
    case Op::CMPNE:
      b = (hi(0) < lo(1) || hi(1) < lo(0))                       ? Bounds{1, 1}
          : (lo(0) == hi(0) && lo(1) == hi(1) && lo(0) == lo(1)) ? Bounds{0, 0}
                                                                 : Bounds{0, 1};
      break;
    case Op::CMPEQ:
      b = (hi(0) < lo(1) || hi(1) < lo(0))                       ? Bounds{0, 0}
          : (lo(0) == hi(0) && lo(1) == hi(1) && lo(0) == lo(1)) ? Bounds{1, 1}
                                                                 : Bounds{0, 1};
      break;
    case Op::AND:
      if (dt.is_bool())
        b = {lo(0) & lo(1), hi(0) & hi(1)};
      else if (lo(0) >= 0 && lo(1) >= 0)
        b = {0, std::min(hi(0), hi(1))};
      else if (lo(1) >= 0)
        b = {0, hi(1)};
      else if (lo(0) >= 0)
        b = {0, hi(0)};
      break;
    case Op::OR:
      if (dt.is_bool())
        b = {lo(0) | lo(1), hi(0) | hi(1)};
      else if (lo(0) >= 0 && lo(1) >= 0)  // a | b >= max(a, b), and sets no bit above both
        b = {std::max(lo(0), lo(1)), bit_fill(std::max(hi(0), hi(1)))};
      break;
    case Op::XOR:
      if (lo(0) >= 0 && lo(1) >= 0) b = {0, bit_fill(std::max(hi(0), hi(1)))};
      break;
    case Op::SHR:
      if (lo(0) >= 0 && lo(1) == hi(1) && lo(1) >= 0 && lo(1) < 63) b = {lo(0) >> lo(1), hi(0) >> lo(1)};
      break;
    case Op::SHL:
      if (lo(1) == hi(1) && lo(1) >= 0 && lo(1) < 62)
        b = {sat(__int128(lo(0)) * (int64_t(1) << lo(1))), sat(__int128(hi(0)) * (int64_t(1) << lo(1)))};
      break;
    case Op::WHERE:
      if (is_invalid_const(s[2]))
        b = {lo(1), hi(1)};
      else if (is_invalid_const(s[1]))
        b = {lo(2), hi(2)};
      else if (lo(0) == 1)
        b = {lo(1), hi(1)};
      else if (hi(0) == 0)
        b = {lo(2), hi(2)};
      else
        b = {std::min(lo(1), lo(2)), std::max(hi(1), hi(2))};
      break;
    case Op::CAST:
      if ((s[0]->dtype.is_int() || s[0]->dtype.is_bool()) && s[0]->dtype.count == 1) b = {lo(0), hi(0)};
      break;
    default:
      break;
  }
  // Values outside the dtype wrap: then nothing is known beyond the dtype's range.
  if (b.lo < full.lo || b.hi > full.hi || b.lo > b.hi) return full;
  return b;
}

}  // namespace

// ---------------------------------------------------------------- UOp

UOp::UOp(Op op_, DType dtype_, std::vector<UPtr> src_, Arg arg_, size_t hash_)
    : op(op_), dtype(dtype_), src(std::move(src_)), arg(std::move(arg_)), hash(hash_) {
  Bounds b = compute_bounds(op, dtype, src, arg);
  vmin = b.lo;
  vmax = b.hi;
  if (std::optional<Shape> s = infer_shape(op, src, arg)) {
    shape = std::move(*s);
    has_shape = true;
    sym = infer_sym(op, src, arg, shape);
  }
}

UPtr UOp::make(Op op, DType dtype, std::vector<UPtr> src, Arg arg) {
  const OpInfo& oi = info(op);
  if (oi.arity >= 0 && static_cast<int>(src.size()) != oi.arity)
    throw Error(std::string(oi.name) + " takes " + std::to_string(oi.arity) + " sources, got " +
                std::to_string(src.size()));
  for (const UPtr& s : src)
    if (!s) throw Error(std::string(oi.name) + ": null source");
  size_t h = mix(mix(size_t(op), std::hash<DType>()(dtype)), hash_arg(arg));
  for (const UPtr& s : src) h = mix(h, s->hash);

  Interner& in = interner();
  Interner::Shard& sh = in.shard(h);
  {
    std::lock_guard<std::mutex> lock(sh.mu);
    if (UOp* u = in.find(sh, h, op, dtype, src, arg)) {
      UPtr r(u);
      u->refs_.fetch_sub(1, std::memory_order_relaxed);  // find() retained it; r holds it now
      return r;
    }
  }
  check_arg(op, arg);  // only for a new node: an interned one was checked when it was made
  UOp* fresh = new UOp(op, dtype, std::move(src), std::move(arg), h);  // may throw (bad shapes)
  std::lock_guard<std::mutex> lock(sh.mu);
  if (UOp* u = in.find(sh, h, op, dtype, fresh->src, fresh->arg)) {  // another thread won
    delete fresh;
    UPtr r(u);
    u->refs_.fetch_sub(1, std::memory_order_relaxed);
    return r;
  }
  sh.table.emplace(h, fresh);
  in.live.fetch_add(1, std::memory_order_relaxed);
  return UPtr(fresh);
}

namespace {
[[noreturn]] void bad_arg(const UOp& u, const char* want) {
  throw Error(std::string(name(u.op)) + ": arg is not " + want);
}
}  // namespace

int64_t UOp::arg_int() const {
  if (auto* v = std::get_if<int64_t>(&arg)) return *v;
  bad_arg(*this, "an int");
}
double UOp::arg_float() const {
  if (auto* v = std::get_if<double>(&arg)) return *v;
  bad_arg(*this, "a float");
}
const std::vector<int64_t>& UOp::arg_ints() const {
  if (is_typed_arg(info(op).arg))
    throw Error(std::string(name(op)) + ": arg is " + arg_kind_name(info(op).arg) +
                "; read it with its typed accessor");
  if (auto* v = std::get_if<std::vector<int64_t>>(&arg)) return *v;
  bad_arg(*this, "a list of ints");
}
const std::string& UOp::arg_str() const {
  if (auto* v = std::get_if<std::string>(&arg)) return *v;
  bad_arg(*this, "a string");
}
Op UOp::arg_op() const {
  if (auto* v = std::get_if<Op>(&arg)) return *v;
  bad_arg(*this, "an op");
}
const VarArg& UOp::arg_var() const {
  if (auto* v = std::get_if<VarArg>(&arg)) return *v;
  bad_arg(*this, "a variable");
}
RangeArg UOp::range_arg() const { return rg::range_arg(op, arg); }
ReduceAxisArg UOp::reduce_axis_arg() const { return rg::reduce_axis_arg(op, arg); }
BufferArg UOp::buffer_arg() const { return rg::buffer_arg(op, arg); }
Pairs UOp::pairs_arg() const { return rg::pairs_arg(op, arg); }
double UOp::as_float() const {
  if (auto* v = std::get_if<double>(&arg)) return *v;
  if (auto* v = std::get_if<int64_t>(&arg)) return dtype.scalar == Scalar::UInt64 ? double(uint64_t(*v)) : double(*v);
  bad_arg(*this, "a constant value");
}
int64_t UOp::as_int() const {
  if (auto* v = std::get_if<int64_t>(&arg)) return *v;
  if (auto* v = std::get_if<double>(&arg)) return static_cast<int64_t>(*v);
  bad_arg(*this, "a constant value");
}
size_t UOp::numel() const { return static_cast<size_t>(product(shape)); }

// ---------------------------------------------------------------- builders

// Wraps v to the width of an integer dtype, as C's conversion does.
static int64_t wrap_int(DType dt, int64_t v) {
  if (dt.is_bool()) return v != 0;
  int bits = dt.bits();
  if (bits >= 64) return v;
  uint64_t mask = (uint64_t(1) << bits) - 1, u = uint64_t(v) & mask;
  if (!dt.is_unsigned() && (u >> (bits - 1))) u |= ~mask;
  return static_cast<int64_t>(u);
}

UPtr cnst_int(DType dt, int64_t v) {
  DType s = dt;
  if (s.is_float()) return UOp::make(Op::CONST, s, {}, static_cast<double>(v));
  return UOp::make(Op::CONST, s, {}, wrap_int(s, v));
}

UPtr cnst(DType dt, double v) {
  if (dt.is_float()) return UOp::make(Op::CONST, dt, {}, round_float(dt, v));
  if (dt.is_bool()) return UOp::make(Op::CONST, dt, {}, int64_t(v != 0));
  if (std::isnan(v)) v = 0;
  if (dt.is_unsigned() && v >= 9223372036854775808.0)
    return UOp::make(Op::CONST, dt, {}, static_cast<int64_t>(static_cast<uint64_t>(v)));
  if (v >= 9223372036854775807.0) return cnst_int(dt, INT64_MAX);
  if (v <= -9223372036854775808.0) return cnst_int(dt, INT64_MIN);
  return cnst_int(dt, static_cast<int64_t>(v));
}

UPtr invalid(DType dt) { return UOp::make(Op::CONST, dt, {}, Invalid); }
UPtr const_like(const UPtr& x, double v) { return cnst(x->dtype, v); }
UPtr var(const std::string& n, int64_t lo, int64_t hi, DType dt) {
  return UOp::make(Op::DEFINE_VAR, dt, {}, VarArg{n, lo, hi});
}
void bind_value(VarValues& values, const std::string& name, int64_t value) {
  for (const auto& [n, v] : values)
    if (n == name) {
      if (v != value)
        throw Error("variable '" + name + "' is bound to " + std::to_string(v) + " and to " + std::to_string(value));
      return;
    }
  values.push_back({name, value});
}
UPtr range(int64_t bound, int64_t id, AxisType type) { return range(cnst_int(dtypes::index, bound), id, type); }

UPtr range(const UPtr& bound, int64_t id, AxisType type) {
  return UOp::make(Op::RANGE, dtypes::index, {bound}, to_arg(RangeArg{id, type}));
}

UPtr range_like(const UPtr& r, const RangeChange& c) {
  const RangeArg a = r->range_arg();
  UPtr bound = c.bound ? cnst_int(r->src[0]->dtype, *c.bound) : r->src[0];
  return UOp::make(Op::RANGE, r->dtype, {bound}, to_arg(RangeArg{c.axis.value_or(a.axis), c.type.value_or(a.type)}));
}

bool has_const_bound(const UPtr& r) { return r->op == Op::RANGE && r->src[0]->is_const(); }

std::tuple<int, int64_t> range_key(const UPtr& r) {
  static constexpr int kRank[kNumAxisTypes] = {/*Global*/ 0, /*Local*/ 3,  /*Loop*/ 4,        /*Reduce*/ 6,
                                               /*Upcast*/ 7, /*Unroll*/ 8, /*GroupReduce*/ 5,
                                               /*Thread*/ 1, /*Warp*/ 2};
  const RangeArg a = r->range_arg();
  return {kRank[static_cast<int>(a.type)], a.axis};
}

bool all_ranges(USpan s) {
  return std::all_of(s.begin(), s.end(), [](const UPtr& r) { return r->op == Op::RANGE; });
}

UPtr on_ranges(const UPtr& u) {
  std::vector<UPtr> ranges;
  for (size_t i = 1; i < u->src.size(); ++i)
    for (const UPtr& x : toposort(u->src[i]))
      if (x->op == Op::RANGE) ranges.push_back(x);
  sort_ranges(ranges);
  ranges.erase(std::unique(ranges.begin(), ranges.end()), ranges.end());
  if (ranges.empty()) return u->src[0];
  ranges.insert(ranges.begin(), u->src[0]);
  return UOp::make(u->op, u->dtype, std::move(ranges), u->arg);
}

UPtr alu(Op op, std::vector<UPtr> src) {
  if (src.empty()) throw Error(std::string(name(op)) + ": no sources");
  DType dt = is(op, kComparison) ? dtypes::bool_.vec(src[0]->dtype.count) : src[op == Op::WHERE ? 1 : 0]->dtype;
  return UOp::make(op, dt, std::move(src));
}
UPtr where(const UPtr& c, const UPtr& t, const UPtr& f) { return alu(Op::WHERE, {c, t, f}); }
UPtr cast(const UPtr& x, DType dt) { return x->dtype == dt ? x : UOp::make(Op::CAST, dt, {x}); }

UPtr operator+(const UPtr& a, const UPtr& b) { return alu(Op::ADD, {a, b}); }
UPtr operator-(const UPtr& a, const UPtr& b) { return alu(Op::SUB, {a, b}); }
UPtr operator*(const UPtr& a, const UPtr& b) { return alu(Op::MUL, {a, b}); }
UPtr operator/(const UPtr& a, const UPtr& b) { return alu(Op::DIV, {a, b}); }
UPtr operator%(const UPtr& a, const UPtr& b) { return alu(Op::MOD, {a, b}); }
UPtr operator<(const UPtr& a, const UPtr& b) { return alu(Op::CMPLT, {a, b}); }
UPtr operator&(const UPtr& a, const UPtr& b) { return alu(Op::AND, {a, b}); }
UPtr operator|(const UPtr& a, const UPtr& b) { return alu(Op::OR, {a, b}); }
UPtr operator-(const UPtr& a) { return alu(Op::NEG, {a}); }
UPtr ne(const UPtr& a, const UPtr& b) { return alu(Op::CMPNE, {a, b}); }
UPtr eq(const UPtr& a, const UPtr& b) { return alu(Op::CMPEQ, {a, b}); }
UPtr maximum(const UPtr& a, const UPtr& b) { return alu(Op::MAX, {a, b}); }
UPtr operator+(const UPtr& a, int64_t b) { return a + cnst_int(a->dtype, b); }
UPtr operator-(const UPtr& a, int64_t b) { return a - cnst_int(a->dtype, b); }
UPtr operator*(const UPtr& a, int64_t b) { return a * cnst_int(a->dtype, b); }
UPtr operator/(const UPtr& a, int64_t b) { return a / cnst_int(a->dtype, b); }
UPtr operator%(const UPtr& a, int64_t b) { return a % cnst_int(a->dtype, b); }
UPtr operator<(const UPtr& a, int64_t b) { return a < cnst_int(a->dtype, b); }

// ---------------------------------------------------------------- graph utilities

std::vector<UPtr> toposort(const UPtr& root) {
  std::vector<UPtr> order;
  std::unordered_map<const UOp*, bool> seen;  // false: open, true: done
  std::vector<std::pair<const UOp*, size_t>> stack{{root.get(), 0}};
  seen[root.get()] = false;
  while (!stack.empty()) {
    auto& [u, i] = stack.back();
    if (i < u->src.size()) {
      const UOp* s = u->src[i++].get();
      if (seen.emplace(s, false).second) stack.push_back({s, 0});
      continue;
    }
    seen[u] = true;
    order.emplace_back(u);
    stack.pop_back();
  }
  return order;
}

size_t count_nodes(const UPtr& root) { return toposort(root).size(); }

UPtr substitute(const UPtr& root, const UMap& replace) {
  std::unordered_map<const UOp*, UPtr> done;
  for (const UPtr& u : toposort(root)) {
    if (auto it = replace.find(u); it != replace.end()) {
      done[u.get()] = it->second;
      continue;
    }
    std::vector<UPtr> src;
    bool changed = false;
    for (const UPtr& s : u->src) {
      src.push_back(done.at(s.get()));
      changed |= src.back() != s;
    }
    done[u.get()] = changed ? UOp::make(u->op, u->dtype, std::move(src), u->arg) : u;
  }
  return done.at(root.get());
}

// ---------------------------------------------------------------- printing

namespace {

int precedence(Op op) {
  switch (op) {
    case Op::MUL:
    case Op::DIV:
    case Op::MOD:
      return 10;
    case Op::ADD:
    case Op::SUB:
      return 9;
    case Op::SHL:
    case Op::SHR:
      return 8;
    case Op::CMPLT:
      return 7;
    case Op::CMPNE:
    case Op::CMPEQ:
      return 6;
    case Op::AND:
      return 5;
    case Op::XOR:
      return 4;
    case Op::OR:
      return 3;
    default:
      return 100;  // atoms and calls
  }
}

std::string fmt_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os.precision(9);
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string fmt_ints(const std::vector<int64_t>& v) {
  std::string s = "(";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + (v.size() == 1 ? ",)" : ")");
}

std::string fmt_arg(const Arg& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "";
        else if constexpr (std::is_same_v<T, int64_t>)
          return std::to_string(v);
        else if constexpr (std::is_same_v<T, double>)
          return fmt_double(v);
        else if constexpr (std::is_same_v<T, InvalidT>)
          return "Invalid";
        else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
          return fmt_ints(v);
        else if constexpr (std::is_same_v<T, std::string>)
          return "'" + v + "'";
        else if constexpr (std::is_same_v<T, Op>)
          return lower_name(v);
        else
          return v.name + "[" + std::to_string(v.lo) + ", " + std::to_string(v.hi) + "]";
      },
      a);
}

std::string fmt_pairs(const Pairs& p) {
  std::string s = "(";
  for (size_t i = 0; i < p.size(); ++i)
    s += (i ? ", (" : "(") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + ")";
  return s + (p.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string render_arg(Op op, const Arg& a) {
  switch (info(op).arg) {
    case ArgKind::Range: {
      const RangeArg r = range_arg(op, a);
      return "axis " + std::to_string(r.axis) + ", " + std::string(axis_type_name(r.type));
    }
    case ArgKind::ReduceAxis: {
      const ReduceAxisArg r = reduce_axis_arg(op, a);
      return lower_name(r.op) + ", " + fmt_ints(r.axes);
    }
    case ArgKind::Buffer: {
      const BufferArg b = buffer_arg(op, a);
      std::string t = "id " + std::to_string(b.id) + ", size " + std::to_string(b.size);
      if (b.image_w) t += ", image (" + std::to_string(b.image_h) + ", " + std::to_string(b.image_w) + ")";
      return t;
    }
    case ArgKind::Pairs:
      return fmt_pairs(pairs_arg(op, a));
    default:
      return fmt_arg(a);
  }
}

namespace {

struct Printer {
  std::unordered_map<const UOp*, std::string> names;

  std::string wrap(const UOp* s, int parent, bool right) {
    std::string e = expr(s);
    int p = names.count(s) ? 100 : precedence(s->op);
    return (p < parent || (right && p == parent)) ? "(" + e + ")" : e;
  }

  std::string expr(const UOp* u) {
    if (auto it = names.find(u); it != names.end()) return it->second;
    const OpInfo& oi = info(u->op);
    if (u->op == Op::CONST) {
      if (std::holds_alternative<InvalidT>(u->arg)) return "Invalid";
      if (u->dtype.is_bool()) return u->arg_int() ? "true" : "false";
      return fmt_arg(u->arg);
    }
    if (u->op == Op::DEFINE_VAR) return u->arg_var().name;
    if (u->op == Op::RANGE) return "r" + std::to_string(u->range_arg().axis);
    if (u->op == Op::NEG) return "-" + wrap(u->src[0].get(), 11, false);
    if (!oi.infix.empty() && u->src.size() == 2) {
      int p = precedence(u->op);
      return wrap(u->src[0].get(), p, false) + std::string(oi.infix) + wrap(u->src[1].get(), p, true);
    }
    if (u->op == Op::WHERE)
      return wrap(u->src[0].get(), 100, false) + ".where(" + expr(u->src[1].get()) + ", " + expr(u->src[2].get()) + ")";
    if (u->op == Op::CAST) return wrap(u->src[0].get(), 100, false) + ".cast(" + u->dtype.name() + ")";
    std::string s = lower_name(u->op);
    if (u->arg.index() != 0) s += "[" + render_arg(u->op, u->arg) + "]";
    s += "(";
    for (size_t i = 0; i < u->src.size(); ++i) s += (i ? ", " : "") + expr(u->src[i].get());
    s += ")";
    if (!is(u->op, kALU)) s += ":" + u->dtype.name();
    return s;
  }
};

bool always_named(Op op) {
  return !(is(op, kALU) || op == Op::CONST || op == Op::DEFINE_VAR || op == Op::RANGE || op == Op::CAST);
}

}  // namespace

std::string render_expr(const UPtr& root) { return Printer{}.expr(root.get()); }

std::string render(const UPtr& root) {
  std::vector<UPtr> order = toposort(root);
  std::unordered_map<const UOp*, int> users;
  for (const UPtr& u : order)
    for (const UPtr& s : u->src) ++users[s.get()];
  Printer p;
  std::string out;
  int next = 0;
  for (const UPtr& u : order) {
    bool leaf = u->src.empty() && !always_named(u->op);
    if (u == root) break;
    bool shared = users[u.get()] > 1 && !leaf && u->op != Op::RANGE;
    std::string e = p.expr(u.get());
    if (shared || always_named(u->op) || e.size() > 60) {
      std::string n = "c" + std::to_string(next++);
      out += n + " = " + e + "\n";
      p.names[u.get()] = n;
    }
  }
  return out + p.expr(root.get());
}

std::ostream& operator<<(std::ostream& os, const UPtr& u) { return os << (u ? render_expr(u) : "null"); }

}  // namespace rg
