"""export_policy: a trained inliner network as an MLGO policy directory.

Writes DIR/model.tflite and DIR/output_spec.json, the layout LLVM's
development mode, `harvest-logs --policy=tflite:DIR` (our native evaluator)
and TFLite itself load. The graph is the network ml-compiler-opt builds:
each input feature normalised against its quantile file as features.normalize
does (BUCKETIZE, CAST, DIV; [x, x*x] and sqrt(x) with with_sqrt), the pieces
concatenated in the given order, then the dense layers (FULLY_CONNECTED with
a fused ReLU where a ReLU follows) and the arg-max of the two logits as the
int64 inlining_decision. Inputs are named action_<feature> (int64 [1]) as
LLVM binds them, with the three training-only inputs (action_discount,
action_reward, action_step_type) that LLVM feeds with zeros.

Needs python3-flatbuffers (Debian's; no generated code).
"""

import json
import os
import tempfile
from typing import List, Optional, Sequence, Tuple

import numpy as np

from .features import Vocab

# TFLite schema numbers used here (tensorflow/lite/schema/schema.fbs).
_FLOAT32, _INT32, _INT64 = 0, 2, 4
# builtin operator code, BuiltinOptions union type
_OPS = {"BUCKETIZE": (147, 115), "CAST": (53, 37), "DIV": (42, 29), "MUL": (18, 21), "SUB": (41, 28), "SQRT": (75, 0),
        "CONCATENATION": (2, 10), "FULLY_CONNECTED": (9, 8), "ARG_MAX": (56, 40)}
_RELU = 1


def dense_layers(model, outputs: int = 2) -> List[Tuple[np.ndarray, np.ndarray, bool]]:
    """[(weight [out, in], bias [out], relu)] of a torch nn.Sequential of
    Linear and ReLU modules, or of a list of (weight, bias, relu) numpy
    layers (returned checked). The last layer must give `outputs` values:
    the two logits (no, yes), or a deviating policy's one flip score."""
    layers = []
    if isinstance(model, (list, tuple)):
        for weight, bias, relu in model:
            layers.append((np.asarray(weight, dtype=np.float32), np.asarray(bias, dtype=np.float32), bool(relu)))
    else:
        for module in model:
            kind = type(module).__name__
            if kind == "Linear":
                weight = module.weight.detach().cpu().numpy().astype(np.float32)
                bias = (module.bias.detach().cpu().numpy().astype(np.float32) if module.bias is not None
                        else np.zeros(weight.shape[0], dtype=np.float32))
                layers.append((weight, bias, False))
            elif kind == "ReLU":
                if not layers or layers[-1][2]:
                    raise ValueError("a ReLU must follow a Linear layer")
                weight, bias, _ = layers[-1]
                layers[-1] = (weight, bias, True)
            else:
                raise ValueError("unsupported layer %s: only Linear and ReLU are exported" % kind)
    if not layers:
        raise ValueError("the network has no Linear layer")
    for i, (weight, bias, _) in enumerate(layers):
        if weight.ndim != 2 or bias.shape != (weight.shape[0],):
            raise ValueError("layer %d: weight %s and bias %s do not fit" % (i, weight.shape, bias.shape))
        if i and weight.shape[1] != layers[i - 1][0].shape[0]:
            raise ValueError("layer %d takes %d inputs, layer %d gives %d" % (
                i, weight.shape[1], i - 1, layers[i - 1][0].shape[0]))
    if layers[-1][0].shape[0] != outputs or layers[-1][2]:
        raise ValueError("the last layer must give %s without a ReLU" % (
            "the two logits (no, yes)" if outputs == 2 else "%d value(s)" % outputs))
    return layers


