// The public lazy Tensor API. A Tensor is a handle to a tensor-graph UOp;
// every method builds a new graph and nothing runs until realize() or
// to_vector(). Names and semantics follow tinygrad where C++ allows.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/uop.h"
#include "compiler/tensor/variable.h"

namespace rg {

enum class PadMode { constant, reflect, replicate, circular };

// Pairs (compiler/ir/args.h): (before, after) per axis for pad; (start, end) per axis for shrink.

// The axes a reduction reduces: one (`x.sum(1)`), several (`x.sum({0, 2})`), or every axis (`x.sum()`,
// `x.sum({})`, `x.sum(Axes::all())`). Negative axes count from the end. One type for all three, so that
// `x.max({}, true)` cannot pick an overload taking one int (it once reduced axis 0).
struct Axes {
  std::vector<int64_t> v;  // empty: every axis
  Axes() = default;
  Axes(int64_t axis) : v{axis} {}  // implicit on purpose, as the spellings above
  Axes(std::initializer_list<int64_t> axes) : v(axes) {}
  Axes(std::vector<int64_t> axes) : v(std::move(axes)) {}
  static Axes all() { return {}; }
};

struct Conv2dOptions;

// The device tensors are created on when none is named, and where a graph of constants is computed when
// realized alone (tinygrad's Device.DEFAULT): RG_DEVICE from the environment ("LLVM", "CUDA:1"), else "CPU",
// until set_default_device names another. An unknown or unavailable device is an rg::Error naming it. The
// runtime's own functions (runtime/device.h), declared here for the Tensor API.
std::string default_device();
void set_default_device(const std::string& name);

class Tensor {
 public:
  // A scalar operand: C++ integers act as Python ints (take the tensor's dtype when it is not bool),
  // floating types as Python floats (give float32 on int/bool tensors), bool as a Python bool.
  struct Number {
    enum Kind { Bool, Int, Float } kind;
    double value;
    template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
    Number(T v)  // implicit on purpose, so that `x + 1` and `x.where(0, 1.5)` read naturally
        : kind(std::is_same_v<T, bool>       ? Bool
               : std::is_floating_point_v<T> ? Float
                                             : Int),
          value(static_cast<double>(v)) {}
  };

  // An empty handle, to assign a tensor to later; any use of its value is an rg::Error.
  Tensor() = default;
  // A 1-d tensor of these numbers, typed as tinygrad types a Python list: bool when all are bools, float32
  // when any is a floating number, else int32. Tensor({1, 2, 3, 4}); on the default device.
  Tensor(std::initializer_list<Number> values);

  // --- creation ---
  template <class E>
  static Tensor from_vector(const std::vector<E>& data, const Shape& shape);
  template <class E>
  static Tensor from_vector(const std::vector<E>& data) {
    return from_vector(data, Shape{static_cast<int64_t>(data.size())});
  }
  // The data in a new buffer on `device` ("CPU", "LLVM", "CUDA:1", ...; see device()).
  template <class E>
  static Tensor from_vector(const std::vector<E>& data, const Shape& shape, const std::string& device);
  // Without a dtype, the value's: int32 for a C++ integer, float32 for a floating number, bool (as tinygrad).
  static Tensor full(const Shape& shape, Number value, std::optional<DType> dt = std::nullopt);
  static Tensor zeros(const Shape& shape, DType dt = dtypes::float32) { return full(shape, 0, dt); }
  static Tensor ones(const Shape& shape, DType dt = dtypes::float32) { return full(shape, 1, dt); }
  // Sizes that may be symbolic (docs/symbolic.md): Tensor::zeros({n, 8}).
  static Tensor full(const std::vector<Sym>& shape, Number value, std::optional<DType> dt = std::nullopt);
  static Tensor full(std::initializer_list<Sym> shape, Number value, std::optional<DType> dt = std::nullopt) {
    return full(std::vector<Sym>(shape), value, dt);
  }
  static Tensor zeros(std::initializer_list<Sym> shape, DType dt = dtypes::float32) { return full(shape, 0, dt); }
  static Tensor ones(std::initializer_list<Sym> shape, DType dt = dtypes::float32) { return full(shape, 1, dt); }
  // Integer arguments give int32, any floating argument float32 (as in tinygrad).
  template <class A, class = std::enable_if_t<std::is_arithmetic_v<A>>>
  static Tensor arange(A stop) {
    return arange_impl(0, double(stop), 1, std::is_floating_point_v<A> ? dtypes::float32 : dtypes::int32);
  }
  template <class A, class B, class C = int,
            class = std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C>>>
  static Tensor arange(A start, B stop, C step = 1) {
    bool f = std::is_floating_point_v<A> || std::is_floating_point_v<B> || std::is_floating_point_v<C>;
    return arange_impl(double(start), double(stop), double(step), f ? dtypes::float32 : dtypes::int32);
  }
  static Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dt = dtypes::float32);  // m: n
  // `steps` values from start to stop, both included (steps = 1: start alone), as tinygrad's linspace.
  static Tensor linspace(double start, double stop, int64_t steps, DType dt = dtypes::float32);
  // This tensor's shape and device, filled with one value; the dtype is this tensor's unless given.
  Tensor full_like(Number value, std::optional<DType> dt = std::nullopt) const;
  Tensor zeros_like(std::optional<DType> dt = std::nullopt) const { return full_like(0, dt); }
  Tensor ones_like(std::optional<DType> dt = std::nullopt) const { return full_like(1, dt); }

