// The TFLite builtin operators a policy model may use: each one's checks at
// load (shapes, types, options, what broadcasting it needs), its
// preparation, and its kernel, evaluated on the model's arena. One file on
// purpose (about 1,100 lines): the operators share the same helpers (shape
// arithmetic, broadcast strides, the per-type dispatch macros), and the two
// switches over the operator code (prepareOperator, runOperator) are the
// one place that says what a model may use and how each is run; split by
// operator, each file would be a few dozen lines that a reader must hold
// against all the others.
#include "Operators.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <type_traits>

namespace mlgo::model {
namespace {

// BuiltinOperator codes (TFLite schema).
enum Code : int {
  ADD = 0,
  CONCATENATION = 2,
  FULLY_CONNECTED = 9,
  MUL = 18,
  RELU = 19,
  RELU6 = 21,
  RESHAPE = 22,
  TANH = 28,
  GATHER = 36,
  TRANSPOSE = 39,
  MEAN = 40,
  SUB = 41,
  DIV = 42,
  SQUEEZE = 43,
  CAST = 53,
  ARG_MAX = 56,
  SELECT = 64,
  TILE = 69,
  EXPAND_DIMS = 70,
  EQUAL = 71,
  LOG = 73,
  SQRT = 75,
  SQUARE = 92,
  ZEROS_LIKE = 93,
  FILL = 94,
  SQUARED_DIFFERENCE = 99,
  ABS = 101,
  SELECT_V2 = 123,
  BROADCAST_TO = 130,
  BUCKETIZE = 147,
  MULTINOMIAL = 149,
};

// BuiltinOptions union type ids.
enum Options : uint8_t {
  NoOptions = 0,
  FullyConnectedOptions = 8,
  ConcatenationOptions = 10,
  AddOptions = 11,
  ReshapeOptions = 17,
  MulOptions = 21,
  GatherOptions = 23,
  TransposeOptions = 26,
  ReducerOptions = 27,
  SubOptions = 28,
  DivOptions = 29,
  SqueezeOptions = 30,
  CastOptions = 37,
  ArgMaxOptions = 40,
  SelectOptions = 47,
  TileOptions = 51,
  ExpandDimsOptions = 52,
  EqualOptions = 53,
  SquareOptions = 66,
  ZerosLikeOptions = 67,
  FillOptions = 68,
  AbsOptions = 78,
  SquaredDifferenceOptions = 76,
  SelectV2Options = 98,
  BroadcastToOptions = 104,
  RandomOptions = 114,
  BucketizeOptions = 115,
};

struct Known {
  int Code;
  const char *Name;
  uint8_t Options;
};
constexpr Known KnownOps[] = {
    {ADD, "ADD", AddOptions},
    {CONCATENATION, "CONCATENATION", ConcatenationOptions},
    {FULLY_CONNECTED, "FULLY_CONNECTED", FullyConnectedOptions},
    {MUL, "MUL", MulOptions},
    {RELU, "RELU", NoOptions},
    {RELU6, "RELU6", NoOptions},
    {RESHAPE, "RESHAPE", ReshapeOptions},
    {TANH, "TANH", NoOptions},
    {GATHER, "GATHER", GatherOptions},
    {TRANSPOSE, "TRANSPOSE", TransposeOptions},
    {MEAN, "MEAN", ReducerOptions},
    {SUB, "SUB", SubOptions},
    {DIV, "DIV", DivOptions},
    {SQUEEZE, "SQUEEZE", SqueezeOptions},
    {CAST, "CAST", CastOptions},
    {ARG_MAX, "ARG_MAX", ArgMaxOptions},
    {SELECT, "SELECT", SelectOptions},
    {TILE, "TILE", TileOptions},
    {EXPAND_DIMS, "EXPAND_DIMS", ExpandDimsOptions},
    {EQUAL, "EQUAL", EqualOptions},
    {LOG, "LOG", NoOptions},
    {SQRT, "SQRT", NoOptions},
    {SQUARE, "SQUARE", SquareOptions},
    {ZEROS_LIKE, "ZEROS_LIKE", ZerosLikeOptions},
    {FILL, "FILL", FillOptions},
    {SQUARED_DIFFERENCE, "SQUARED_DIFFERENCE", SquaredDifferenceOptions},
    {ABS, "ABS", AbsOptions},
    {SELECT_V2, "SELECT_V2", SelectV2Options},
    {BROADCAST_TO, "BROADCAST_TO", BroadcastToOptions},
    {BUCKETIZE, "BUCKETIZE", BucketizeOptions},
    {MULTINOMIAL, "MULTINOMIAL", RandomOptions},
};

const Known *known(int code) {
  for (const Known &k : KnownOps)
    if (k.Code == code)
      return &k;
  return nullptr;
}

[[noreturn]] void refuse(const TFLiteModel::Op &op, const std::string &why) { throw FlatBufferError{why}; }

const char *activationName(int a) {
  static const char *names[] = {"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH"};
  return a >= 0 && a <= 4 ? names[a] : "?";
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

std::vector<size_t> strides(const std::vector<int64_t> &shape) {
  std::vector<size_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    s[i - 1] = s[i] * static_cast<size_t>(shape[i]);
  return s;
}

// Collapses nested loops over `dims` (outermost first), each operand moving
// by `steps[d][k]` elements along loop d, into a Walk. The product of `dims`
// is a tensor's element count, so it is bounded.
Walk makeWalk(const std::vector<int64_t> &dims, const std::vector<std::array<size_t, Walk::MaxOperands>> &steps) {
  Walk w;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    w.Elements = 0;
    return w;
  }
  for (size_t d = 0; d < dims.size(); ++d) {
    size_t n = static_cast<size_t>(dims[d]);
    w.Elements *= n;
    if (n == 1)
      continue;
    if (!w.Dims.empty()) {
      // The outer loop continues the inner one in every operand: one loop.
      bool contiguous = true;
      for (size_t k = 0; k < Walk::MaxOperands; ++k)
        contiguous = contiguous && w.Strides.back()[k] == steps[d][k] * n;
      if (contiguous) {
        w.Dims.back() *= n;
        w.Strides.back() = steps[d];
        continue;
      }
    }
    w.Dims.push_back(n);
    w.Strides.push_back(steps[d]);
  }
  return w;
}

// The walk over `out` that reads each of `operands` broadcast to it (numpy
// rules: trailing dimensions match or are 1).
Walk broadcastWalk(const TFLiteModel::Op &op, const std::vector<const std::vector<int64_t> *> &operands,
                   const std::vector<int64_t> &out) {
  std::vector<std::array<size_t, Walk::MaxOperands>> steps(out.size(), std::array<size_t, Walk::MaxOperands>{});
  for (size_t k = 0; k < operands.size(); ++k) {
    const std::vector<int64_t> &in = *operands[k];
    if (in.size() > out.size())
      refuse(op, "cannot broadcast " + shapeText(in) + " to " + shapeText(out));
    size_t lead = out.size() - in.size();
    std::vector<size_t> inStrides = strides(in);
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] != 1 && in[i] != out[lead + i])
        refuse(op, "cannot broadcast " + shapeText(in) + " to " + shapeText(out));
      steps[lead + i][k] = in[i] == 1 ? 0 : inStrides[i];
    }
  }
  return makeWalk(out, steps);
}