class _Graph:
    def __init__(self):
        self.tensors, self.ops, self.inputs, self.outputs = [], [], [], []

    def tensor(self, name, ttype, shape, data=None):
        self.tensors.append((name, ttype, list(shape), data))
        return len(self.tensors) - 1

    def const(self, name, array):
        array = np.asarray(array)
        ttype = {np.dtype(np.float32): _FLOAT32, np.dtype(np.int32): _INT32, np.dtype(np.int64): _INT64}[array.dtype]
        return self.tensor(name, ttype, array.shape, array.tobytes())

    def op(self, kind, inputs, ttype, shape, options=(), name=None):
        out = self.tensor(name or "%s_%d" % (kind.lower(), len(self.tensors)), ttype, shape)
        self.ops.append((kind, list(inputs), [out], list(options)))
        return out


def _serialize(graph: _Graph) -> bytes:
    import flatbuffers  # python3-flatbuffers

    b = flatbuffers.Builder(1 << 20)

    def ints(values):
        b.StartVector(4, len(values), 4)
        for v in reversed(values):
            b.PrependInt32(v)
        return b.EndVector()

    def offsets(values):
        b.StartVector(4, len(values), 4)
        for v in reversed(values):
            b.PrependUOffsetTRelative(v)
        return b.EndVector()

    def table(fields):
        # fields: (slot, kind, value); offsets are built before the table starts.
        b.StartObject(max([f[0] for f in fields], default=-1) + 1)
        for slot, kind, value in fields:
            if kind == "offset":
                b.PrependUOffsetTRelativeSlot(slot, value, 0)
            elif kind == "int8":
                b.PrependInt8Slot(slot, value, -128)  # never the default: always written
            elif kind == "uint8":
                b.PrependUint8Slot(slot, value, 255)
            elif kind == "int32":
                b.PrependInt32Slot(slot, value, -(2 ** 31))
            elif kind == "uint32":
                b.PrependUint32Slot(slot, value, 2 ** 32 - 1)
        return b.EndObject()

    buffers, buffer_of = [table([])], {}  # buffer 0: the empty sentinel
    for i, (_, _, _, data) in enumerate(graph.tensors):
        if data is not None:
            vector = b.CreateNumpyVector(np.frombuffer(data, dtype=np.uint8))
            buffers.append(table([(0, "offset", vector)]))
            buffer_of[i] = len(buffers) - 1
    tensors = []
    for i, (name, ttype, shape, _) in enumerate(graph.tensors):
        name_offset, shape_offset = b.CreateString(name), ints(shape)
        tensors.append(table([(0, "offset", shape_offset), (1, "int8", ttype), (2, "uint32", buffer_of.get(i, 0)),
                              (3, "offset", name_offset)]))
    codes, code_index, operators = [], {}, []
    for kind, inputs, outputs, options in graph.ops:
        code, options_type = _OPS[kind]
        if kind not in code_index:
            codes.append(table([(0, "int8", min(code, 127)), (2, "int32", 1), (3, "int32", code)]))
            code_index[kind] = len(codes) - 1
        built = []
        for slot, okind, value in options:
            if okind == "floats":
                b.StartVector(4, len(value), 4)
                for v in reversed(list(value)):
                    b.PrependFloat32(float(v))
                built.append((slot, "offset", b.EndVector()))
            else:
                built.append((slot, okind, value))
        options_offset = table(built) if options_type else None
        fields = [(0, "uint32", code_index[kind]), (1, "offset", ints(inputs)), (2, "offset", ints(outputs))]
        if options_offset is not None:
            fields += [(3, "uint8", options_type), (4, "offset", options_offset)]
        operators.append(table(fields))
    subgraph = table([(0, "offset", offsets(tensors)), (1, "offset", ints(graph.inputs)),
                      (2, "offset", ints(graph.outputs)), (3, "offset", offsets(operators)),
                      (4, "offset", b.CreateString("main"))])

    def signature_map(indexes):
        entries = []
        for i in indexes:
            name = graph.tensors[i][0]
            entries.append(table([(0, "offset", b.CreateString(name[:-2] if name.endswith(":0") else name)),
                                  (1, "uint32", i)]))
        return offsets(entries)

    sig_inputs, sig_outputs = signature_map(graph.inputs), signature_map(graph.outputs)
    signature = table([(0, "offset", sig_inputs), (1, "offset", sig_outputs), (2, "offset", b.CreateString("action")),
                       (4, "uint32", 0)])
    model = table([(0, "uint32", 3), (1, "offset", offsets(codes)), (2, "offset", offsets([subgraph])),
                   (3, "offset", b.CreateString("mlgo_corpus.export_policy")), (4, "offset", offsets(buffers)),
                   (7, "offset", offsets([signature]))])
    b.Finish(model, file_identifier=b"TFL3")
    return bytes(b.Output())


