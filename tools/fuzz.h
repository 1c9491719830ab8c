// A differential fuzzer over the Tensor API (docs/testing.md#the-fuzzer). A program is a list of steps,
// each an op of the public API over the values of earlier steps (SSA: step i makes value i, the last
// step's value is the output). Every program runs through the whole compiler on each device, with the
// device's heuristics, with random legal optimizer actions (compiler/opt) and sometimes under BEAM, and
// is compared with eval_graph (compiler/tensor/graph_eval.h), its gradients too. A failure shrinks to a
// minimal program, printed as a GoogleTest case.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/tensor/tensor.h"

namespace rg::fuzz {

enum class Kind : uint8_t {
  // sources
  Data,    // from_vector(data, a = shape) of dt (float16 as float32 data cast)
  Full,    // full(a = shape, x, dt)
  Arange,  // arange(a[0], a[1], a[2]), int32 or (flag) float32
  Eye,     // eye(a[0], a[1], dt)
  // movement
  Reshape,    // a: the shape
  Permute,    // a: the order
  Expand,     // a: the shape
  Pad,        // a: (before, after) per axis; sub 0 constant (fill x, a float fill when flag), else PadMode sub - 1
  Shrink,     // a: (start, end) per axis
  Flip,       // a: axes
  Transpose,  // a: the two axes
  Squeeze,    // a: {} (every 1) or {axis}
  Unsqueeze,  // a: {axis}
  Flatten,    // a: {start, end}
  Cat,        // the operands along a[0]
  Stack,      // the operands on a new axis a[0]
  // elementwise
  Unary,         // sub: a UnaryOp
  Binary,        // sub: a BinaryOp, two operands broadcast
  BinaryScalar,  // sub: a BinaryOp with the scalar x (flag: the scalar on the left)
  Where,         // operands: condition, then, else
  Cast,          // to dt
  // reductions
  Reduce,  // sub: a ReduceOp over axes a (empty: all), keepdim flag
  Arg,     // sub 0 argmax, 1 argmin; a: {} (flattened) or {axis}; keepdim flag
  Matmul,
  Realize,
  Contiguous,
  // nn
  Conv2d,      // operands x, weight (, bias); a: groups, stride, dilation, padding
  Pool,        // sub 0 max, 1 avg; a: kernel h, w, stride h, w, padding; flag: count_include_pad (avg)
  Gather,      // operands x, index; a: {dim}
  Cumsum,      // a: {axis}
  Softmax,     // a: {axis}
  LogSoftmax,  // a: {axis}
};

enum UnaryOp : int {
  kNeg,
  kRelu,
  kAbs,
  kExp,
  kExp2,
  kLog,
  kLog2,
  kSqrt,
  kRecip,
  kSin,
  kCos,
  kSigmoid,
  kTanh,
  kNot,
  kTrunc,
  kFloor,
  kCeil,
  kRound,
  kSquare,
  kSign,
  kUnaryOps
};
enum BinaryOp : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kLt,
  kLe,
  kGt,
  kGe,
  kEq,
  kNe,
  kIdiv,
  kMod,
  kAnd,
  kOr,
  kXor,
  kBinaryOps
};
enum ReduceOp : int { kSum, kRMax, kRMin, kMean, kProd, kReduceOps };

struct Step {
  Kind kind = Kind::Data;
  int sub = 0;
  std::vector<int> in;     // operands: indices of earlier steps
  std::vector<int64_t> a;  // the op's integers (see Kind)
  double x = 0;            // a scalar: fill, constant, operand
  DType dt = dtypes::float32;
  bool flag = false;
  bool raw = false;          // idiv and mod: the divisor as drawn (zero included)
  std::vector<double> data;  // Data's values, row-major
};

struct Program {
  std::vector<Step> steps;
};

// What may be drawn.
struct GenOptions {
  int max_steps = 10;          // ops after the first input
  int64_t max_dim = 40;        // per axis
  int64_t max_numel = 1536;    // per value
  bool zero_divisors = true;   // integer idiv/mod divisors as drawn (zero and INT_MIN / -1, defined values)
  bool transcendental = true;  // exp, log, sin, ... and softmax
  bool nn = true;              // conv2d, pooling, gather, cumsum, softmax
  bool float16 = true;
};

// One op's description for the coverage table ("pad.reflect", "binary.idiv", "reduce.sum.keepdim").
std::vector<std::string> labels(const Step& s);
std::string family(const Step& s);  // "movement", "elementwise", "reduce", "matmul", "nn", "cat", "source", "realize"

// A random valid program.
Program generate(std::mt19937_64& rng, const GenOptions& o);

// --- values ---

