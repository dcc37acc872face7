#!/usr/bin/python3
"""Writes MLGO-shaped TFLite policy directories for the tests: our own model
writer (Debian's python3-flatbuffers, no generated code), independent of the
evaluator under test.

  tflite_models.py KIND FEATURES.json OUTDIR [--seed N]

KIND: inliner | inliner_echo | constant1 | evict | evict_mask_argmax | insurance | wide_broadcasts | bool_bytes |
embedding_sign |
malformed-NAME.
FEATURES.json: the compiler's features as a log header lists them
({"features": [{"name", "type", "shape"}...]}). Writes OUTDIR/model.tflite,
OUTDIR/output_spec.json and OUTDIR/oracle.tflite: the same graph with every
int64 graph input taken as float32 and CAST, and every int64 graph output
CAST to int32, because the oracle's JavaScript API cannot read or write
int64 tensors.
"""
import json
import os
import sys

import flatbuffers
import numpy as np

FLOAT32, INT32, INT64, BOOL = 0, 2, 4, 6
NP = {FLOAT32: np.float32, INT32: np.int32, INT64: np.int64, BOOL: np.bool_}
# BuiltinOperator codes and their BuiltinOptions union ids (TFLite schema).
OPS = {
    "ADD": (0, 11), "CONCATENATION": (2, 10), "FULLY_CONNECTED": (9, 8), "MUL": (18, 21), "RESHAPE": (22, 17),
    "GATHER": (36, 23), "SUB": (41, 28), "DIV": (42, 29), "CAST": (53, 37), "ARG_MAX": (56, 40), "TILE": (69, 51),
    "EXPAND_DIMS": (70, 52), "EQUAL": (71, 53), "SQRT": (75, 0), "SQUARE": (92, 66), "SELECT_V2": (123, 98),
    "BUCKETIZE": (147, 115), "SOFTMAX": (25, 9), "RELU": (19, 0), "ABS": (101, 78), "TRANSPOSE": (39, 26),
    "BROADCAST_TO": (130, 104), "SQUARED_DIFFERENCE": (99, 76), "LOG": (73, 0), "MEAN": (40, 27),
    "ZEROS_LIKE": (93, 67), "FILL": (94, 68), "SELECT": (64, 47), "SQUEEZE": (43, 30), "RELU6": (21, 0),
    "TANH": (28, 0),
}


class Graph:
    def __init__(self):
        self.tensors = []  # dict(name, type, shape, data)
        self.ops = []  # dict(op, ins, outs, options: list of (slot, kind, value))
        self.inputs, self.outputs = [], []
        self.custom = None
        self.quantized = set()
        self.shared_name = None  # (count, length): extra tensors all naming one long string

    def tensor(self, name, ttype, shape, data=None):
        self.tensors.append({"name": name, "type": ttype, "shape": list(shape), "data": data})
        return len(self.tensors) - 1

    def const(self, name, array, ttype):
        array = np.asarray(array, dtype=NP[ttype])
        return self.tensor(name, ttype, array.shape, array.tobytes())

    def op(self, name, ins, out_type, out_shape, options=(), out_name=None):
        out = self.tensor(out_name or "t%d_%s" % (len(self.tensors), name.lower()), out_type, out_shape)
        self.ops.append({"op": name, "ins": list(ins), "outs": [out], "options": list(options)})
        return out

    def shape(self, t):
        return self.tensors[t]["shape"]


def vector(b, values, kind):
    prepend = {"i32": (4, b.PrependInt32), "f32": (4, b.PrependFloat32), "off": (4, b.PrependUOffsetTRelative)}
    size, fn = prepend[kind]
    b.StartVector(size, len(values), size)
    for v in reversed(values):
        fn(v)
    return b.EndVector()


def table(b, fields):
    """fields: list of (slot, kind, value); offsets must be built already."""
    b.StartObject(max([f[0] for f in fields] + [-1]) + 1)
    for slot, kind, value in fields:
        if kind == "off":
            b.PrependUOffsetTRelativeSlot(slot, value, 0)
        elif kind == "i8":
            b.PrependInt8Slot(slot, value, -99)  # always written
        elif kind == "u8":
            b.PrependUint8Slot(slot, value, 255)
        elif kind == "i32":
            b.PrependInt32Slot(slot, value, -99999)
        elif kind == "u32":
            b.PrependUint32Slot(slot, value, 0xFFFFFFFF)
        elif kind == "i64":
            b.PrependInt64Slot(slot, value, -99999)
    return b.EndObject()