  // --- random ---
  // Counter-based random numbers, as tinygrad's: threefry 2x32 (20 rounds, Random123's) of a per-device key
  // (the seed and the device's order of first use) and counter, computed by kernels from uint32 tensor ops.
  // The same seed gives the same numbers on every device and in every run, and tinygrad's for float32; each
  // call advances the device's counter (an assign, so a captured step draws new numbers when replayed).
  // Without manual_seed the seed is the clock's seconds at start, as tinygrad's.
  static void manual_seed(uint32_t seed = 0);
  // The generators' state by device, each uint32 (4,): the key and the counter. set_rng_state restores it (a
  // checkpoint's), assigning in place so a captured step keeps drawing from the same buffers; another dtype
  // or shape is an rg::Error naming the device.
  static std::map<std::string, Tensor> rng_state();
  static void set_rng_state(const std::map<std::string, Tensor>& state);
  // Uniform in [0, 1). Float dtypes other than float32 are float32 numbers cast (tinygrad draws their own bits).
  static Tensor rand(const Shape& shape, DType dt = dtypes::float32, const std::string& device = default_device());
  // Normal, mean 0 and variance 1 (Box-Muller over rand of shape (2, ...shape)).
  static Tensor randn(const Shape& shape, DType dt = dtypes::float32, const std::string& device = default_device());
  // Uniform integers in [low, high); low >= high or a non-integer dtype is an rg::Error.
  static Tensor randint(const Shape& shape, int64_t low = 0, int64_t high = 10, DType dt = dtypes::int32,
                        const std::string& device = default_device());
  // Uniform in [low, high): ((high - low) * rand).cast(dt) + low.
  static Tensor uniform(const Shape& shape, double low = 0.0, double high = 1.0, DType dt = dtypes::float32,
                        const std::string& device = default_device());
  // uniform in +-sqrt(6 / (1 + a^2) / prod(shape[1:])) (torch's kaiming_uniform_, tinygrad's default a).
  static Tensor kaiming_uniform(const Shape& shape, double a = 0.01, DType dt = dtypes::float32,
                                const std::string& device = default_device());
  // uniform in +-sqrt(6 / (shape[0] + prod(shape[1:]))).
  static Tensor glorot_uniform(const Shape& shape, DType dt = dtypes::float32,
                               const std::string& device = default_device());
  // While Tensor::training(): zeroes each element with probability p and scales the others by 1 / (1 - p);
  // otherwise this tensor. p outside [0, 1] is an rg::Error.
  Tensor dropout(double p = 0.5) const;
  // tinygrad's Tensor.training, set for a scope as its `with Tensor.train():` does: dropout acts, and batchnorm
  // uses the batch's statistics, while a Train lives; its end restores the previous setting.
  static bool training() { return training_; }
  class Train {
   public:
    explicit Train(bool on = true) : previous_(training_) { training_ = on; }
    ~Train() { training_ = previous_; }
    Train(const Train&) = delete;
    Train& operator=(const Train&) = delete;

   private:
    bool previous_;
  };
  // Bit operations (tinygrad's names), the generator's building blocks: integer or bool operands for the
  // bitwise ones, integers for shifts (by a constant number of bits), and a bitcast to a dtype of the same size.
  Tensor bitwise_and(const Tensor& o) const;
  Tensor bitwise_or(const Tensor& o) const;
  Tensor bitwise_xor(const Tensor& o) const;
  Tensor bitwise_not() const;  // ~x: an integer's bits flipped, a bool negated
  Tensor lshift(int bits) const;
  Tensor rshift(int bits) const;
  Tensor bitcast(DType dt) const;