// What is known of a value without running it: its interval, and how far a correct compiler's answer may be
// from eval_graph's (0: bit for bit; rounding and reassociation of inexact floats make it more).
struct Info {
  double lo = 0, hi = 0;
  double err = 0;      // absolute
  int frac = 0;        // the values are multiples of 2^-frac (kInexact: unknown)
  bool smooth = true;  // no branch, tie or rounding on an inexact value on the way (gradients compare)
  double bound() const;
};
inline constexpr int kInexact = 1000;

struct Value {
  Tensor t;
  Info info;
  std::optional<Tensor> param;  // a float Data's from_vector tensor: gradients are taken with respect to it
};

// How a program's Realize steps run: not at all (lazily checking validity), through Tensor::realize, or
// through a caller's function (random actions); `device` is where Data is created.
struct BuildMode {
  std::string device = "CPU";
  std::function<Tensor(const Tensor&, const Info&)> realize;  // null: Realize is the identity
};

// The values of the program's steps, or nullopt (with the reason in *why) when the program is not valid:
// an operand index out of range, a step the generator's rules reject (a comparison of inexact floats, an
// int32 overflow, ...), or an rg::Error from the Tensor API building it. Realize steps run `mode.realize`;
// its exceptions propagate (they are the compiler's).
std::optional<std::vector<Value>> build(const Program& p, const BuildMode& mode, std::string* why = nullptr);
bool valid(const Program& p, const GenOptions& o = {});

// The program as C++ statements over rg::Tensor (t0, t1, ...), and as a whole GoogleTest case that checks
// the output (and the gradients, with `grads`) against eval_graph on `device`.
std::string cpp_statements(const Program& p, const std::string& device = "CPU");
std::string cpp_test(const Program& p, const std::string& name, const std::string& comment, const std::string& device,
                     bool grads);

// --- runs ---

enum class Mode { Plain, Actions, Beam };
struct Variant {
  std::string device = "CPU";
  Mode mode = Mode::Plain;
  bool grads = false;
  uint64_t seed = 0;        // of the actions
  std::string str() const;  // "LLVM actions grads"
};

struct Failure {
  bool exception = false;  // else a wrong value
  std::string what;        // the error, or which value differs where
  std::string signature;   // `what` without sizes and names, to tell one failure from another
  std::string actions;     // the kernels' actions (Mode::Actions)
};

// Registers the host emulator of CUDA C (backends/cuda/host_emulator.h) as the device "CUDA": host memory,
// kernels lowered with the CUDA device's options, rendered as CUDA C and run on the host.
void register_emulated_cuda();

// Runs p under v and compares every value with eval_graph; nullopt when all agree. `coverage` counts the
// actions drawn.
std::optional<Failure> run(const Program& p, const Variant& v, std::map<std::string, int64_t>* coverage = nullptr);

// The smallest program found for which `fails` holds (p itself when nothing smaller does); each candidate
// is a valid program. `budget`: calls of `fails` at most.
Program shrink(const Program& p, const std::function<bool(const Program&)>& fails, int budget = 400);

// --- the fuzzing loop ---

struct Options {
  uint64_t seed = 1;
  double minutes = 0;    // 0: no time limit
  int64_t programs = 0;  // 0: no count limit (one of the two is needed)
  std::vector<std::string> devices = {"CPU", "LLVM", "CUDA"};
  int cuda_every = 8;   // the emulated CUDA device runs every n-th program (its kernels compile slowly)
  int beam_every = 16;  // a BEAM=1 run every n-th program
  int shrink_budget = 400;
  int timeout_s = 300;  // a program's runs that take longer are a failure (a kernel that hangs)
  bool verbose = false;
  GenOptions gen;
};

struct Finding {
  std::string category;   // "exception: <signature>" or "wrong value: <signature>"
  std::string family;     // op families of the minimal program
  Variant first_variant;  // where it failed first
  Variant variant;        // the simplest variant that fails the same way (the minimal program's)
  Failure failure;
  Program original, minimal;
  std::string cpp;  // the minimal program as a GoogleTest case
  int count = 1;    // programs that failed this way
};

struct Report {
  int64_t programs = 0, runs = 0;
  double seconds = 0;
  std::map<std::string, int64_t> coverage;  // label -> times drawn
  std::vector<Finding> findings;            // one per category
  int64_t failures() const;
  void print(std::ostream& out) const;
};

// What runs of a program in a child process reported: the failure (of variant `variant`; a crash or timeout
// too), and the coverage of the actions drawn.
struct Outcome {
  std::optional<Failure> failure;
  int variant = -1;
  std::map<std::string, int64_t> coverage;
};
Outcome isolated(const Program& p, const std::vector<Variant>& vs, int timeout_s);

// Generates and runs programs until o's limits; this process only generates and shrinks, every run is in a
// child process. `log` gets each failure as it is found and a progress line every 50 programs.
Report fuzz(const Options& o, std::ostream* log = nullptr);

}  // namespace rg::fuzz