std::vector<int64_t> broadcastShape(const TFLiteModel::Op &op, std::vector<int64_t> a, std::vector<int64_t> b) {
  if (a.size() < b.size())
    std::swap(a, b);
  std::vector<int64_t> out = a;
  size_t lead = a.size() - b.size();
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t x = a[lead + i], y = b[i];
    if (x != y && x != 1 && y != 1)
      refuse(op, "cannot broadcast " + shapeText(a) + " with " + shapeText(b));
    out[lead + i] = x == 1 ? y : x;
  }
  return out;
}

std::vector<int64_t> constInts(const TFLiteModel::Op &op, const TensorInfo &t, llvm::StringRef bytes,
                               LoadBudget &budget, const char *what) {
  if (bytes.empty() && t.Elements)
    refuse(op, std::string(what) + " must be a constant tensor (static shapes only)");
  budget.charge(t.Elements, sizeof(int64_t), what);
  std::vector<int64_t> values(t.Elements);
  for (size_t i = 0; i < t.Elements; ++i) {
    if (t.Type == DType::Int32) {
      int32_t v;
      std::memcpy(&v, bytes.data() + 4 * i, 4);
      values[i] = v;
    } else if (t.Type == DType::Int64) {
      std::memcpy(&values[i], bytes.data() + 8 * i, 8);
    } else {
      refuse(op, std::string(what) + " must be int32 or int64, not " + dtypeName(t.Type));
    }
  }
  return values;
}

int64_t normaliseAxis(const TFLiteModel::Op &op, int64_t axis, size_t rank) {
  int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    refuse(op, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + r : axis;
}

void expectShape(const TFLiteModel::Op &op, const TensorInfo &out, const std::vector<int64_t> &shape) {
  if (out.Shape != shape)
    refuse(op, "output '" + out.Name + "' has shape " + shapeText(out.Shape) + ", but the operator makes " +
                   shapeText(shape));
}

void expectType(const TFLiteModel::Op &op, const TensorInfo &t, std::initializer_list<DType> allowed) {
  for (DType d : allowed)
    if (t.Type == d)
      return;
  refuse(op, "tensor '" + t.Name + "' has type " + dtypeName(t.Type) + ", which this operator does not take");
}

// Integer arithmetic wraps, as TFLite's kernels do on every machine we run
// on; written in the unsigned type, where wrapping is defined (signed
// overflow is undefined behaviour).
template <typename T> inline T wrapAdd(T x, T y) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) + static_cast<std::make_unsigned_t<T>>(y));
  else
    return x + y;
}
template <typename T> inline T wrapSub(T x, T y) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) - static_cast<std::make_unsigned_t<T>>(y));
  else
    return x - y;
}
template <typename T> inline T wrapMul(T x, T y) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::make_unsigned_t<T>>(x) * static_cast<std::make_unsigned_t<T>>(y));
  else
    return x * y;
}

template <typename T> inline T activate(T x, int activation) {
  if constexpr (std::is_same_v<T, float>) {
    switch (activation) {
    case 1:
      return x < 0 ? 0.0f : x;
    case 2:
      return std::min(1.0f, std::max(-1.0f, x));
    case 3:
      return std::min(6.0f, std::max(0.0f, x));
    case 4:
      return std::tanh(x);
    default:
      return x;
    }
  } else {
    switch (activation) {
    case 1:
      return x < 0 ? T(0) : x;
    case 3:
      return std::min(T(6), std::max(T(0), x));
    default:
      return x;
    }
  }
}

template <typename T> const T *in(const TFLiteModel::Op &op, int i) {
  return reinterpret_cast<const T *>(op.InData[i]);
}
template <typename T> T *out(const TFLiteModel::Op &op) { return reinterpret_cast<T *>(op.OutData); }

using Step = std::array<size_t, Walk::MaxOperands>;

// Runs `row(start, n, base, step)` for each innermost run of `w`: driving
// elements [start, start + n), operand k's first element at base[k], then
// every step[k] elements.
template <typename Row> inline void walk(const Walk &w, Row &&row) {
  size_t base[Walk::MaxOperands] = {};
  size_t loops = w.Dims.size();
  if (w.Elements == 0)
    return;
  if (loops == 0) {
    row(size_t(0), size_t(1), base, Step{});
    return;
  }
  size_t n = w.Dims[loops - 1];
  const Step &inner = w.Strides[loops - 1];
  if (loops == 1) { // equal shapes, a scalar operand, a plain copy: the common cases
    row(size_t(0), n, base, inner);
    return;
  }
  size_t index[Walk::MaxLoops]; // only the outer loops' counters: this runs per operator per decision
  std::fill_n(index, loops - 1, size_t(0));
  for (size_t start = 0; start < w.Elements; start += n) {
    row(start, n, base, inner);
    for (size_t d = loops - 1; d-- > 0;) {
      for (size_t k = 0; k < Walk::MaxOperands; ++k)
        base[k] += w.Strides[d][k];
      if (++index[d] < w.Dims[d])
        break;
      for (size_t k = 0; k < Walk::MaxOperands; ++k)
        base[k] -= w.Strides[d][k] * w.Dims[d];
      index[d] = 0;
    }
  }
}