  // --- realization and data ---
  // Computes the value (once; copies of this Tensor share it) and returns this.
  Tensor& realize();
  static void realize_all(std::vector<Tensor*> tensors);  // one schedule for several tensors
  // Flat, row-major; E must be the tensor's dtype (bool, float, double, int32_t, int64_t, uint8_t, ...).
  template <class E>
  std::vector<E> to_vector() const;
  // The value of a tensor of one element, converted to T (libtorch's item<T>()); another count is an rg::Error.
  template <class T>
  T item() const;

  // The shape; an rg::Error for a symbolic one (docs/symbolic.md), whose sizes sym_shape() gives.
  const Shape& shape() const;
  // Each axis' size, a constant or an expression of variables: x.shrink({{0, n}}).sym_shape() is {n}.
  std::vector<Sym> sym_shape() const;
  bool symbolic() const { return uop()->symbolic(); }
  DType dtype() const { return uop()->dtype; }
  int64_t ndim() const { return static_cast<int64_t>(uop()->shape.size()); }
  int64_t numel() const;
  // The device the tensor's value is computed on, canonical as in tinygrad ("llvm:0" is "LLVM").
  // Constants belong to no device and report the default device, where they would be computed alone.
  std::string device() const;

  // --- autograd ---
  // Marks this tensor as a parameter (every copy of the handle is the same parameter): backward() of a
  // loss computed from it sets its grad(). Parameters are known by their handle, so one updated in place
  // is still found. Only float tensors have gradients (rg::Error otherwise).
  Tensor& requires_grad(bool on);
  bool requires_grad() const;
  // Adds to grad() of every tensor that requires a gradient and that this loss was computed from the
  // gradient of the loss with respect to it (lazy graphs, like every op; zeros when the loss does not
  // depend on it). Without an argument the loss must be a scalar (its gradient is 1); otherwise pass the
  // loss's gradient, of its shape. Gradients of sharded tensors are sharded the same way. Returns this.
  Tensor& backward();
  Tensor& backward(const Tensor& gradient);
  // The gradient backward() accumulated; nullopt before the first backward() (tinygrad's None).
  std::optional<Tensor> grad() const;
  void set_grad(const std::optional<Tensor>& g);  // nullopt clears it (an optimizer's zero_grad)

  // --- devices ---
  // This tensor on `device`: a COPY, its own step when realized (this tensor itself when it is there
  // already). An unknown device, or one not available here (CUDA without a driver), is an rg::Error.
  // Ops between tensors on different devices are an rg::Error naming both: move one with to() first.
  Tensor to(const std::string& device) const;
  // Splits `axis` evenly over `devices` and places piece i on devices[i] (docs/multi_device.md#shard). The tensor keeps
  // its full shape; device() reports the tuple, "(CPU, CPU:1)". Elementwise ops between tensors sharded
  // the same way run per device on their pieces; an unsharded operand is copied to every device; a
  // reduce over the shard axis is a local reduce per device plus an allreduce (the result is then on
  // every device). to(device) and to_vector() gather the pieces in order. Lazy like every op: the copies
  // are COPY nodes of the graph, run when a result is realized.
  Tensor shard(const std::vector<std::string>& devices, int64_t axis = 0) const;
  // The devices of a tensor made by shard() or computed from one (empty otherwise), and the axis it is
  // split on (-1 when every device holds the whole tensor).
  const std::vector<std::string>& devices() const { return node_->devices; }
  int64_t shard_axis() const { return node_->axis; }

  // --- in place ---
  // x += y is x.assign(x + y) (tinygrad's __iadd__): every copy of the handle sees the new value, and the
  // result must keep x's dtype (an int tensor += 0.5 is an rg::Error, as in libtorch).
  Tensor& operator+=(const Tensor& o);
  Tensor& operator-=(const Tensor& o);
  Tensor& operator*=(const Tensor& o);
  Tensor& operator/=(const Tensor& o);
  Tensor& operator+=(Number o);
  Tensor& operator-=(Number o);
  Tensor& operator*=(Number o);
  Tensor& operator/=(Number o);
  // Stores `value` into this tensor's buffer, lazily: the next realize of this tensor (or of anything that
  // reads it) runs a kernel writing the existing buffer, so parameters keep their storage across updates.
  // The value may read this tensor (w.assign(w - 0.1 * g)); copies of this Tensor see the new value. A
  // tensor not realized yet has no buffer: its graph is just replaced by the value. Another shape, dtype or
  // device is an rg::Error naming both; sharded tensors are not supported yet.
  Tensor& assign(const Tensor& value);