def serialize(g, oracle=False, signature=True):
    g = twin(g) if oracle else g
    b = flatbuffers.Builder(1 << 16)
    # Buffers: 0 is the empty sentinel.
    buffer_of, buffers = {}, []
    empty = table(b, [])
    buffers.append(empty)
    for i, t in enumerate(g.tensors):
        if t["data"] is not None:
            data = b.CreateNumpyVector(np.frombuffer(t["data"], dtype=np.uint8))
            buffers.append(table(b, [(0, "off", data)]))
            buffer_of[i] = len(buffers) - 1
    tensors = []
    for i, t in enumerate(g.tensors):
        name = b.CreateString(t["name"])
        shape = vector(b, t["shape"], "i32")
        fields = [(0, "off", shape), (1, "i8", t["type"]), (2, "u32", buffer_of.get(i, 0)), (3, "off", name)]
        if i in g.quantized:
            scale = vector(b, [0.5], "f32")
            b.StartVector(8, 1, 8)
            b.PrependInt64(0)
            zero = b.EndVector()
            fields.append((4, "off", table(b, [(2, "off", scale), (3, "off", zero)])))
        tensors.append(table(b, fields))
    if g.shared_name:
        # FlatBuffers lets many tables point at one string: a small file whose names are huge once copied.
        count, length = g.shared_name
        name = b.CreateString("n" * length)
        shape = vector(b, [1], "i32")
        extra = table(b, [(0, "off", shape), (1, "i8", FLOAT32), (2, "u32", 0), (3, "off", name)])
        tensors += [extra] * count
    codes, code_index = [], {}
    ops = []
    for o in g.ops:
        code, options_type = OPS[o["op"]] if o["op"] in OPS else (32, 0)
        key = o["op"]
        if key not in code_index:
            # TFLite registers BROADCAST_TO from version 2 on.
            fields = [(0, "i8", min(code, 127)), (2, "i32", 2 if key == "BROADCAST_TO" else 1), (3, "i32", code)]
            if code == 32:
                fields.append((1, "off", b.CreateString(g.custom or "MyCustomOp")))
            codes.append(table(b, fields))
            code_index[key] = len(codes) - 1
        opt_fields = []
        for slot, kind, value in o["options"]:
            if kind == "vf32":
                opt_fields.append((slot, "off", vector(b, list(value), "f32")))
            elif kind == "vi32":
                opt_fields.append((slot, "off", vector(b, list(value), "i32")))
            else:
                opt_fields.append((slot, kind, value))
        options = table(b, opt_fields) if options_type else None
        ins = vector(b, o["ins"], "i32")
        outs = vector(b, o["outs"], "i32")
        fields = [(0, "u32", code_index[key]), (1, "off", ins), (2, "off", outs)]
        if options is not None:
            fields += [(3, "u8", options_type), (4, "off", options)]
        ops.append(table(b, fields))
    sg = table(b, [(0, "off", vector(b, tensors, "off")), (1, "off", vector(b, g.inputs, "i32")),
                   (2, "off", vector(b, g.outputs, "i32")), (3, "off", vector(b, ops, "off")),
                   (4, "off", b.CreateString("main"))])
    fields = [(0, "u32", 3), (1, "off", vector(b, codes, "off")), (2, "off", vector(b, [sg], "off")),
              (3, "off", b.CreateString("mlgo-corpus test model")), (4, "off", vector(b, buffers, "off"))]
    if signature:
        def maps(indexes, strip):
            out = []
            for i in indexes:
                name = g.tensors[i]["name"]
                key = name[:-2] if strip and name.endswith(":0") else name
                out.append(table(b, [(0, "off", b.CreateString(key)), (1, "u32", i)]))
            return vector(b, out, "off")
        sig_in = maps(g.inputs, True)
        sig_out = maps(g.outputs, True)
        sig = table(b, [(0, "off", sig_in), (1, "off", sig_out), (2, "off", b.CreateString("action")),
                        (4, "u32", 0)])
        fields.append((7, "off", vector(b, [sig], "off")))
    model = table(b, fields)
    b.Finish(model, file_identifier=b"TFL3")
    return bytes(b.Output())


