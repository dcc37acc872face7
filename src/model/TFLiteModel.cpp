#include "mlgo/model/TFLiteModel.h"

#include "FlatBuffer.h"
#include "Operators.h"

#include "llvm/Support/MemoryBuffer.h"

#include <map>

namespace mlgo::model {

const char *dtypeName(DType type) {
  switch (type) {
  case DType::Float32:
    return "float32";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

size_t dtypeSize(DType type) {
  switch (type) {
  case DType::Float32:
  case DType::Int32:
    return 4;
  case DType::Int64:
    return 8;
  case DType::Bool:
    return 1;
  }
  return 1;
}

std::string TensorInfo::describe() const {
  std::string s = std::string(dtypeName(Type)) + "[";
  for (size_t i = 0; i < Shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(Shape[i]);
  return s + "]";
}

TFLiteModel::~TFLiteModel() = default;

namespace {
// TensorType names, for refusals.
const char *tensorTypeName(int type) {
  static const char *names[] = {"FLOAT32", "FLOAT16",  "INT32",     "UINT8",  "INT64",   "STRING",
                                "BOOL",    "INT16",    "COMPLEX64", "INT8",   "FLOAT64", "COMPLEX128",
                                "UINT64",  "RESOURCE", "VARIANT",   "UINT32", "UINT16",  "INT4"};
  return type >= 0 && type < static_cast<int>(std::size(names)) ? names[type] : "unknown";
}

constexpr size_t MaxElements = size_t(1) << 26; // a policy is small; refuse absurd shapes early
// Everything a load allocates (MLGO's policies need a few MB): the tensor
// arena and all prepared state. A model file is input, and its contents
// alone must not decide how much memory we take.
constexpr uint64_t MaxLoadBytes = uint64_t(64) << 20;
// Per operator, beyond its tensor lists: the Op itself, its walk (at most
// Walk::MaxLoops loops) and its label.
constexpr uint64_t OpStateBytes =
    sizeof(TFLiteModel::Op) + Walk::MaxLoops * (sizeof(size_t) + sizeof(std::array<size_t, Walk::MaxOperands>)) + 64;
} // namespace

class ModelBuilder {
public:
  static void build(TFLiteModel &m, llvm::StringRef bytes) {
    if (bytes.size() < 8)
      throw FlatBufferError{"the file is too short (" + std::to_string(bytes.size()) + " bytes)"};
    if (bytes.substr(4, 4) != "TFL3")
      throw FlatBufferError{"no TFL3 file identifier: not a TFLite model"};
    LoadBudget budget(MaxLoadBytes);
    FlatBuffer fb(bytes, budget);
    FBTable model = fb.root("Model");
    std::vector<FBTable> codes = model.tables(1, "operator_codes");
    std::vector<FBTable> subgraphs = model.tables(2, "subgraphs");
    std::vector<FBTable> buffers = model.tables(4, "buffers");
    if (subgraphs.empty())
      throw FlatBufferError{"the model has no subgraph"};

    // The `action` signature, else subgraph 0 (what LLVM's interpreter runs).
    std::optional<FBTable> action;
    for (const FBTable &sig : model.tables(7, "signature_defs")) {
      std::string key = sig.string(2, "signature_key").value_or("");
      m.SignatureKeys.push_back(key);
      if (key == "action" && !action)
        action = sig;
    }
    if (action) {
      m.Signature = "action";
      m.Subgraph = action->scalar<uint32_t>(4, 0);
      if (m.Subgraph >= subgraphs.size())
        throw FlatBufferError{"signature 'action' names subgraph " + std::to_string(m.Subgraph) + " of " +
                              std::to_string(subgraphs.size())};
    }
    const FBTable &graph = subgraphs[m.Subgraph];

    std::vector<FBTable> tensors = graph.tables(0, "tensors");
    // Per tensor: its info, its constant bytes, readiness and writer (below), its arena offset.
    budget.charge(tensors.size(), sizeof(TensorInfo) + sizeof(llvm::StringRef) + sizeof(int) + sizeof(size_t) + 1,
                  "the tensor list");
    m.Tensors.reserve(tensors.size());
    std::vector<llvm::StringRef> constants(tensors.size());
    for (size_t i = 0; i < tensors.size(); ++i) {
      const FBTable &t = tensors[i];
      TensorInfo info;
      info.Name = t.string(3, "name").value_or("");
      std::string who = "tensor " + std::to_string(i) + " '" + info.Name.substr(0, 200) + "'";
      int8_t type = t.scalar<int8_t>(1, 0);
      switch (type) {
      case 0:
        info.Type = DType::Float32;
        break;
      case 2:
        info.Type = DType::Int32;
        break;
      case 4:
        info.Type = DType::Int64;
        break;
      case 6:
        info.Type = DType::Bool;
        break;
      default:
        throw FlatBufferError{who + " has type " + tensorTypeName(type) + ", which this evaluator does not implement"};
      }
      std::vector<int32_t> shape = t.scalars<int32_t>(0, "shape");
      if (shape.size() > MaxRank)
        throw FlatBufferError{who + " has " + std::to_string(shape.size()) + " dimensions; at most " +
                              std::to_string(MaxRank) + " are implemented"};
      budget.charge(shape.size(), sizeof(int64_t), "tensor shapes");
      for (int32_t d : shape) {
        if (d < 0)
          throw FlatBufferError{who + " has a dynamic shape (dimension " + std::to_string(d) + ")"};
        info.Shape.push_back(d);
      }
      for (int32_t d : t.scalars<int32_t>(7, "shape_signature"))
        if (d < 0)
          throw FlatBufferError{who + " has a dynamic shape signature (batch size must be static)"};
      // The non-zero dimensions' product is bounded too, so that no product
      // of some of a tensor's dimensions (an operator's outer or inner
      // extent) is large even when another dimension is 0.
      size_t extent = 1;
      bool empty = false;
      for (int64_t d : info.Shape) {
        empty = empty || d == 0;
        extent *= d ? static_cast<size_t>(d) : 1; // < 2^26 x 2^31: no overflow
        if (extent > MaxElements)
          throw FlatBufferError{who + " is too large"};
      }
      info.Elements = empty ? 0 : extent;
      if (auto q = t.table(4, "quantization")) {
        bool quantized = !q->scalars<float>(2, "scale").empty() || !q->scalars<int64_t>(3, "zero_point").empty() ||
                         q->scalar<uint8_t>(4, 0) != 0;
        if (quantized)
          throw FlatBufferError{who + " is quantized; only float models are implemented"};
      }
      if (t.scalar<uint8_t>(5, 0))
        throw FlatBufferError{who + " is a variable tensor, which this evaluator does not implement"};
      if (t.field(6))
        throw FlatBufferError{who + " is sparse, which this evaluator does not implement"};
      uint32_t buffer = t.scalar<uint32_t>(2, 0);
      if (buffer >= buffers.size() && buffer != 0)
        throw FlatBufferError{who + " names buffer " + std::to_string(buffer) + " of " +
                              std::to_string(buffers.size())};
      if (buffer != 0) {
        const FBTable &b = buffers[buffer];
        if (b.scalar<uint64_t>(1, 0) != 0 || b.scalar<uint64_t>(2, 0) != 0)
          throw FlatBufferError{who + " keeps its data outside the FlatBuffer (models over 2 GB are not implemented)"};
        if (auto v = b.vector(0, 1, "data"); v && v->Size) {
          if (v->Size != info.byteSize())
            throw FlatBufferError{who + " (" + info.describe() + ") has " + std::to_string(v->Size) +
                                  " bytes of data, not " + std::to_string(info.byteSize())};
          constants[i] = llvm::StringRef(fb.at(v->Start), v->Size);
          info.Constant = true;
        }
      }
      m.Tensors.push_back(std::move(info));
    }
    auto tensorIndex = [&](int32_t index, const std::string &what) -> size_t {
      if (index < 0 || static_cast<size_t>(index) >= m.Tensors.size())
        throw FlatBufferError{what + " names tensor " + std::to_string(index) + " of " +
                              std::to_string(m.Tensors.size())};
      return static_cast<size_t>(index);
    };

    std::vector<int32_t> graphInputs = graph.scalars<int32_t>(1, "inputs");
    std::vector<int32_t> graphOutputs = graph.scalars<int32_t>(2, "outputs");
    std::vector<bool> ready(m.Tensors.size());
    for (size_t i = 0; i < m.Tensors.size(); ++i)
      ready[i] = m.Tensors[i].Constant;
    for (int32_t i : graphInputs)
      ready[tensorIndex(i, "a subgraph input")] = true;
    auto ports = [&](const FBTable &sig, unsigned field, const char *what, const std::vector<int32_t> &allowed) {
      std::vector<GraphPort> out;
      for (const FBTable &map : sig.tables(field, what)) {
        std::string name = map.string(0, "name").value_or("");
        uint32_t index = map.scalar<uint32_t>(1, 0);
        size_t t =
            tensorIndex(static_cast<int32_t>(index), "signature 'action' " + std::string(what) + " '" + name + "'");
        if (std::find(allowed.begin(), allowed.end(), static_cast<int32_t>(t)) == allowed.end())
          throw FlatBufferError{"signature 'action' " + std::string(what) + " '" + name +
                                "' is not one of the subgraph's " + what};
        out.push_back({name, t});
      }
      return out;
    };
    if (action) {
      m.Inputs = ports(*action, 0, "inputs", graphInputs);
      m.Outputs = ports(*action, 1, "outputs", graphOutputs);
    } else {
      for (int32_t i : graphInputs)
        m.Inputs.push_back({m.Tensors[static_cast<size_t>(i)].Name, static_cast<size_t>(i)});
      for (int32_t i : graphOutputs)
        m.Outputs.push_back({m.Tensors[tensorIndex(i, "a subgraph output")].Name, static_cast<size_t>(i)});
    }

    // Which operator writes each tensor (-1: none yet); graph inputs are the caller's.
    constexpr int ByCaller = -2;
    std::vector<int> writer(m.Tensors.size(), -1);
    for (int32_t i : graphInputs)
      writer[static_cast<size_t>(i)] = ByCaller;
    std::vector<FBTable> operators = graph.tables(3, "operators");
    budget.charge(operators.size(), OpStateBytes, "the operator list");
    m.Ops.reserve(operators.size());
    for (size_t k = 0; k < operators.size(); ++k) {
      const FBTable &o = operators[k];
      std::string where = "operator " + std::to_string(k);
      uint32_t opcode = o.scalar<uint32_t>(0, 0);
      if (opcode >= codes.size())
        throw FlatBufferError{where + " names operator code " + std::to_string(opcode) + " of " +
                              std::to_string(codes.size())};
      const FBTable &code = codes[opcode];
      int32_t builtin = std::max<int32_t>(code.scalar<int8_t>(0, 0), code.scalar<int32_t>(3, 0));
      if (auto custom = code.string(1, "custom_code"); custom || builtin == 32)
        throw FlatBufferError{where + " is the custom operator '" + custom.value_or("") +
                              "'; only builtin operators are implemented"};
      if (o.field(5))
        throw FlatBufferError{where + " has custom options, which this evaluator does not implement"};
      TFLiteModel::Op op;
      op.Code = builtin;
      std::vector<int32_t> ins = o.scalars<int32_t>(1, "inputs"), outs = o.scalars<int32_t>(2, "outputs");
      // In, InData, CONCATENATION's Pieces; Out.
      budget.charge(ins.size(), sizeof(int) + sizeof(char *) + sizeof(size_t), "operator inputs");
      budget.charge(outs.size(), sizeof(int), "operator outputs");
      for (int32_t i : ins)
        op.In.push_back(i < 0 ? -1 : static_cast<int>(tensorIndex(i, where + " input")));
      for (int32_t i : outs)
        op.Out.push_back(static_cast<int>(tensorIndex(i, where + " output")));
      if (!builtinName(builtin))
        throw FlatBufferError{where + ": builtin operator " + std::to_string(builtin) +
                              " is not implemented by this evaluator"};
      // One writer per tensor: a second one would silently replace the
      // first's result (and once cost a full-size index map each).
      for (int i : op.Out) {
        const TensorInfo &t = m.Tensors[static_cast<size_t>(i)];
        std::string self = where + " (" + builtinName(builtin) + ") writes tensor '" + t.Name.substr(0, 200) + "'";
        int earlier = writer[static_cast<size_t>(i)];
        if (earlier == ByCaller)
          throw FlatBufferError{self + ", which is an input of the graph"};
        if (earlier == static_cast<int>(k)) // this operator, not yet in m.Ops
          throw FlatBufferError{self + " twice"};
        if (earlier >= 0)
          throw FlatBufferError{self + ", which operator " + std::to_string(earlier) + " (" +
                                builtinName(m.Ops[static_cast<size_t>(earlier)].Code) + ") writes too"};
        if (t.Constant)
          throw FlatBufferError{self + ", which is a constant"};
        writer[static_cast<size_t>(i)] = static_cast<int>(k);
      }
      uint8_t optionsType = o.scalar<uint8_t>(3, 0);
      std::optional<FBTable> options = optionsType ? o.table(4, "builtin_options") : std::nullopt;
      try {
        prepareOperator(
            op, optionsType, options, m.Tensors,
            [&](int t) { return t >= 0 ? constants[static_cast<size_t>(t)] : llvm::StringRef(); }, budget);
      } catch (FlatBufferError &e) {
        throw FlatBufferError{where + " (" + builtinName(builtin) + "): " + e.Message};
      }
      for (int i : op.In)
        if (i >= 0 && !ready[static_cast<size_t>(i)])
          throw FlatBufferError{where + " (" + op.Label + ") reads tensor '" + m.Tensors[static_cast<size_t>(i)].Name +
                                "' before any operator writes it"};
      for (int i : op.Out)
        ready[static_cast<size_t>(i)] = true;
      m.Ops.push_back(std::move(op));
    }
    for (const GraphPort &p : m.Outputs)
      if (!ready[p.Tensor])
        throw FlatBufferError{"output '" + p.Name + "' is never written"};

    // Lay out every tensor in one 8-aligned arena; constants are copied in.
    size_t total = 0;
    m.Offsets.reserve(m.Tensors.size());
    for (size_t i = 0; i < m.Tensors.size(); ++i) {
      const TensorInfo &t = m.Tensors[i];
      size_t bytes = (t.byteSize() + 7) & ~size_t(7); // <= 2^26 x 8
      budget.charge(1, bytes,
                    "tensor " + std::to_string(i) + " '" + t.Name.substr(0, 200) + "' (" + t.describe() + ")");
      m.Offsets.push_back(total);
      total += bytes;
    }
    budget.charge(1, 8, "the tensor arena");
    m.Arena.assign(total / 8 + 1, 0);
    char *base = reinterpret_cast<char *>(m.Arena.data());
    for (size_t i = 0; i < m.Tensors.size(); ++i)
      if (!constants[i].empty())
        std::memcpy(base + m.Offsets[i], constants[i].data(), constants[i].size());
    for (TFLiteModel::Op &op : m.Ops) {
      for (int i : op.In)
        op.InData.push_back(i >= 0 ? base + m.Offsets[static_cast<size_t>(i)] : nullptr);
      op.OutData = base + m.Offsets[static_cast<size_t>(op.Out[0])];
    }
  }
};

llvm::Expected<std::unique_ptr<TFLiteModel>> TFLiteModel::parse(llvm::StringRef bytes, llvm::StringRef path) {
  std::unique_ptr<TFLiteModel> model(new TFLiteModel());
  model->Path = path.str();
  try {
    ModelBuilder::build(*model, bytes);
  } catch (FlatBufferError &e) {
    return llvm::createStringError("%s: cannot use this TFLite model: %s", path.str().c_str(), e.Message.c_str());
  }
  return model;
}

llvm::Expected<std::unique_ptr<TFLiteModel>> TFLiteModel::load(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError("%s: %s", path.str().c_str(), buffer.getError().message().c_str());
  return parse((*buffer)->getBuffer(), path);
}

std::vector<std::string> TFLiteModel::operatorNames() const {
  std::vector<std::string> names;
  for (const Op &op : Ops)
    names.push_back(op.Label);
  return names;
}

llvm::MutableArrayRef<char> TFLiteModel::data(size_t tensor) {
  return {reinterpret_cast<char *>(Arena.data()) + Offsets[tensor], Tensors[tensor].byteSize()};
}

llvm::ArrayRef<char> TFLiteModel::data(size_t tensor) const {
  return {reinterpret_cast<const char *>(Arena.data()) + Offsets[tensor], Tensors[tensor].byteSize()};
}

llvm::Error TFLiteModel::invoke() {
  for (size_t k = 0; k < Ops.size(); ++k)
    if (llvm::Error e = runOperator(Ops[k]))
      return llvm::createStringError("%s: operator %zu (%s): %s", Path.c_str(), k, Ops[k].Label.c_str(),
                                     llvm::toString(std::move(e)).c_str());
  return llvm::Error::success();
}

} // namespace mlgo::model