  // --- image textures ---
  // This (h, w*4) float32 tensor realized into a new image buffer of h rows of w float4 texels
  // (dtypes::imagef(h, w), as tinygrad's image tensors) on its device: the tensor returned has the same shape
  // and values. Its kernels write and read it as texels on a device that lowers with images (the CPU with
  // RG_IMAGE=1); elsewhere it is its h*w*4 floats. Another dtype or rank, a last axis that is not a multiple of
  // 4, or a sharded tensor is an rg::Error naming the shape.
  Tensor image() const;

  // --- movement ---
  using SymPairs = std::vector<std::pair<Sym, Sym>>;  // (start, end) or (before, after) per axis, maybe symbolic
  Tensor reshape(const Shape& shape) const;           // one -1 allowed
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor expand(const Shape& shape) const;  // -1 keeps an axis; new leading axes allowed
  // Sizes that may be symbolic (docs/symbolic.md): x.reshape({n, 64}), x.expand({n, 64}). A list of constants
  // takes the overloads above; -1 is for those only.
  Tensor reshape(std::initializer_list<Sym> shape) const { return reshape(std::vector<Sym>(shape)); }
  Tensor reshape(const std::vector<Sym>& shape) const;
  Tensor expand(std::initializer_list<Sym> shape) const { return expand(std::vector<Sym>(shape)); }
  Tensor expand(const std::vector<Sym>& shape) const;
  // The fill follows the Python-scalar rules as in tinygrad: a floating value pads an int tensor into float32,
  // a 0 fill keeps the dtype.
  Tensor pad(const Pairs& padding, Number value = 0) const;
  Tensor pad(const Pairs& padding, PadMode mode) const;
  Tensor shrink(const Pairs& bounds) const;
  // Windows moved by a symbolic offset per axis (variable.h): shrink's bounds become (start + o, end + o) and
  // pad's (before + o, after - o), at the shape the constant bounds give; the kernels read the offsets' values
  // when they run. Every value in an offset's range must keep its window inside (an rg::Error otherwise).
  Tensor shrink(const Pairs& bounds, const std::vector<Sym>& offsets) const;
  // Bounds that may be symbolic (docs/symbolic.md): x.shrink({{0, n}, {0, 64}}) has the shape (n, 64), and
  // x.shrink({{pos, pos + 1}}) is the row at pos. A size's range must keep the window inside the axis.
  Tensor shrink(std::initializer_list<std::pair<Sym, Sym>> bounds) const { return shrink(SymPairs(bounds)); }
  Tensor shrink(const SymPairs& bounds) const;
  Tensor pad(const Pairs& padding, const std::vector<Sym>& offsets, Number value = 0) const;
  // Padding that may be symbolic (docs/symbolic.md): x.pad({{0, 0}, {0, 10 - i}}) of a (3, i) tensor is (3, 10).
  Tensor pad(std::initializer_list<std::pair<Sym, Sym>> padding, Number value = 0) const {
    return pad(SymPairs(padding), value);
  }
  Tensor pad(const SymPairs& padding, Number value = 0) const;
  Tensor flip(const std::vector<int64_t>& axes) const;
  Tensor flip(int64_t axis) const { return flip(std::vector<int64_t>{axis}); }
  // Python's start:stop:step on each axis, negative values counting from the end, out-of-range bounds
  // clamped, a negative step walking backwards: tinygrad's x[1:3, ::2, ::-1] is
  // x.slice({{1, 3}, {{}, {}, 2}, {{}, {}, -1}}). Axes past the list stay whole; a step of 0 is an rg::Error.
  struct Slice {
    std::optional<int64_t> start, stop;
    int64_t step = 1;
  };
  Tensor slice(const std::vector<Slice>& axes) const;
  Tensor T() const;  // swaps the first two axes
  Tensor transpose(int64_t a = 1, int64_t b = 0) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t axis) const;
  Tensor unsqueeze(int64_t axis) const;
  Tensor flatten(int64_t start = 0, int64_t end = -1) const;
  Tensor contiguous() const;

  // --- elementwise ---
  Tensor operator-() const;
  Tensor add(const Tensor& o) const;
  Tensor sub(const Tensor& o) const;
  Tensor mul(const Tensor& o) const;
  Tensor div(const Tensor& o) const;  // true division: int and bool operands give float32
  Tensor maximum(const Tensor& o) const;
  Tensor minimum(const Tensor& o) const;
  Tensor lt(const Tensor& o) const;
  Tensor le(const Tensor& o) const;
  Tensor gt(const Tensor& o) const;
  Tensor ge(const Tensor& o) const;
  Tensor eq(const Tensor& o) const;
  Tensor ne(const Tensor& o) const;
  Tensor where(const Tensor& a, const Tensor& b) const;  // this is the condition
  Tensor where(const Tensor& a, Number b) const;
  Tensor where(Number a, const Tensor& b) const;
  Tensor where(Number a, Number b) const;
  Tensor logical_not() const;
  Tensor exp() const;
  Tensor exp2() const;
  Tensor log() const;
  Tensor log2() const;
  Tensor sqrt() const;
  Tensor reciprocal() const;
  Tensor sin() const;
  Tensor cos() const;
  Tensor relu() const;
  Tensor sigmoid() const;
  Tensor tanh() const;
  Tensor abs() const;
  Tensor cast(DType dt) const;
  // Rounding (identity on integers): toward zero, down, up, and to the nearest with halves to even.
  Tensor trunc() const;
  Tensor floor() const;
  Tensor ceil() const;
  Tensor round() const;
  // Integer division rounding toward zero (C's, tinygrad's idiv), and the modulo with the divisor's sign
  // (Python's %, tinygrad's mod; floats too).
  Tensor idiv(const Tensor& o) const;
  Tensor mod(const Tensor& o) const;

  // --- reduce ---
  Tensor sum(const Axes& axes = {}, bool keepdim = false) const;
  Tensor max(const Axes& axes = {}, bool keepdim = false) const;
  Tensor min(const Axes& axes = {}, bool keepdim = false) const;
  Tensor mean(const Axes& axes = {}, bool keepdim = false) const;
  Tensor prod(const Axes& axes = {}, bool keepdim = false) const;

  // --- composites ---
  Tensor matmul(const Tensor& w) const;
  Tensor dot(const Tensor& w) const { return matmul(w); }
  Tensor softmax(int64_t axis = -1) const;
  static Tensor cat(const std::vector<Tensor>& tensors, int64_t axis = 0);
  static Tensor stack(const std::vector<Tensor>& tensors, int64_t axis = 0);

  // --- nn ---
  // Forward ops for training, built from movement ops and reductions so that the scheduler fuses them
  // (tinygrad's names and semantics; compiler/tensor/README.md#nn).

  // An int for every spatial axis, or a list: one per spatial axis, or for padding 2 per axis in
  // tinygrad's flat order (left, right, top, bottom: the last axis first).
  struct PerAxis {
    std::vector<int64_t> v;
    PerAxis() = default;
    PerAxis(int64_t x) : v{x} {}  // implicit on purpose: `stride = 2`, `padding = {1, 2}`
    PerAxis(std::initializer_list<int64_t> l) : v(l) {}
    PerAxis(std::vector<int64_t> l) : v(std::move(l)) {}
  };
  enum class Reduction { none, sum, mean };

  // x (N, Cin, *spatial), weight (Cout, Cin / groups, *kernel), bias (Cout,): (N, Cout, *out). Negative padding crops.
  Tensor conv2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                PerAxis stride = 1, PerAxis dilation = 1, PerAxis padding = 0) const;
  // The same with named options (libtorch's Conv2dFuncOptions), in their declared order:
  // x.conv2d(w, {.bias = b, .stride = 2, .padding = 1}).
  Tensor conv2d(const Tensor& weight, const Conv2dOptions& options) const;
  // weight (Cin, Cout / groups, *kernel): the gradient of conv2d with respect to its input.
  Tensor conv_transpose2d(const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt, int64_t groups = 1,
                          PerAxis stride = 1, PerAxis dilation = 1, PerAxis padding = 0,
                          PerAxis output_padding = 0) const;
  // Pool the last kernel_size.size() axes (an int means 2 axes). stride: empty means the kernel size. Max pooling
  // pads with the dtype's smallest value; average pooling counts the padding unless count_include_pad is false.
  // ceil_mode rounds the output size up (PyTorch's and tinygrad's rule): a last window that starts inside the
  // input or its left padding is kept, and average pooling divides it by the cells it covers.
  Tensor max_pool2d(PerAxis kernel_size = {2, 2}, PerAxis stride = {}, PerAxis dilation = 1, PerAxis padding = 0,
                    bool ceil_mode = false) const;
  Tensor avg_pool2d(PerAxis kernel_size = {2, 2}, PerAxis stride = {}, PerAxis dilation = 1, PerAxis padding = 0,
                    bool ceil_mode = false, bool count_include_pad = true) const;

  // out[i][j][k] = x[i][index[i][j][k]][k] for dim 1 (index: int, same rank; x at least as large off `dim`).
  Tensor gather(int64_t dim, const Tensor& index) const;
  // numpy's take (tinygrad's x[idx] on one axis): shape x.shape[:axis] + idx.shape + x.shape[axis + 1:];
  // negative indices count from the end.
  Tensor index(const Tensor& idx, int64_t axis = 0) const;
  Tensor operator[](const Tensor& idx) const { return index(idx, 0); }
  Tensor one_hot(int64_t num_classes) const;  // int32, a new last axis
  // int32; the first index among ties. No axis: of the flattened tensor.
  Tensor argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor cumsum(int64_t axis = 0) const;

  Tensor log_softmax(int64_t axis = -1) const;
  Tensor logsumexp(const Axes& axes = {}, bool keepdim = false) const;
  // this: logits (..., classes); Y: int labels (...). Labels equal to ignore_index (unless -1) add nothing
  // and are not counted by the mean.
  Tensor sparse_categorical_crossentropy(const Tensor& Y, int64_t ignore_index = -1, double label_smoothing = 0.0,
                                         Reduction reduction = Reduction::mean) const;
  Tensor binary_crossentropy(const Tensor& Y, Reduction reduction = Reduction::mean) const;  // this: probabilities
  Tensor binary_crossentropy_logits(const Tensor& Y, Reduction reduction = Reduction::mean,
                                    const std::optional<Tensor>& pos_weight = std::nullopt) const;
  Tensor layernorm(const std::vector<int64_t>& axes = {-1}, double eps = 1e-5) const;
  Tensor layernorm(int64_t axis, double eps = 1e-5) const { return layernorm(std::vector<int64_t>{axis}, eps); }
  // (x - mean) * weight * invstd + bias; mean, weight, bias and invstd have the sizes of `axes`.
  Tensor batchnorm(const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, const Tensor& mean,
                   const Tensor& invstd, const std::vector<int64_t>& axes = {1}) const;

  Tensor clip(std::optional<Number> min, std::optional<Number> max) const;
  Tensor square() const;
  Tensor sign() const;
  // Integer scalar exponents multiply (an int tensor stays int; a negative one needs a float base); others are
  // exp2(y * log2|x|), negated for a negative base and an odd integer exponent, NaN for a negative base and a
  // non-integer exponent; x ** 0 is 1.
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(Number exponent) const;
  Tensor rsqrt() const;
  Tensor softplus(double beta = 1.0) const;
  Tensor gelu() const;  // the tanh approximation, tinygrad's default
  Tensor leaky_relu(double neg_slope = 0.01) const;
  Tensor elu(double alpha = 1.0) const;

 private:
  // The graph behind the handle, and the handle of a graph: the project's own layers reach them through
  // compiler/tensor/tensor_graph.h, so that the IR stays out of the user's API.
  friend struct TensorGraph;
  explicit Tensor(UPtr u);
  const UPtr& uop() const {
    if (!node_) empty_handle();
    return node_->uop;
  }
  // A scalar as a tensor of this tensor's shape, typed by the Python-scalar rules.
  Tensor scalar_like(Number s) const;
  // threefry 2x32 of this uint64 tensor (counter: low word first) under `key` (uint64, low word k0), as
  // tinygrad's UOp.threefry: the generator's core.
  Tensor threefry(const Tensor& key) const;

  struct Node {
    UPtr uop;
    std::string device;  // canonical; empty for a graph of constants, which fits every device
    // On several devices (docs/multi_device.md#device-tuples): the devices, the shard axis its graph says (-1: the
    // whole tensor on each; compiler/ir/shard.h), and once realized the per-device buffer view (RESHAPE of a
    // BUFFER on the device tuple, piece shape).
    std::vector<std::string> devices;
    int64_t axis = -1;
    UPtr data;
    // Autograd: whether backward() computes a gradient for this tensor, and the one it accumulated.
    bool requires_grad = false;
    std::shared_ptr<Node> grad;
  };
  std::shared_ptr<Node> node_;
  static inline bool training_ = false;

  Tensor(UPtr u, std::string device);
  // A graph on `devices` (empty: one device, `device`), its shard axis read from the graph (compiler/ir/shard.h);
  // the axes of `operands`, whose graphs it is built on, are known, so that only the new nodes are read.
  static Tensor on_devices(UPtr u, const std::vector<std::string>& devices, const std::string& device,
                           const std::vector<const Tensor*>& operands = {});
  // A graph built on this tensor, on its device(s).
  Tensor like(UPtr u) const { return on_devices(std::move(u), node_->devices, node_->device, {this}); }
  bool multi() const { return !node_->devices.empty(); }
  // Operands of an op between tensors brought onto common devices: an unsharded tensor meeting a
  // sharded one is copied to each of its devices. *devices (and *shard_axis when asked) get the result's (the
  // axis counted in an output of `rank` axes). rg::Error naming `who` for different device tuples or shard axes.
  static std::vector<Tensor> align(const char* who, const std::vector<const Tensor*>& tensors, size_t rank,
                                   std::vector<std::string>* devices, int64_t* shard_axis = nullptr);
  Tensor replicate(const std::vector<std::string>& devices) const;
  // A sharded tensor whole on every device of its tuple; a replicated one sharded on `axis` again if it divides.
  Tensor allgather() const;
  Tensor resharded(int64_t axis) const;
  // Per-device partials of a reduce over the shard axis, combined on every device (compiler/schedule/allreduce.h).
  Tensor allreduce(Op op, const std::vector<bool>& reduced, bool keepdim) const;
  // The one device of operands of `who` (constants fit any); rg::Error naming both when they differ.
  static std::string common_device(const char* who, const std::vector<const Tensor*>& tensors);

  static Tensor arange_impl(double start, double stop, double step, DType dt);
  static Tensor from_bytes(const void* data, size_t bytes, DType dt, const Shape& shape, const char* type_name,
                           const std::string& device);
  void read_bytes(void* out, size_t bytes, DType want, const char* type_name) const;
  Tensor reduce(Op op, const std::vector<int64_t>& axes, bool keepdim, const char* who) const;
  Tensor binary(Op op, const Tensor& o, const char* who) const;

  // Autograd (gradient.cc): the tensors that require a gradient, by handle; the loss's gradient checked
  // and on its devices; the parameters' gradients like the parameters.
  explicit Tensor(std::shared_ptr<Node> node) : node_(std::move(node)) {}
  [[noreturn]] static void empty_handle();  // the error of a default-constructed Tensor's use
  void check_one_element() const;
  static std::vector<std::weak_ptr<Node>>& grad_registry();
  Tensor seed_of(const char* who, const std::optional<Tensor>& given) const;
  std::vector<Tensor> gradients_for(const std::vector<Tensor>& params, const Tensor& seed) const;
  Tensor& backward_impl(const std::optional<Tensor>& gradient);
  friend std::vector<Tensor> gradient(const Tensor& loss, const std::vector<Tensor>& params,
                                      const std::optional<Tensor>& loss_gradient);
  friend class Jit;  // replays name a realized tensor's storage, its per-device pieces on a tuple
};