def twin(g):
    """The oracle's copy: int64 graph inputs arrive as float32, int64 outputs leave as int32."""
    t = Graph()
    t.tensors = [dict(x) for x in g.tensors]
    t.ops, t.inputs, t.outputs = [], [], []
    for i in g.inputs:
        if g.tensors[i]["type"] == INT64:
            f = t.tensor(g.tensors[i]["name"], FLOAT32, g.tensors[i]["shape"])
            t.tensors[i]["name"] += "/as_int64"
            t.ops.append({"op": "CAST", "ins": [f], "outs": [i], "options": []})
            t.inputs.append(f)
        else:
            t.inputs.append(i)
    t.ops += g.ops
    for i in g.outputs:
        if g.tensors[i]["type"] == INT64:
            t.outputs.append(t.op("CAST", [i], INT32, g.tensors[i]["shape"], out_name=g.tensors[i]["name"] + "/int32"))
        else:
            t.outputs.append(i)
    return t


def boundaries(rng, kind):
    """999 sorted float32 quantile edges, duplicates included, as the vocab makes them."""
    if kind == 0:
        return np.zeros(999, dtype=np.float32)  # a feature that is always 0
    samples = rng.geometric(1.0 / (2 + 10 * kind), size=20000) - 1
    return np.sort(np.quantile(samples, np.linspace(0, 1, 999)).astype(np.float32))