def build_graph(layers, vocab: Vocab, features: Sequence[str], with_sqrt: bool = False,
                float_inputs: bool = False, deviate_threshold: Optional[float] = None) -> _Graph:
    """The policy's graph. float_inputs makes the twin that TFLite's
    JavaScript API can run (it cannot feed or read int64 tensors): each
    feature arrives as float32 and is CAST to int64 first, and the decision
    leaves CAST to int32, as inlining_decision_int32; the rest is the same.

    deviate_threshold: the network gives one flip score f, and the policy
    takes the default heuristic's decision d (the inlining_default input,
    which `features` must name) unless f > threshold, where it takes the
    other: the logits are [0, (1 - 2d)(f - threshold)]. With an infinite
    threshold it never deviates: it decides as -Oz."""
    g = _Graph()
    raw = {}
    for name, ttype in (("action_discount", _FLOAT32), ("action_reward", _FLOAT32), ("action_step_type", _INT32)):
        g.inputs.append(g.tensor(name, ttype, [1]))
    pieces = []
    for k, feature in enumerate(features):
        boundaries = vocab.boundaries[feature]
        if float_inputs:
            fed = g.tensor("action_%s:0" % feature, _FLOAT32, [1])
            g.inputs.append(fed)
            x_in = g.op("CAST", [fed], _INT64, [1])
        else:
            x_in = g.tensor("action_%s:0" % feature, _INT64, [1])
            g.inputs.append(x_in)
        raw[feature] = x_in
        bucket = g.op("BUCKETIZE", [x_in], _INT32, [1], [(0, "floats", boundaries)])
        as_float = g.op("CAST", [bucket], _FLOAT32, [1])
        count = g.const("count_%d" % k, np.array([len(boundaries)], dtype=np.float32))
        x = g.op("DIV", [as_float, count], _FLOAT32, [1], [(0, "int8", 0)])
        pieces += [x, g.op("MUL", [x, x], _FLOAT32, [1], [(0, "int8", 0)])]
        if with_sqrt:
            pieces.append(g.op("SQRT", [x], _FLOAT32, [1]))
    width = len(pieces)
    if layers[0][0].shape[1] != width:
        raise ValueError("the network takes %d inputs; %d features normalised give %d" % (
            layers[0][0].shape[1], len(features), width))
    h = g.op("CONCATENATION", pieces, _FLOAT32, [width], [(0, "int32", 0), (1, "int8", 0)])
    for i, (weight, bias, relu) in enumerate(layers):
        w = g.const("dense_%d/weight" % i, weight)
        bias_tensor = g.const("dense_%d/bias" % i, bias)
        h = g.op("FULLY_CONNECTED", [h, w, bias_tensor], _FLOAT32, [1, weight.shape[0]],
                 [(0, "int8", _RELU if relu else 0), (1, "int8", 0), (2, "uint8", 0)],
                 name="inlining_logits:0" if i == len(layers) - 1 and deviate_threshold is None else None)
    if deviate_threshold is not None:
        if "inlining_default" not in raw:
            raise ValueError("a deviating policy reads inlining_default; the features do not name it")
        no_activation = [(0, "int8", 0)]
        default = g.op("CAST", [raw["inlining_default"]], _FLOAT32, [1])
        sign = g.op("SUB", [g.const("one", np.array([1.0], dtype=np.float32)),
                            g.op("MUL", [default, g.const("two", np.array([2.0], dtype=np.float32))], _FLOAT32, [1],
                                 no_activation)], _FLOAT32, [1], no_activation)
        above = g.op("SUB", [h, g.const("deviate_threshold", np.array([deviate_threshold], dtype=np.float32))],
                     _FLOAT32, [1, 1], no_activation)
        yes = g.op("MUL", [above, sign], _FLOAT32, [1, 1], no_activation)
        h = g.op("CONCATENATION", [g.const("no", np.zeros((1, 1), dtype=np.float32)), yes], _FLOAT32, [1, 2],
                 [(0, "int32", 1), (1, "int8", 0)], name="inlining_logits:0")
    axis = g.const("argmax_axis", np.array([1], dtype=np.int32))
    decision = g.op("ARG_MAX", [h, axis], _INT64, [1], [(0, "int8", _INT64)], name="inlining_decision:0")
    g.outputs = [decision, h]
    if float_inputs:
        g.outputs[0] = g.op("CAST", [decision], _INT32, [1], name="inlining_decision_int32")
    return g


