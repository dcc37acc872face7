"""Byte sizes of MLGO tensor specs and a log's records, as
training-log-protocol.md gives them: shared by the tests' independent Python
readers (never by the C++ code)."""
import json

SIZES = {"float": 4, "double": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
         "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


def tensor_bytes(spec):
    """The bytes of one value of the tensor `spec` ({"type", "shape"})."""
    count = 1
    for d in spec["shape"]:
        count *= int(d)
    return count * SIZES[spec["type"]]


def read_exact(f, n, what="record"):
    """n bytes of tensors and the newline that ends them; `what` names them in the error."""
    data = f.read(n)
    if len(data) != n:
        raise ValueError(f"truncated {what}: {len(data)} of {n} bytes")
    if f.read(1) != b"\n":
        raise ValueError(f"no newline after {what}")
    return data


def logged_observations(path):
    """(header, [(context, observation bytes: the features then the advice)]) of a training log."""
    with open(path, "rb") as f:
        header = json.loads(f.readline())
        size = sum(tensor_bytes(s) for s in header["features"])
        score = tensor_bytes(header["score"]) if "score" in header else None
        out, context = [], None
        while True:
            line = f.readline()
            if not line:
                return header, out
            record = json.loads(line)
            if "context" in record:
                context = record["context"]
            elif "observation" in record:
                out.append((context, read_exact(f, size)))
            elif "outcome" in record:
                read_exact(f, score)