// Element-wise f over two broadcast operands; runs of equal shapes and of a
// repeated element get their own loops, which the compiler vectorises.
template <typename T, typename F> void binary(const TFLiteModel::Op &op, F f) {
  using R = decltype(f(T(), T()));
  const T *a = in<T>(op, 0), *b = in<T>(op, 1);
  R *o = out<R>(op);
  walk(op.Steps, [&](size_t start, size_t n, const size_t *base, const Step &step) {
    const T *x = a + base[0], *y = b + base[1];
    R *z = o + start;
    if (step[0] == 1 && step[1] == 1) {
      for (size_t i = 0; i < n; ++i)
        z[i] = f(x[i], y[i]);
    } else if (step[0] == 1 && step[1] == 0) {
      T c = *y;
      for (size_t i = 0; i < n; ++i)
        z[i] = f(x[i], c);
    } else if (step[0] == 0 && step[1] == 1) {
      T c = *x;
      for (size_t i = 0; i < n; ++i)
        z[i] = f(c, y[i]);
    } else {
      for (size_t i = 0; i < n; ++i)
        z[i] = f(x[i * step[0]], y[i * step[1]]);
    }
  });
}

template <typename T> void arithmetic(const TFLiteModel::Op &op) {
  int act = op.Activation;
  switch (op.Code) {
  case ADD:
    return binary<T>(op, [act](T x, T y) { return activate<T>(wrapAdd(x, y), act); });
  case SUB:
    return binary<T>(op, [act](T x, T y) { return activate<T>(wrapSub(x, y), act); });
  case MUL:
    return binary<T>(op, [act](T x, T y) { return activate<T>(wrapMul(x, y), act); });
  case DIV:
    return binary<T>(op, [act](T x, T y) { return activate<T>(x / y, act); });
  case SQUARED_DIFFERENCE:
    return binary<T>(op, [](T x, T y) { return (x - y) * (x - y); });
  }
}

// Bool tensors are read and written as bytes (uint8_t: no other tensor type
// uses it): any non-zero byte is true, and results are 0 or 1. Reading a byte
// other than 0 or 1 as a C++ bool would be undefined behaviour, and a model's
// constants and its callers' inputs may hold any byte.
template <typename T> void equal(const TFLiteModel::Op &op) {
  if constexpr (std::is_same_v<T, uint8_t>)
    binary<T>(op, [](T x, T y) -> uint8_t { return (x != 0) == (y != 0); });
  else
    binary<T>(op, [](T x, T y) -> uint8_t { return x == y; });
}

template <typename From, typename To> void castAs(const TFLiteModel::Op &op) {
  const From *a = in<From>(op, 0);
  To *o = out<To>(op);
  for (size_t i = 0; i < op.N; ++i) {
    if constexpr (std::is_same_v<From, uint8_t>) // from bool
      o[i] = a[i] != 0 ? To(1) : To(0);
    else if constexpr (std::is_same_v<To, uint8_t>) // to bool
      o[i] = a[i] != From(0);
    else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
      // NaN and values out of To's range give To's minimum, as x86's
      // conversion instruction does under TFLite (in C++ it is undefined).
      double v = static_cast<double>(a[i]);
      bool fits = v > static_cast<double>(std::numeric_limits<To>::min()) - 1.0 &&
                  v < static_cast<double>(std::numeric_limits<To>::max()) + 1.0;
      o[i] = fits ? static_cast<To>(a[i]) : std::numeric_limits<To>::min();
    } else
      o[i] = static_cast<To>(a[i]);
  }
}

template <typename From> void castFrom(const TFLiteModel::Op &op) {
  switch (op.OutType) {
  case DType::Float32:
    return castAs<From, float>(op);
  case DType::Int32:
    return castAs<From, int32_t>(op);
  case DType::Int64:
    return castAs<From, int64_t>(op);
  case DType::Bool:
    return castAs<From, uint8_t>(op);
  }
}

template <typename T> void bucketize(const TFLiteModel::Op &op) {
  const T *a = in<T>(op, 0);
  int32_t *o = out<int32_t>(op);
  const float *begin = op.Boundaries.data(), *end = begin + op.Boundaries.size();
  for (size_t i = 0; i < op.N; ++i) {
    float v = static_cast<float>(a[i]); // TFLite compares the value as a float
    o[i] = static_cast<int32_t>(std::upper_bound(begin, end, v) - begin);
  }
}

template <typename T> void argMax(const TFLiteModel::Op &op) {
  const T *a = in<T>(op, 0);
  for (size_t o = 0; o < op.Outer; ++o)
    for (size_t k = 0; k < op.Inner; ++k) {
      size_t best = 0;
      T bestValue = a[o * op.Axis * op.Inner + k];
      for (size_t j = 1; j < op.Axis; ++j) {
        T v = a[(o * op.Axis + j) * op.Inner + k];
        if (v > bestValue) { // strict: the first index wins ties, as in TFLite
          bestValue = v;
          best = j;
        }
      }
      if (op.Int64Index)
        out<int64_t>(op)[o * op.Inner + k] = static_cast<int64_t>(best);
      else
        out<int32_t>(op)[o * op.Inner + k] = static_cast<int32_t>(best);
    }
}