OUTPUT_SPEC = [
    {"logging_name": "inlining_decision",
     "tensor_spec": {"name": "inlining_decision", "port": 0, "type": "int64_t", "shape": [1]}},
    {"logging_name": "inlining_logits",
     "tensor_spec": {"name": "inlining_logits", "port": 0, "type": "float", "shape": [1, 2]}},
]


def export_policy(model, vocab_dir, out_dir, features: Optional[Sequence[str]] = None,
                  with_sqrt: bool = False, float_inputs_twin: Optional[str] = None,
                  deviate_threshold: Optional[float] = None) -> List[str]:
    """Writes out_dir/model.tflite and out_dir/output_spec.json; returns the
    features the model takes, in input order.

    model: a torch nn.Sequential of Linear/ReLU (the last Linear gives the
    two logits: no, yes), or [(weight [out, in], bias [out], relu)] numpy
    layers. vocab_dir: the <feature>.buckets files (training-log vocab).
    features: the normalised inputs in the order the network was trained on
    (default: vocab.input_features(), sorted, inlining_default left out) -
    the same list given to features.normalize for training.
    float_inputs_twin: also write the same graph with float32 inputs to
    this path (build_graph's float_inputs), for TFLite's JavaScript runtime.
    deviate_threshold: the network gives one flip score and the policy keeps
    the default's decision unless the score exceeds it (build_graph).
    Files are written to temporaries and renamed into place.
    """
    vocab = Vocab.load(vocab_dir)
    names = list(features) if features is not None else vocab.input_features()
    missing = [n for n in names if n not in vocab.boundaries]
    if missing:
        raise ValueError("no quantile file for: %s" % ", ".join(missing))
    layers = dense_layers(model, outputs=2 if deviate_threshold is None else 1)
    out_dir = os.fspath(out_dir)
    files = [(os.path.join(out_dir, "model.tflite"),
              _serialize(build_graph(layers, vocab, names, with_sqrt, deviate_threshold=deviate_threshold))),
             (os.path.join(out_dir, "output_spec.json"), (json.dumps(OUTPUT_SPEC, indent=2) + "\n").encode())]
    if float_inputs_twin is not None:
        twin = _serialize(build_graph(layers, vocab, names, with_sqrt, float_inputs=True,
                                      deviate_threshold=deviate_threshold))
        files.append((os.fspath(float_inputs_twin), twin))
    os.makedirs(out_dir, exist_ok=True)
    for path, content in files:
        directory, name = os.path.split(os.path.abspath(path))
        fd, temporary = tempfile.mkstemp(prefix="." + name + ".", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(content)
                f.flush()
                # mkstemp makes it 0600; a policy is shared and installed,
                # so it gets the mode open() would give it (0666 & ~umask).
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(f.fileno(), 0o666 & ~umask)
                os.fsync(f.fileno())
            os.replace(temporary, path)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise
    return names