struct Conv2dOptions {
  std::optional<Tensor> bias = std::nullopt;
  int64_t groups = 1;
  Tensor::PerAxis stride = 1, dilation = 1, padding = 0;
};
inline Tensor Tensor::conv2d(const Tensor& weight, const Conv2dOptions& o) const {
  return conv2d(weight, o.bias, o.groups, o.stride, o.dilation, o.padding);
}

// Scalars on either side; the scalar follows the Python-scalar promotion rules.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator<(const Tensor& a, const Tensor& b);
Tensor operator<=(const Tensor& a, const Tensor& b);
Tensor operator>(const Tensor& a, const Tensor& b);
Tensor operator>=(const Tensor& a, const Tensor& b);
Tensor operator==(const Tensor& a, const Tensor& b);
Tensor operator!=(const Tensor& a, const Tensor& b);
Tensor operator&(const Tensor& a, const Tensor& b);  // bitwise_and (logical on bool tensors)
Tensor operator|(const Tensor& a, const Tensor& b);  // bitwise_or
Tensor operator^(const Tensor& a, const Tensor& b);  // bitwise_xor
Tensor operator%(const Tensor& a, const Tensor& b);  // mod: the divisor's sign, as Python's
Tensor operator~(const Tensor& a);                   // bitwise_not
// Shape, dtype, device and values (`Tensor([[1, 2], [3, 4]], shape=(2, 2), dtype=int32, device=CPU)`),
// realizing it; past 1000 elements each axis shows its first and last 3 entries around `...`.
std::ostream& operator<<(std::ostream& out, const Tensor& t);
// The operators that take a scalar on either side (defined in tensor_ops.cc from the same list).
#define RG_FOR_EACH_SCALAR_OP(X) X(+) X(-) X(*) X(/) X(<) X(<=) X(>) X(>=) X(==) X(!=) X(%) X(^)
#define RG_DECLARE_SCALAR_OP(OP)                         \
  Tensor operator OP(const Tensor& a, Tensor::Number b); \
  Tensor operator OP(Tensor::Number a, const Tensor& b);
