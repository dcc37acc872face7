"""Byte sizes of MLGO tensor specs, as training-log-protocol.md gives them:
shared by the tests' independent Python readers (never by the C++ code)."""

SIZES = {"float": 4, "double": 8, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2,
         "int32_t": 4, "uint32_t": 4, "int64_t": 8, "uint64_t": 8}


def tensor_bytes(spec):
    """The bytes of one value of the tensor `spec` ({"type", "shape"})."""
    count = 1
    for d in spec["shape"]:
        count *= int(d)
    return count * SIZES[spec["type"]]