def dense(g, rng, x, units, activation, keep=False):
    inputs = g.shape(x)[-1]
    w = g.const("w%d" % len(g.tensors), rng.normal(0, 1.0 / np.sqrt(inputs), (units, inputs)), FLOAT32)
    bias = g.const("b%d" % len(g.tensors), rng.normal(0, 0.1, units), FLOAT32)
    shape = g.shape(x)[:-1] + [units] if keep else [int(np.prod(g.shape(x)) // inputs), units]
    return g.op("FULLY_CONNECTED", [x, w, bias], FLOAT32, shape,
                [(0, "i8", activation), (1, "i8", 0), (2, "u8", 1 if keep else 0)])


def spec(logging_name, tensor, ttype, shape):
    return {"logging_name": logging_name,
            "tensor_spec": {"name": tensor.rsplit(":", 1)[0], "port": 0, "type": ttype, "shape": shape}}


def training_inputs(g):
    for name, ttype in (("action_discount", FLOAT32), ("action_reward", FLOAT32), ("action_step_type", INT32)):
        g.inputs.append(g.tensor(name, ttype, [1]))


def type_of(feature):
    return {"int64_t": INT64, "float": FLOAT32, "int32_t": INT32}[feature["type"]]


def inliner(features, rng, zero_fed=True):
    g = Graph()
    training_inputs(g)
    names = [f for f in features if f["name"] not in ("inlining_default", "inlining_decision")]
    names = names[:-2]  # an older model: the compiler's last features are ignored
    if zero_fed:
        names = names + [{"name": "future_feature", "type": "int64_t", "shape": [1]}]  # fed zeros
    pieces = []
    for k, f in enumerate(names):
        x = g.tensor("action_%s:0" % f["name"], type_of(f), f["shape"])
        g.inputs.append(x)
        b = boundaries(rng, k % 5)
        bucket = g.op("BUCKETIZE", [x], INT32, f["shape"], [(0, "vf32", b)])
        as_float = g.op("CAST", [bucket], FLOAT32, f["shape"])
        count = g.const("count%d" % k, np.float32(len(b)), FLOAT32)
        norm = g.op("DIV", [as_float, count], FLOAT32, f["shape"], [(0, "i8", 0)])
        axis = g.const("axis%d" % k, np.int32(-1), INT32)
        col = g.op("EXPAND_DIMS", [norm, axis], FLOAT32, f["shape"] + [1])
        sq = (g.op("SQUARE", [col], FLOAT32, f["shape"] + [1]) if k % 2
              else g.op("MUL", [col, col], FLOAT32, f["shape"] + [1], [(0, "i8", 0)]))
        parts = [col, sq]
        if k % 7 == 3:
            parts.append(g.op("SQRT", [col], FLOAT32, f["shape"] + [1]))
        pieces.append(g.op("CONCATENATION", parts, FLOAT32, [1, len(parts)], [(0, "i32", -1), (1, "i8", 0)]))
    width = sum(g.shape(p)[-1] for p in pieces)
    x = g.op("CONCATENATION", pieces, FLOAT32, [1, width], [(0, "i32", -1), (1, "i8", 0)])
    x = dense(g, rng, x, 40, 1)
    x = dense(g, rng, x, 40, 1)
    x = dense(g, rng, x, 20, 1)
    logits = dense(g, rng, x, 2, 0)
    g.tensors[logits]["name"] = "inlining_logits:0"
    axis = g.const("argmax_axis", np.int32(1), INT32)
    decision = g.op("ARG_MAX", [logits, axis], INT64, [1], [(0, "i8", INT64)], out_name="inlining_decision:0")
    g.outputs = [decision, logits]
    return g, [spec("inlining_decision", "inlining_decision:0", "int64_t", [1]),
               spec("inlining_logits", "inlining_logits:0", "float", [1, 2])]


def inliner_echo(features, rng):
    """The inliner-shaped network, whose arg-max is then forced to the compiler's inlining_default: the full
    evaluation cost, the default inliner's decisions (so a harvest does the same compile work as --policy=default)."""
    g, specs = inliner(features, rng)
    logits = g.outputs[1]
    decision_op = g.ops.pop()  # the ARG_MAX
    g.tensors[logits]["name"] = "network_logits"
    default = g.tensor("action_inlining_default:0", INT64, [1])
    g.inputs.append(default)
    d = g.op("EXPAND_DIMS", [g.op("CAST", [default], FLOAT32, [1]), g.const("e_def", np.int32(-1), INT32)],
             FLOAT32, [1, 1])
    push = g.op("MUL", [d, g.const("push", np.array([[-2000, 2000]], dtype=np.float32), FLOAT32)], FLOAT32, [1, 2],
                [(0, "i8", 0)])
    push = g.op("ADD", [push, g.const("bias_def", np.array([[1000, -1000]], dtype=np.float32), FLOAT32)], FLOAT32,
                [1, 2], [(0, "i8", 0), (1, "u8", 0)])
    forced = g.op("ADD", [logits, push], FLOAT32, [1, 2], [(0, "i8", 0), (1, "u8", 0)], out_name="inlining_logits:0")
    decision_op["ins"][0] = forced
    g.ops.append(decision_op)
    g.outputs = [decision_op["outs"][0], forced]
    return g, specs


def constant1(features, rng):
    """LLVM's trivial inliner test model: every call site is inlined."""
    g = Graph()
    training_inputs(g)
    x = g.tensor("action_callee_users:0", INT64, [1])
    g.inputs.append(x)
    zero = g.const("zero", np.array([0], dtype=np.int64), INT64)
    one = g.const("one", np.array([1], dtype=np.int64), INT64)
    nothing = g.op("MUL", [x, zero], INT64, [1], [(0, "i8", 0)])
    decision = g.op("ADD", [nothing, one], INT64, [1], [(0, "i8", 0)], out_name="inlining_decision:0")
    g.outputs = [decision]
    return g, [spec("inlining_decision", "inlining_decision:0", "int64_t", [1])]


def embedding_sign(features, rng):
    """Inlines exactly where the callee's IR2Vec embedding (float [dim], the
    compiler's callee_embedding) sums to more than the spec's "threshold"
    (default 0): FULLY_CONNECTED with a row of zeros (bias: the threshold) and
    a row of ones, then the arg-max (a tie is 0)."""
    g = Graph()
    training_inputs(g)
    spec_of = {f["name"]: f for f in features}
    dim = spec_of["callee_embedding"]["shape"][-1]
    x = g.tensor("action_callee_embedding:0", FLOAT32, [dim])
    g.inputs.append(x)
    weights = g.const("rows", np.vstack([np.zeros(dim), np.ones(dim)]), FLOAT32)
    bias = g.const("threshold", np.array([spec_of["callee_embedding"].get("threshold", 0.0), 0.0]), FLOAT32)
    logits = g.op("FULLY_CONNECTED", [x, weights, bias], FLOAT32, [1, 2], [(0, "i8", 0), (1, "i8", 0), (2, "u8", 0)],
                  out_name="inlining_logits:0")
    axis = g.const("argmax_axis", np.int32(1), INT32)
    decision = g.op("ARG_MAX", [logits, axis], INT64, [1], [(0, "i8", INT64)], out_name="inlining_decision:0")
    g.outputs = [decision]
    return g, [spec("inlining_decision", "inlining_decision:0", "int64_t", [1])]


def evict(features, rng):
    g = Graph()
    training_inputs(g)
    cols, mask = [], None
    float_flagged = False
    stage_table = g.const("stage_embedding", rng.normal(0, 1, (7, 4)), FLOAT32)
    for k, f in enumerate(features):
        n = int(np.prod(f["shape"]))
        name = f["name"]
        if name == "index_to_evict" or (n != 33 and n != 1):
            continue  # other shapes: ignored by this model
        x = g.tensor("action_%s:0" % name, type_of(f), f["shape"])
        g.inputs.append(x)
        flat = x if f["shape"] == [n] else g.op("RESHAPE", [x], type_of(f), [n], [(0, "vi32", [n])])
        if name == "mask":
            one = g.const("mask_one", np.array([1], dtype=NP[type_of(f)]), type_of(f))
            mask = g.op("EQUAL", [flat, one], BOOL, [33])
            continue
        if n == 1:  # progress: one scalar tiled across the columns
            multiples = g.const("tile%d" % k, np.array([33], dtype=np.int32), INT32)
            tiled = g.op("TILE", [flat, multiples], type_of(f), [33])
            as_float = tiled if type_of(f) == FLOAT32 else g.op("CAST", [tiled], FLOAT32, [33])
            cols.append(g.op("EXPAND_DIMS", [as_float, g.const("ax%d" % k, np.int32(1), INT32)], FLOAT32, [33, 1]))
            continue
        if name.endswith("_stage") and type_of(f) == INT64:
            cols.append(g.op("GATHER", [stage_table, flat], FLOAT32, [33, 4], [(0, "i32", 0), (1, "i32", 0)]))
            continue
        if k % 6 == 5:  # discarded by the model
            continue
        if type_of(f) == FLOAT32 and not float_flagged:
            float_flagged = True
            inf = g.const("inf%d" % k, np.array([np.inf], dtype=np.float32), FLOAT32)
            flag = g.op("EQUAL", [flat, inf], BOOL, [33])
            flag = g.op("CAST", [flag], FLOAT32, [33])
            cols.append(g.op("EXPAND_DIMS", [flag, g.const("axf%d" % k, np.int32(1), INT32)], FLOAT32, [33, 1]))
        b = boundaries(rng, k % 5)
        bucket = g.op("BUCKETIZE", [flat], INT32, [33], [(0, "vf32", b)])
        as_float = g.op("CAST", [bucket], FLOAT32, [33])
        norm = g.op("DIV", [as_float, g.const("n%d" % k, np.float32(len(b)), FLOAT32)], FLOAT32, [33], [(0, "i8", 0)])
        cols.append(g.op("EXPAND_DIMS", [norm, g.const("ax%d" % k, np.int32(1), INT32)], FLOAT32, [33, 1]))
    width = sum(g.shape(c)[-1] for c in cols)
    x = g.op("CONCATENATION", cols, FLOAT32, [33, width], [(0, "i32", 1), (1, "i8", 0)])
    x = g.op("RESHAPE", [x, g.const("rank3", np.array([1, 33, width], dtype=np.int32), INT32)], FLOAT32,
             [1, 33, width], [(0, "vi32", [1, 33, width])])
    x = dense(g, rng, x, 80, 1, keep=True)
    x = dense(g, rng, x, 40, 1, keep=True)
    x = dense(g, rng, x, 1, 0, keep=True)
    logits = g.op("RESHAPE", [x, g.const("flat", np.array([1, 33], dtype=np.int32), INT32)], FLOAT32, [1, 33],
                  [(0, "vi32", [1, 33])])
    mask2 = g.op("RESHAPE", [mask, g.const("mask2", np.array([1, 33], dtype=np.int32), INT32)], BOOL, [1, 33],
                 [(0, "vi32", [1, 33])])
    lowest = g.const("lowest", np.array([np.finfo(np.float32).min], dtype=np.float32), FLOAT32)
    masked = g.op("SELECT_V2", [mask2, logits, lowest], FLOAT32, [1, 33], out_name="evict_logits:0")
    decision = g.op("ARG_MAX", [masked, g.const("evict_axis", np.int32(1), INT32)], INT64, [1],
                    [(0, "i8", INT64)], out_name="index_to_evict:0")
    g.outputs = [decision, masked]
    return g, [spec("index_to_evict", "index_to_evict:0", "int64_t", [1]),
               spec("evict_logits", "evict_logits:0", "float", [1, 33])]


def evict_mask_argmax(features, rng):
    """LLVM's trivial eviction test model: the arg-max of the mask."""
    g = Graph()
    mask = g.tensor("action_mask:0", INT64, [33])
    g.inputs.append(mask)
    as_int32 = g.op("CAST", [mask], INT32, [33])  # TFLite's ARG_MAX takes no int64 input
    decision = g.op("ARG_MAX", [as_int32, g.const("axis", np.int32(0), INT32)], INT64, [], [(0, "i8", INT64)],
                    out_name="index_to_evict:0")
    g.outputs = [decision]
    return g, [spec("index_to_evict", "index_to_evict:0", "int64_t", [1])]


def insurance(features, rng):
    """The spec's less common builtins on real inliner features: TRANSPOSE, BROADCAST_TO, SUB, SQUARED_DIFFERENCE,
    ABS, LOG, SQRT, MEAN, ZEROS_LIKE, FILL, RELU, RELU6, TANH, SELECT, SQUEEZE, int32 GATHER, a bias-less dense."""
    g = Graph()
    names = [f for f in features if f["name"] not in ("inlining_default", "inlining_decision")][:8]
    cols = []
    for f in names:
        x = g.tensor("action_%s:0" % f["name"], INT64, [1])
        g.inputs.append(x)
        cols.append(g.op("EXPAND_DIMS", [g.op("CAST", [x], FLOAT32, [1]), g.const("e%d" % len(cols), np.int32(0), INT32)],
                         FLOAT32, [1, 1]))
    n = len(cols)
    x = g.op("CONCATENATION", cols, FLOAT32, [1, n], [(0, "i32", 1), (1, "i8", 0)])
    t = g.op("TRANSPOSE", [x, g.const("perm", np.array([1, 0], dtype=np.int32), INT32)], FLOAT32, [n, 1])
    b = g.op("BROADCAST_TO", [t, g.const("bshape", np.array([n, 3], dtype=np.int32), INT32)], FLOAT32, [n, 3])
    c = g.op("SUB", [b, g.const("offsets", np.array([1.5, -2.0, 7.0], dtype=np.float32), FLOAT32)], FLOAT32, [n, 3],
             [(0, "i8", 0), (1, "u8", 0)])
    d = g.op("SQUARED_DIFFERENCE", [c, g.const("centre", rng.normal(0, 3, (n, 1)), FLOAT32)], FLOAT32, [n, 3])
    e = g.op("ABS", [g.op("SUB", [d, g.const("fifty", np.float32(50), FLOAT32)], FLOAT32, [n, 3],
                          [(0, "i8", 0), (1, "u8", 0)])], FLOAT32, [n, 3])
    f = g.op("LOG", [g.op("ADD", [e, g.const("one_f", np.float32(1), FLOAT32)], FLOAT32, [n, 3],
                          [(0, "i8", 0), (1, "u8", 0)])], FLOAT32, [n, 3])
    h = g.op("SQRT", [f], FLOAT32, [n, 3])
    m = g.op("MEAN", [h, g.const("axes", np.array([1], dtype=np.int32), INT32)], FLOAT32, [n], [(0, "u8", 0)])
    z = g.op("ZEROS_LIKE", [m], FLOAT32, [n])
    fill = g.op("FILL", [g.const("dims", np.array([n], dtype=np.int32), INT32), g.const("half", np.float32(1.9), FLOAT32)],
                FLOAT32, [n])
    cond = g.op("EQUAL", [g.op("RELU", [g.op("SUB", [m, fill], FLOAT32, [n], [(0, "i8", 0), (1, "u8", 0)])],
                               FLOAT32, [n]), z], BOOL, [n])
    sel = g.op("SELECT", [cond, fill, m], FLOAT32, [n])
    sq = g.op("SQUEEZE", [g.op("EXPAND_DIMS", [sel, g.const("e0", np.int32(0), INT32)], FLOAT32, [1, n])], FLOAT32,
              [n], [(0, "vi32", [0])])
    picked = g.op("GATHER", [sq, g.const("pick", np.array([n - 1, 0, 3], dtype=np.int32), INT32)], FLOAT32, [3],
                  [(0, "i32", 0), (1, "i32", 0)])
    w = g.const("w_nobias", rng.normal(0, 1, (4, 3)), FLOAT32)
    dense4 = g.op("FULLY_CONNECTED", [picked, w, -1], FLOAT32, [1, 4], [(0, "i8", 2), (1, "i8", 0), (2, "u8", 0)])
    out = g.op("RELU6", [g.op("TANH", [dense4], FLOAT32, [1, 4])], FLOAT32, [1, 4], out_name="insurance_out:0")
    decision = g.op("ARG_MAX", [sq, g.const("am", np.int32(0), INT32)], INT64, [], [(0, "i8", INT64)],
                    out_name="inlining_decision:0")
    g.outputs = [decision, out, sq]
    g.tensors[sq]["name"] = "insurance_selected:0"
    return g, [spec("inlining_decision", "inlining_decision:0", "int64_t", [1]),
               spec("insurance_out", "insurance_out:0", "float", [1, 4]),
               spec("insurance_selected", "insurance_selected:0", "float", [n])]


def wide_broadcasts(features, rng):
    """constant1, plus three EQUALs broadcasting [4096,1] against [1,4096]: 48 MiB of bool results, legal; an
    evaluator that materialised an index map per broadcast operand would need 384 MiB more."""
    g, s = constant1(features, rng)
    rows = g.tensor("rows", INT32, [4096, 1])
    cols = g.tensor("cols", INT32, [1, 4096])
    g.inputs += [rows, cols]
    for k in range(3):
        g.outputs.append(g.op("EQUAL", [rows, cols] if k % 2 == 0 else [cols, rows], BOOL, [4096, 4096],
                              out_name="equal%d" % k))
    return g, s


def bool_bytes(features, rng):
    """Bool tensors holding bytes other than 0 and 1 (a constant here; the caller feeds the input): every
    non-zero byte is true. Outputs: EQUAL with true, CAST to float32 and int32, SELECT_V2, each of the input and
    of the constant."""
    g, s = constant1(features, rng)
    flags = g.tensor("flags", BOOL, [4])
    g.inputs.append(flags)
    const = g.tensor("const_flags", BOOL, [4], bytes([0, 1, 2, 255]))
    true = g.const("all_true", np.ones(4), BOOL)
    ones = g.const("ones", np.ones(4), FLOAT32)
    zeros = g.const("zeros", np.zeros(4), FLOAT32)
    for name, t in (("input", flags), ("const", const)):
        g.outputs.append(g.op("EQUAL", [t, true], BOOL, [4], out_name="equal_" + name))
        g.outputs.append(g.op("CAST", [t], FLOAT32, [4], out_name="float_" + name))
        g.outputs.append(g.op("CAST", [t], INT32, [4], out_name="int_" + name))
        g.outputs.append(g.op("SELECT_V2", [t, ones, zeros], FLOAT32, [4], out_name="select_" + name))
    return g, s


def malformed(kind, features, rng):
    if kind == "unknown-operator":
        g, s = inliner(features, rng)
        g.ops[5]["op"] = "SOFTMAX"
        return g, s
    if kind == "custom-operator":
        g, s = inliner(features, rng)
        g.ops[5]["op"] = "CUSTOM"
        g.custom = "MlgoSecretSauce"
        return g, s
    if kind == "quantized":
        g, s = inliner(features, rng)
        g.quantized.add(g.inputs[4])
        return g, s
    if kind == "shape-mismatch":  # callee_users as two int64s: 16 bytes against the compiler's 8
        g, s = constant1(features, rng)
        g.tensors[g.inputs[-1]]["name"] = "action_caller_users:0"
        g.inputs.append(g.tensor("action_callee_users:0", INT64, [2]))
        return g, s
    if kind == "huge-tensors":  # 5 x 64 MiB of activations: far more than any policy needs
        g, s = constant1(features, rng)
        for k in range(5):
            g.tensor("scratch_%d" % k, FLOAT32, [1 << 24])
        return g, s
    if kind == "shared-output":  # 256 operators writing one [4096,4096] tensor, each broadcasting [4096,1] x [1,4096]
        g, s = constant1(features, rng)
        rows = g.tensor("rows", FLOAT32, [4096, 1])
        cols = g.tensor("cols", FLOAT32, [1, 4096])
        g.inputs += [rows, cols]
        grid = g.op("ADD", [rows, cols], FLOAT32, [4096, 4096], [(0, "i8", 0), (1, "u8", 0)], out_name="grid")
        for _ in range(255):
            g.ops.append({"op": "ADD", "ins": [rows, cols], "outs": [grid], "options": [(0, "i8", 0), (1, "u8", 0)]})
        return g, s
    if kind == "shared-names":  # 1024 tensors naming one 1 MiB string: 1 GiB of names once copied
        g, s = constant1(features, rng)
        g.shared_name = (1024, 1 << 20)
        return g, s
    if kind == "tile-overflow":  # TILE's multiples times the input's dimension overflow int64
        g, s = constant1(features, rng)
        x = g.const("pair", np.array([1, 2], dtype=np.int64), INT64)
        g.op("TILE", [x, g.const("multiples", np.array([1 << 62], dtype=np.int64), INT64)], INT64, [4])
        return g, s
    if kind == "two-writers":  # a small case of shared-output: the second ADD overwrites the first's result
        g, s = constant1(features, rng)
        sum_op = g.ops[-1]
        g.ops.append({"op": "MUL", "ins": sum_op["ins"], "outs": sum_op["outs"], "options": [(0, "i8", 0)]})
        return g, s
    if kind == "output-twice":  # one operator naming its output tensor twice (found by fuzz/policy_dir)
        g, s = constant1(features, rng)
        g.ops[-1]["outs"] = g.ops[-1]["outs"] * 2
        return g, s
    if kind == "wrong-decision-name":  # entry 0 is not the inliner's decision
        g, s = constant1(features, rng)
        return g, [spec("index_to_evict", "inlining_decision:0", "int64_t", [1])]
    if kind == "wide-decision":  # the decision has two elements
        g = Graph()
        x = g.tensor("action_callee_users:0", INT64, [1])
        g.inputs.append(x)
        pair = g.const("pair", np.array([1, 0], dtype=np.int64), INT64)
        g.outputs = [g.op("ADD", [x, pair], INT64, [2], [(0, "i8", 0)], out_name="inlining_decision:0")]
        return g, [spec("inlining_decision", "inlining_decision:0", "int64_t", [2])]
    if kind == "bad-output-spec":
        g, s = constant1(features, rng)
        return g, [spec("inlining_decision", "no_such_output:0", "int64_t", [1])]
    raise SystemExit("unknown malformed kind " + kind)


def main():
    args = sys.argv[1:]
    seed = 1
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    kind, features_path, out = args
    features = json.load(open(features_path))["features"]
    rng = np.random.default_rng(seed)
    builders = {"inliner": inliner, "inliner_echo": inliner_echo, "constant1": constant1, "evict": evict, "evict_mask_argmax": evict_mask_argmax,
                "insurance": insurance, "wide_broadcasts": wide_broadcasts, "bool_bytes": bool_bytes,
                "embedding_sign": embedding_sign}
    if kind.startswith("malformed-"):
        g, output_spec = malformed(kind[len("malformed-"):], features, rng)
    else:
        g, output_spec = builders[kind](features, rng)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "model.tflite"), "wb") as f:
        f.write(serialize(g))
    if not kind.startswith("malformed-"):
        with open(os.path.join(out, "oracle.tflite"), "wb") as f:
            f.write(serialize(g, oracle=True))
    with open(os.path.join(out, "output_spec.json"), "w") as f:
        json.dump(output_spec, f, indent=2)


if __name__ == "__main__":
    main()