RG_FOR_EACH_SCALAR_OP(RG_DECLARE_SCALAR_OP)
#undef RG_DECLARE_SCALAR_OP

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
inline Tensor where(const Tensor& cond, const Tensor& a, Tensor::Number b) { return cond.where(a, b); }
inline Tensor where(const Tensor& cond, Tensor::Number a, const Tensor& b) { return cond.where(a, b); }
inline Tensor where(const Tensor& cond, Tensor::Number a, Tensor::Number b) { return cond.where(a, b); }
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& base, const Tensor& exponent);
Tensor pow(const Tensor& base, Tensor::Number exponent);
Tensor pow(Tensor::Number base, const Tensor& exponent);

// --- autograd ---
// The gradient of `loss` with respect to each of `params` (lazy tensors, like the parameters: on their
// device, sharded the same way), without touching grad(). A parameter the loss does not depend on gets
// zeros, as tinygrad. Without loss_gradient the loss must be a scalar. Only float tensors have gradients.
std::vector<Tensor> gradient(const Tensor& loss, const std::vector<Tensor>& params,
                             const std::optional<Tensor>& loss_gradient = std::nullopt);

// --- settings ---
// CPU workers for kernels compiled from now on (tinygrad's global settings are context variables; ours
// are functions): a large kernel splits an output axis over n workers. By default the environment
// variable RG_THREADS, else the machine's cores. n < 1 is an rg::Error. The runtime's own function
// (runtime/thread_pool.h), declared here for the Tensor API.
void set_thread_count(int n);
int thread_count();  // the current count