// Eight partial sums per dot product, so the compiler can vectorise it
// (TFLite's own kernels also sum in a different order than a naive loop).
inline float dot(const float *a, const float *b, size_t n) {
  float part[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (size_t k = 0; k < 8; ++k)
      part[k] += a[i + k] * b[i + k];
  float sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
  for (; i < n; ++i)
    sum += a[i] * b[i];
  return sum;
}

void fullyConnected(const TFLiteModel::Op &op) {
  const float *x = in<float>(op, 0), *w = in<float>(op, 1);
  const float *bias = op.InData.size() > 2 && op.InData[2] ? in<float>(op, 2) : nullptr;
  float *o = out<float>(op);
  for (size_t r = 0; r < op.Rows; ++r) {
    const float *row = x + r * op.Cols;
    for (size_t u = 0; u < op.Units; ++u) {
      float sum = dot(row, w + u * op.Cols, op.Cols);
      if (bias)
        sum += bias[u];
      o[r * op.Units + u] = activate<float>(sum, op.Activation);
    }
  }
}

template <typename T> void unary(const TFLiteModel::Op &op) {
  const T *a = in<T>(op, 0);
  T *o = out<T>(op);
  for (size_t i = 0; i < op.N; ++i) {
    T x = a[i];
    switch (op.Code) {
    case ABS:
      o[i] = x < T(0) ? wrapSub(T(0), x) : x;
      break;
    case SQUARE:
      o[i] = wrapMul(x, x);
      break;
    case RELU:
      o[i] = activate<T>(x, 1);
      break;
    case RELU6:
      o[i] = activate<T>(x, 3);
      break;
    default:
      if constexpr (std::is_same_v<T, float>) {
        if (op.Code == SQRT)
          o[i] = std::sqrt(x);
        else if (op.Code == LOG)
          o[i] = std::log(x);
        else if (op.Code == TANH)
          o[i] = std::tanh(x);
      }
    }
  }
}

// TILE, BROADCAST_TO, TRANSPOSE, FILL: the output in order, read from the input along the walk.
void walkCopy(const TFLiteModel::Op &op, size_t size) {
  const char *a = op.InData[0];
  walk(op.Steps, [&](size_t start, size_t n, const size_t *base, const Step &step) {
    char *o = op.OutData + start * size;
    const char *from = a + base[0] * size;
    if (step[0] == 1) {
      std::memcpy(o, from, n * size);
    } else {
      for (size_t i = 0; i < n; ++i)
        std::memcpy(o + i * size, from + i * step[0] * size, size);
    }
  });
}

void select(const TFLiteModel::Op &op, size_t size) {
  const uint8_t *c = in<uint8_t>(op, 0); // bool bytes: non-zero is true
  const char *x = op.InData[1], *y = op.InData[2];
  walk(op.Steps, [&](size_t start, size_t n, const size_t *base, const Step &step) {
    char *o = op.OutData + start * size;
    for (size_t i = 0; i < n; ++i) {
      const char *from =
          c[base[0] + i * step[0]] ? x + (base[1] + i * step[1]) * size : y + (base[2] + i * step[2]) * size;
      std::memcpy(o + i * size, from, size);
    }
  });
}

template <typename T> void gather(const TFLiteModel::Op &op, size_t size, size_t indices, std::string &error) {
  const T *idx = in<T>(op, 1);
  size_t chunk = op.Inner * size;
  for (size_t o = 0; o < op.Outer; ++o)
    for (size_t k = 0; k < indices; ++k) {
      T i = idx[k];
      if (i < 0 || static_cast<size_t>(i) >= op.Axis) {
        error = "GATHER index " + std::to_string(i) + " is out of range [0, " + std::to_string(op.Axis) + ")";
        return;
      }
      std::memcpy(op.OutData + (o * indices + k) * chunk, op.InData[0] + (o * op.Axis + i) * chunk, chunk);
    }
}

void mean(const TFLiteModel::Op &op) {
  // The walk drives the input in order; operand 0 is the output element each adds to.
  const float *a = in<float>(op, 0);
  float *o = out<float>(op);
  std::fill(o, o + op.N, 0.0f);
  walk(op.Steps, [&](size_t start, size_t n, const size_t *base, const Step &step) {
    const float *x = a + start;
    float *y = o + base[0];
    for (size_t i = 0; i < n; ++i)
      y[i * step[0]] += x[i];
  });
  float count = static_cast<float>(op.Steps.Elements / std::max<size_t>(1, op.N));
  for (size_t i = 0; i < op.N; ++i)
    o[i] /= count;
}

void multinomial(TFLiteModel::Op &op) {
  const float *logits = in<float>(op, 0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (size_t r = 0; r < op.Rows; ++r) {
    const float *row = logits + r * op.Cols;
    float top = *std::max_element(row, row + op.Cols);
    double total = 0;
    for (size_t c = 0; c < op.Cols; ++c)
      total += std::exp(static_cast<double>(row[c] - top));
    for (size_t s = 0; s < op.Samples; ++s) {
      double target = uniform(*op.Random) * total, sum = 0;
      size_t pick = op.Cols - 1;
      for (size_t c = 0; c < op.Cols; ++c) {
        sum += std::exp(static_cast<double>(row[c] - top));
        if (target < sum) {
          pick = c;
          break;
        }
      }
      if (op.OutType == DType::Int64)
        out<int64_t>(op)[r * op.Samples + s] = static_cast<int64_t>(pick);
      else
        out<int32_t>(op)[r * op.Samples + s] = static_cast<int32_t>(pick);
    }
  }
}

#define MLGO_DISPATCH(type, call)                                                                                      \
  switch (type) {                                                                                                      \
  case DType::Float32: {                                                                                               \
    using T = float;                                                                                                   \
    call;                                                                                                              \
    break;                                                                                                             \
  }                                                                                                                    \
  case DType::Int32: {                                                                                                 \
    using T = int32_t;                                                                                                 \
    call;                                                                                                              \
    break;                                                                                                             \
  }                                                                                                                    \
  case DType::Int64: {                                                                                                 \
    using T = int64_t;                                                                                                 \
    call;                                                                                                              \
    break;                                                                                                             \
  }                                                                                                                    \
  case DType::Bool: {                                                                                                  \
    using T = uint8_t; /* bool tensors are bytes: see equal() */                                                       \
    call;                                                                                                              \
    break;                                                                                                             \
  }                                                                                                                    \
  }

// The numeric operators' types (prepare() admits no bool for them).
#define MLGO_NUMERIC_DISPATCH(type, fn, op)                                                                            \
  switch (type) {                                                                                                      \
  case DType::Float32:                                                                                                 \
    fn<float>(op);                                                                                                     \
    break;                                                                                                             \
  case DType::Int32:                                                                                                   \
    fn<int32_t>(op);                                                                                                   \
    break;                                                                                                             \
  default:                                                                                                             \
    fn<int64_t>(op);                                                                                                   \
    break;                                                                                                             \
  }

} // namespace

const char *builtinName(int code) {
  const Known *k = known(code);
  return k ? k->Name : nullptr;
}

void prepareOperator(TFLiteModel::Op &op, uint8_t optionsType, const std::optional<FBTable> &options,
                     const std::vector<TensorInfo> &tensors, const std::function<llvm::StringRef(int)> &constant,
                     LoadBudget &budget) {
  const Known *k = known(op.Code);
  if (!k)
    throw FlatBufferError{"builtin operator " + std::to_string(op.Code) + " is not implemented by this evaluator"};
  op.Label = k->Name;
  if (optionsType != NoOptions && optionsType != k->Options)
    refuse(op, "has options of union type " + std::to_string(optionsType) + ", expected " + std::to_string(k->Options));
  auto need = [&](size_t minIn, size_t maxIn, size_t outs) {
    if (op.In.size() < minIn || op.In.size() > maxIn || op.Out.size() != outs)
      refuse(op, "has " + std::to_string(op.In.size()) + " inputs and " + std::to_string(op.Out.size()) + " outputs");
    for (size_t i = 0; i < op.In.size(); ++i)
      if (op.In[i] < 0 && !(op.Code == FULLY_CONNECTED && i == 2))
        refuse(op, "input " + std::to_string(i) + " is missing");
  };
  auto opt = [&](unsigned field, auto fallback) {
    return options ? options->scalar<decltype(fallback)>(field, fallback) : fallback;
  };
  auto checkActivation = [&](int a) {
    // TFLite's kernels apply only these; others (TANH, SIGN_BIT) are refused rather than guessed.
    if (a < 0 || a > 3)
      refuse(op, std::string("fused activation ") + (a == 4 ? "TANH" : std::to_string(a)) + " is not implemented");
    op.Activation = a;
    if (a)
      op.Label += std::string("(") + activationName(a) + ")";
  };
  auto T = [&](int i) -> const TensorInfo & { return tensors[static_cast<size_t>(i)]; };

  switch (op.Code) {
  case ADD:
  case SUB:
  case MUL:
  case DIV:
  case SQUARED_DIFFERENCE:
  case EQUAL: {
    need(2, 2, 1);
    const TensorInfo &a = T(op.In[0]), &b = T(op.In[1]), &o = T(op.Out[0]);
    if (a.Type != b.Type)
      refuse(op, "inputs have types " + std::string(dtypeName(a.Type)) + " and " + dtypeName(b.Type));
    if (op.Code == EQUAL)
      expectType(op, o, {DType::Bool});
    else {
      expectType(op, a,
                 op.Code == DIV || op.Code == SQUARED_DIFFERENCE
                     ? std::initializer_list<DType>{DType::Float32}
                     : std::initializer_list<DType>{DType::Float32, DType::Int32, DType::Int64});
      if (o.Type != a.Type)
        refuse(op, "output type differs from its inputs'");
      if (op.Code != SQUARED_DIFFERENCE)
        checkActivation(opt(0, int8_t(0)));
      if (op.Code == ADD || op.Code == SUB)
        if (opt(1, uint8_t(0)))
          refuse(op, "pot_scale_int16 is not implemented");
    }
    std::vector<int64_t> shape = broadcastShape(op, a.Shape, b.Shape);
    expectShape(op, o, shape);
    op.Steps = broadcastWalk(op, {&a.Shape, &b.Shape}, shape);
    op.InType = a.Type;
    break;
  }
  case ABS:
  case SQUARE:
  case RELU:
  case RELU6:
  case SQRT:
  case LOG:
  case TANH:
  case ZEROS_LIKE: {
    need(1, 1, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    if (op.Code == SQRT || op.Code == LOG || op.Code == TANH)
      expectType(op, a, {DType::Float32});
    else if (op.Code != ZEROS_LIKE)
      expectType(op, a, {DType::Float32, DType::Int32, DType::Int64});
    if (o.Type != a.Type)
      refuse(op, "output type differs from its input's");
    expectShape(op, o, a.Shape);
    op.InType = a.Type;
    break;
  }
  case CAST: {
    need(1, 1, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    expectShape(op, o, a.Shape);
    op.InType = a.Type;
    op.OutType = o.Type;
    op.Label += std::string("(") + dtypeName(a.Type) + "->" + dtypeName(o.Type) + ")";
    break;
  }
  case BUCKETIZE: {
    need(1, 1, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    expectType(op, a, {DType::Float32, DType::Int32, DType::Int64});
    expectType(op, o, {DType::Int32});
    expectShape(op, o, a.Shape);
    if (!options)
      refuse(op, "has no boundaries");
    op.Boundaries = options->scalars<float>(0, "boundaries");
    // NaN compares false both ways: it would pass as sorted and break the binary search's precondition.
    if (std::any_of(op.Boundaries.begin(), op.Boundaries.end(), [](float b) { return std::isnan(b); }))
      refuse(op, "a boundary is NaN");
    if (!std::is_sorted(op.Boundaries.begin(), op.Boundaries.end()))
      refuse(op, "boundaries are not sorted");
    op.InType = a.Type;
    op.Label += "(" + std::to_string(op.Boundaries.size()) + " boundaries)";
    break;
  }
  case RESHAPE:
  case SQUEEZE:
  case EXPAND_DIMS: {
    need(1, 2, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    if (a.Type != o.Type || a.Elements != o.Elements)
      refuse(op, "turns " + a.describe() + " into " + o.describe());
    if (op.Code == EXPAND_DIMS) {
      if (op.In.size() != 2)
        refuse(op, "needs an axis input");
      std::vector<int64_t> axis = constInts(op, T(op.In[1]), constant(op.In[1]), budget, "the axis");
      if (axis.size() != 1)
        refuse(op, "the axis must have one element");
      int64_t ax = normaliseAxis(op, axis[0], a.Shape.size() + 1);
      std::vector<int64_t> shape = a.Shape;
      shape.insert(shape.begin() + ax, 1);
      expectShape(op, o, shape);
    }
    if (op.Code == SQUEEZE) {
      std::vector<int32_t> dims = options ? options->scalars<int32_t>(0, "squeeze_dims") : std::vector<int32_t>{};
      std::vector<int64_t> shape;
      for (size_t i = 0; i < a.Shape.size(); ++i) {
        bool listed = dims.empty() ? a.Shape[i] == 1 : false;
        for (int32_t d : dims)
          listed = listed || normaliseAxis(op, d, a.Shape.size()) == static_cast<int64_t>(i);
        if (listed && a.Shape[i] != 1)
          refuse(op, "squeezes dimension " + std::to_string(i) + " of size " + std::to_string(a.Shape[i]));
        if (!listed)
          shape.push_back(a.Shape[i]);
      }
      expectShape(op, o, shape);
    }
    op.InType = a.Type;
    break;
  }
  case CONCATENATION: {
    if (op.In.empty())
      refuse(op, "has no inputs");
    need(1, op.In.size(), 1);
    const TensorInfo &o = T(op.Out[0]);
    int64_t axis = normaliseAxis(op, opt(0, int32_t(0)), o.Shape.size());
    checkActivation(opt(1, int8_t(0)));
    std::vector<int64_t> shape = T(op.In[0]).Shape;
    if (shape.size() != o.Shape.size())
      refuse(op, "input rank differs from the output's");
    shape[axis] = 0;
    for (int i : op.In) {
      const TensorInfo &a = T(i);
      if (a.Type != o.Type)
        refuse(op, "input '" + a.Name + "' has type " + dtypeName(a.Type));
      if (a.Shape.size() != o.Shape.size())
        refuse(op, "input '" + a.Name + "' has rank " + std::to_string(a.Shape.size()));
      for (size_t d = 0; d < a.Shape.size(); ++d)
        if (static_cast<int64_t>(d) != axis && a.Shape[d] != o.Shape[d])
          refuse(op, "input '" + a.Name + "' has shape " + shapeText(a.Shape));
      shape[axis] += a.Shape[axis];
    }
    expectShape(op, o, shape);
    op.Outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      op.Outer *= static_cast<size_t>(o.Shape[d]);
    for (int i : op.In)
      op.Pieces.push_back(T(i).Elements / std::max<size_t>(1, op.Outer));
    op.InType = o.Type;
    if (op.Activation)
      expectType(op, o, {DType::Float32});
    break;
  }
  case FULLY_CONNECTED: {
    need(2, 3, 1);
    const TensorInfo &x = T(op.In[0]), &w = T(op.In[1]), &o = T(op.Out[0]);
    for (int i : op.In)
      if (i >= 0)
        expectType(op, T(i), {DType::Float32});
    expectType(op, o, {DType::Float32});
    checkActivation(opt(0, int8_t(0)));
    if (opt(1, int8_t(0)) != 0)
      refuse(op, "weights_format " + std::to_string(opt(1, int8_t(0))) + " is not implemented");
    bool keep = opt(2, uint8_t(0));
    if (w.Shape.size() != 2 || x.Shape.empty())
      refuse(op, "weights must be [units, inputs], not " + shapeText(w.Shape));
    op.Units = static_cast<size_t>(w.Shape[0]);
    op.Cols = static_cast<size_t>(w.Shape[1]);
    if (op.Cols == 0 || x.Elements % op.Cols)
      refuse(op, "input " + x.describe() + " does not divide into rows of " + std::to_string(op.Cols));
    op.Rows = x.Elements / op.Cols;
    if (op.In.size() == 3 && op.In[2] >= 0 && T(op.In[2]).Elements != op.Units)
      refuse(op, "bias has " + std::to_string(T(op.In[2]).Elements) + " elements, not " + std::to_string(op.Units));
    std::vector<int64_t> shape;
    if (keep) {
      if (x.Shape.back() != static_cast<int64_t>(op.Cols))
        refuse(op, "keep_num_dims needs the input's last dimension to be " + std::to_string(op.Cols));
      shape = x.Shape;
      shape.back() = static_cast<int64_t>(op.Units);
    } else {
      shape = {static_cast<int64_t>(op.Rows), static_cast<int64_t>(op.Units)};
    }
    expectShape(op, o, shape);
    break;
  }
  case ARG_MAX: {
    need(2, 2, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    expectType(op, a, {DType::Float32, DType::Int32}); // TFLite's kernel takes no int64 input either
    expectType(op, o, {DType::Int32, DType::Int64});
    std::vector<int64_t> axis = constInts(op, T(op.In[1]), constant(op.In[1]), budget, "the axis");
    if (axis.size() != 1)
      refuse(op, "the axis must have one element");
    int64_t ax = normaliseAxis(op, axis[0], a.Shape.size());
    std::vector<int64_t> shape = a.Shape;
    shape.erase(shape.begin() + ax);
    expectShape(op, o, shape);
    int8_t outputType = opt(0, int8_t(0)); // TensorType: INT64 4, INT32 2 (absent: FLOAT32, which TFLite refuses)
    if ((outputType == 4) != (o.Type == DType::Int64))
      refuse(op, "output_type does not match the output tensor's type");
    op.Outer = op.Inner = 1;
    for (int64_t d = 0; d < ax; ++d)
      op.Outer *= static_cast<size_t>(a.Shape[d]);
    for (size_t d = static_cast<size_t>(ax) + 1; d < a.Shape.size(); ++d)
      op.Inner *= static_cast<size_t>(a.Shape[d]);
    op.Axis = static_cast<size_t>(a.Shape[ax]);
    if (op.Axis == 0)
      refuse(op, "arg-max over an empty axis");
    op.InType = a.Type;
    op.Int64Index = o.Type == DType::Int64;
    break;
  }
  case GATHER: {
    need(2, 2, 1);
    const TensorInfo &p = T(op.In[0]), &idx = T(op.In[1]), &o = T(op.Out[0]);
    expectType(op, idx, {DType::Int32, DType::Int64});
    if (o.Type != p.Type)
      refuse(op, "output type differs from the params'");
    if (opt(1, int32_t(0)) != 0)
      refuse(op, "batch_dims is not implemented");
    int64_t ax = normaliseAxis(op, opt(0, int32_t(0)), p.Shape.size());
    std::vector<int64_t> shape(p.Shape.begin(), p.Shape.begin() + ax);
    shape.insert(shape.end(), idx.Shape.begin(), idx.Shape.end());
    shape.insert(shape.end(), p.Shape.begin() + ax + 1, p.Shape.end());
    expectShape(op, o, shape);
    op.Outer = op.Inner = 1;
    for (int64_t d = 0; d < ax; ++d)
      op.Outer *= static_cast<size_t>(p.Shape[d]);
    for (size_t d = static_cast<size_t>(ax) + 1; d < p.Shape.size(); ++d)
      op.Inner *= static_cast<size_t>(p.Shape[d]);
    op.Axis = static_cast<size_t>(p.Shape[ax]);
    op.InType = p.Type;
    op.Int64Index = idx.Type == DType::Int64;
    break;
  }
  case SELECT:
  case SELECT_V2: {
    need(3, 3, 1);
    const TensorInfo &c = T(op.In[0]), &x = T(op.In[1]), &y = T(op.In[2]), &o = T(op.Out[0]);
    expectType(op, c, {DType::Bool});
    if (x.Type != y.Type || o.Type != x.Type)
      refuse(op, "the two value inputs and the output must share a type");
    std::vector<int64_t> shape;
    if (op.Code == SELECT) {
      if (x.Shape != y.Shape || c.Shape != x.Shape)
        refuse(op,
               "SELECT needs equal shapes (condition " + shapeText(c.Shape) + ", values " + shapeText(x.Shape) + ")");
      shape = x.Shape;
    } else {
      shape = broadcastShape(op, broadcastShape(op, c.Shape, x.Shape), y.Shape);
    }
    expectShape(op, o, shape);
    op.Steps = broadcastWalk(op, {&c.Shape, &x.Shape, &y.Shape}, shape);
    op.InType = x.Type;
    break;
  }
  case TILE:
  case BROADCAST_TO:
  case TRANSPOSE: {
    need(2, 2, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    if (o.Type != a.Type)
      refuse(op, "output type differs from its input's");
    std::vector<int64_t> arg = constInts(op, T(op.In[1]), constant(op.In[1]), budget,
                                         op.Code == TILE        ? "the multiples"
                                         : op.Code == TRANSPOSE ? "perm"
                                                                : "the shape");
    if (op.Code == BROADCAST_TO) {
      expectShape(op, o, arg);
      op.Steps = broadcastWalk(op, {&a.Shape}, arg);
    } else {
      if (arg.size() != a.Shape.size())
        refuse(op, "has " + std::to_string(arg.size()) + " entries for rank " + std::to_string(a.Shape.size()));
      std::vector<int64_t> shape(a.Shape.size());
      std::vector<size_t> inStrides = strides(a.Shape);
      if (op.Code == TILE) {
        // Output dimension d is (multiple, input dimension) as two loops,
        // the outer one re-reading the input.
        std::vector<int64_t> loops;
        std::vector<Step> steps;
        for (size_t d = 0; d < arg.size(); ++d) {
          if (arg[d] < 0)
            refuse(op, "negative multiple");
          if (__builtin_mul_overflow(a.Shape[d], arg[d], &shape[d]))
            refuse(op, "dimension " + std::to_string(d) + " (" + std::to_string(a.Shape[d]) + ") times the multiple " +
                           std::to_string(arg[d]) + " overflows");
          loops.insert(loops.end(), {arg[d], a.Shape[d]});
          steps.insert(steps.end(), {Step{}, Step{inStrides[d], 0, 0}});
        }
        expectShape(op, o, shape);
        op.Steps = makeWalk(loops, steps);
      } else {
        std::vector<bool> seen(arg.size());
        for (size_t d = 0; d < arg.size(); ++d) {
          if (arg[d] < 0 || arg[d] >= static_cast<int64_t>(arg.size()) || seen[arg[d]])
            refuse(op, "perm is not a permutation");
          seen[arg[d]] = true;
          shape[d] = a.Shape[arg[d]];
        }
        expectShape(op, o, shape);
        std::vector<Step> steps;
        for (size_t d = 0; d < arg.size(); ++d)
          steps.push_back(Step{inStrides[static_cast<size_t>(arg[d])], 0, 0});
        op.Steps = makeWalk(shape, steps);
      }
    }
    op.InType = a.Type;
    break;
  }
  case FILL: {
    need(2, 2, 1);
    const TensorInfo &v = T(op.In[1]), &o = T(op.Out[0]);
    std::vector<int64_t> dims = constInts(op, T(op.In[0]), constant(op.In[0]), budget, "the dims");
    if (v.Elements != 1 || v.Type != o.Type)
      refuse(op, "the value must be a scalar of the output's type");
    expectShape(op, o, dims);
    op.Steps = makeWalk(o.Shape, std::vector<Step>(o.Shape.size(), Step{})); // every element reads the value
    op.InType = o.Type;
    op.In = {op.In[1]}; // the value is the only data input
    break;
  }
  case MEAN: {
    need(2, 2, 1);
    const TensorInfo &a = T(op.In[0]), &o = T(op.Out[0]);
    expectType(op, a, {DType::Float32});
    expectType(op, o, {DType::Float32});
    std::vector<int64_t> axes = constInts(op, T(op.In[1]), constant(op.In[1]), budget, "the axes");
    bool keep = opt(0, uint8_t(0));
    std::vector<bool> reduced(a.Shape.size());
    for (int64_t ax : axes)
      reduced[normaliseAxis(op, ax, a.Shape.size())] = true;
    std::vector<int64_t> shape, kept;
    for (size_t d = 0; d < a.Shape.size(); ++d) {
      if (!reduced[d])
        shape.push_back(a.Shape[d]);
      else if (keep)
        shape.push_back(1);
      kept.push_back(reduced[d] ? 1 : a.Shape[d]);
    }
    expectShape(op, o, shape);
    // The walk drives the input; operand 0 moves through the output, staying put along reduced dimensions.
    std::vector<size_t> keptStrides = strides(kept);
    std::vector<Step> steps;
    for (size_t d = 0; d < a.Shape.size(); ++d)
      steps.push_back(Step{reduced[d] ? 0 : keptStrides[d], 0, 0});
    op.Steps = makeWalk(a.Shape, steps);
    break;
  }
  case MULTINOMIAL: {
    need(2, 2, 1);
    const TensorInfo &l = T(op.In[0]), &o = T(op.Out[0]);
    expectType(op, l, {DType::Float32});
    expectType(op, o, {DType::Int32, DType::Int64});
    std::vector<int64_t> samples = constInts(op, T(op.In[1]), constant(op.In[1]), budget, "num_samples");
    if (l.Shape.size() != 2 || samples.size() != 1 || samples[0] < 0)
      refuse(op, "needs logits [batch, classes] and one num_samples");
    op.Rows = static_cast<size_t>(l.Shape[0]);
    op.Cols = static_cast<size_t>(l.Shape[1]);
    op.Samples = static_cast<size_t>(samples[0]);
    if (op.Cols == 0)
      refuse(op, "no classes to draw from");
    expectShape(op, o, {l.Shape[0], samples[0]});
    int64_t seed = opt(0, int64_t(0)), seed2 = opt(1, int64_t(0));
    // Like TFLite, seeds 0 and 0 mean a fresh random seed.
    op.Random = std::make_unique<std::mt19937_64>(seed == 0 && seed2 == 0 ? std::random_device{}()
                                                                          : static_cast<uint64_t>(seed) * 1000003u ^
                                                                                static_cast<uint64_t>(seed2));
    op.OutType = o.Type;
    break;
  }
  }
  op.OutType = tensors[static_cast<size_t>(op.Out[0])].Type;
  op.N = tensors[static_cast<size_t>(op.Out[0])].Elements;
}

llvm::Error runOperator(TFLiteModel::Op &op) {
  size_t size = dtypeSize(op.InType);
  switch (op.Code) {
  case ADD:
  case SUB:
  case MUL:
  case DIV:
  case SQUARED_DIFFERENCE:
    MLGO_NUMERIC_DISPATCH(op.InType, arithmetic, op);
    break;
  case EQUAL:
    MLGO_DISPATCH(op.InType, equal<T>(op));
    break;
  case ABS:
  case SQUARE:
  case RELU:
  case RELU6:
  case SQRT:
  case LOG:
  case TANH:
    MLGO_NUMERIC_DISPATCH(op.InType, unary, op);
    break;
  case ZEROS_LIKE:
    std::memset(op.OutData, 0, op.N * size);
    break;
  case CAST:
    MLGO_DISPATCH(op.InType, castFrom<T>(op));
    break;
  case BUCKETIZE:
    MLGO_NUMERIC_DISPATCH(op.InType, bucketize, op);
    break;
  case RESHAPE:
  case SQUEEZE:
  case EXPAND_DIMS:
    if (op.OutData != op.InData[0])
      std::memmove(op.OutData, op.InData[0], op.N * size);
    break;
  case CONCATENATION: {
    char *o = op.OutData;
    for (size_t outer = 0; outer < op.Outer; ++outer)
      for (size_t i = 0; i < op.Pieces.size(); ++i) {
        size_t bytes = op.Pieces[i] * size;
        std::memcpy(o, op.InData[i] + outer * bytes, bytes);
        o += bytes;
      }
    if (op.Activation) {
      float *f = out<float>(op);
      for (size_t i = 0; i < op.N; ++i)
        f[i] = activate<float>(f[i], op.Activation);
    }
    break;
  }
  case FULLY_CONNECTED:
    fullyConnected(op);
    break;
  case ARG_MAX:
    MLGO_NUMERIC_DISPATCH(op.InType, argMax, op);
    break;
  case GATHER: {
    std::string error;
    size_t indices = op.N / std::max<size_t>(1, op.Outer * op.Inner);
    if (op.Int64Index)
      gather<int64_t>(op, size, indices, error);
    else
      gather<int32_t>(op, size, indices, error);
    if (!error.empty())
      return llvm::createStringError(error);
    break;
  }
  case SELECT:
  case SELECT_V2:
    select(op, size);
    break;
  case TILE:
  case BROADCAST_TO:
  case TRANSPOSE:
  case FILL:
    walkCopy(op, size);
    break;
  case MEAN:
    mean(op);
    break;
  case MULTINOMIAL:
    multinomial(op);
    break;
  }
  return llvm::Error::success();
}

} // namespace mlgo::model