// The dtype of a C++ element type, for from_vector/to_vector.
template <class E>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<E, bool>)
    return dtypes::bool_;
  else if constexpr (std::is_same_v<E, float>)
    return dtypes::float32;
  else if constexpr (std::is_same_v<E, double>)
    return dtypes::float64;
#ifdef __FLT16_MAX__  // compilers with a _Float16 type (gcc; not clang 14 on x86)
  else if constexpr (std::is_same_v<E, _Float16>)
    return dtypes::float16;
#endif
  else if constexpr (std::is_integral_v<E> && std::is_signed_v<E>)
    return sizeof(E) == 1   ? dtypes::int8
           : sizeof(E) == 2 ? dtypes::int16
           : sizeof(E) == 4 ? dtypes::int32
                            : dtypes::int64;
  else if constexpr (std::is_integral_v<E> && std::is_unsigned_v<E>)
    return sizeof(E) == 1   ? dtypes::uint8
           : sizeof(E) == 2 ? dtypes::uint16
           : sizeof(E) == 4 ? dtypes::uint32
                            : dtypes::uint64;
  else
    static_assert(sizeof(E) == 0, "no rulegrad dtype for this C++ type");
}

template <class E>
Tensor Tensor::from_vector(const std::vector<E>& data, const Shape& shape) {
  return from_vector(data, shape, default_device());
}

template <class E>
Tensor Tensor::from_vector(const std::vector<E>& data, const Shape& shape, const std::string& device) {
  if constexpr (std::is_same_v<E, bool>) {  // std::vector<bool> is packed: store one byte per element
    std::vector<uint8_t> bytes(data.begin(), data.end());
    return from_bytes(bytes.data(), bytes.size(), dtypes::bool_, shape, "bool", device);
  } else {
    return from_bytes(data.data(), data.size() * sizeof(E), dtype_of<E>(), shape, dtype_of<E>().name().c_str(), device);
  }
}

template <class E>
std::vector<E> Tensor::to_vector() const {
  const size_t n = static_cast<size_t>(numel());
  if constexpr (std::is_same_v<E, bool>) {
    std::vector<uint8_t> bytes(n);
    read_bytes(bytes.data(), n, dtypes::bool_, "bool");
    return std::vector<bool>(bytes.begin(), bytes.end());
  } else {
    std::vector<E> out(n);
    read_bytes(out.data(), n * sizeof(E), dtype_of<E>(), dtype_of<E>().name().c_str());
    return out;
  }
}

template <class T>
T Tensor::item() const {
  check_one_element();
  return cast(dtype_of<T>()).template to_vector<T>()[0];
}

}  // namespace rg
