#!/usr/bin/python3
"""An independent decoder for the TFRecord/SequenceExample files we write.

It declares TensorFlow's example.proto/feature.proto messages with the same
field numbers (built at run time, no protoc needed), checks each record's
framing, parses every payload with the real protobuf library and prints the
records as JSON: [{key: [[values of step 0], [values of step 1], ...]}]; with
--example, tf.train.Examples as [{key: [values]}].
"""
import json
import math
import struct
import sys

# --example: the records are tf.train.Examples (mlgo-ir2vec embed --tfrecord).
EXAMPLE = "--example" in sys.argv
if EXAMPLE:
    sys.argv.remove("--example")

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory


def build_messages():
    f = descriptor_pb2.FileDescriptorProto(name="mlgo_test_example.proto", package="mlgotest", syntax="proto3")

    def message(name, fields, nested=()):
        m = f.message_type.add(name=name)
        for n in nested:
            m.nested_type.add().CopyFrom(n)
        for fname, number, ftype, label, type_name in fields:
            fd = m.field.add(name=fname, number=number, type=ftype, label=label)
            if type_name:
                fd.type_name = type_name
        return m

    T = descriptor_pb2.FieldDescriptorProto
    opt, rep = T.LABEL_OPTIONAL, T.LABEL_REPEATED
    message("FloatList", [("value", 1, T.TYPE_FLOAT, rep, None)])
    message("Int64List", [("value", 1, T.TYPE_INT64, rep, None)])
    message("BytesList", [("value", 1, T.TYPE_BYTES, rep, None)])
    feature = message("Feature", [("bytes_list", 1, T.TYPE_MESSAGE, opt, ".mlgotest.BytesList"),
                                  ("float_list", 2, T.TYPE_MESSAGE, opt, ".mlgotest.FloatList"),
                                  ("int64_list", 3, T.TYPE_MESSAGE, opt, ".mlgotest.Int64List")])
    feature.oneof_decl.add(name="kind")
    for fd in feature.field:
        fd.oneof_index = 0
    message("FeatureList", [("feature", 1, T.TYPE_MESSAGE, rep, ".mlgotest.Feature")])
    entry = descriptor_pb2.DescriptorProto(name="FeatureListEntry")
    entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=opt)
    entry.field.add(name="value", number=2, type=T.TYPE_MESSAGE, label=opt, type_name=".mlgotest.FeatureList")
    entry.options.map_entry = True
    message("FeatureLists", [("feature_list", 1, T.TYPE_MESSAGE, rep, ".mlgotest.FeatureLists.FeatureListEntry")],
            nested=[entry])
    feature_entry = descriptor_pb2.DescriptorProto(name="FeatureEntry")
    feature_entry.field.add(name="key", number=1, type=T.TYPE_STRING, label=opt)
    feature_entry.field.add(name="value", number=2, type=T.TYPE_MESSAGE, label=opt, type_name=".mlgotest.Feature")
    feature_entry.options.map_entry = True
    message("Features", [("feature", 1, T.TYPE_MESSAGE, rep, ".mlgotest.Features.FeatureEntry")],
            nested=[feature_entry])
    message("Example", [("features", 1, T.TYPE_MESSAGE, opt, ".mlgotest.Features")])
    message("SequenceExample", [("context", 1, T.TYPE_MESSAGE, opt, ".mlgotest.Features"),
                                ("feature_lists", 2, T.TYPE_MESSAGE, opt, ".mlgotest.FeatureLists")])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    name = "mlgotest.Example" if EXAMPLE else "mlgotest.SequenceExample"
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(name)) \
        if hasattr(message_factory, "GetMessageClass") else \
        message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName(name))


def records(data):
    offset = 0
    while offset < len(data):
        (length,) = struct.unpack_from("<Q", data, offset)
        payload = data[offset + 12: offset + 12 + length]
        assert len(payload) == length, "truncated record"
        offset += 12 + length + 4
        assert offset <= len(data), "truncated record"
        yield payload


def feature_values(feature):
    kind = feature.WhichOneof("kind")
    if kind == "bytes_list":
        return [v.decode("utf-8", "replace") for v in feature.bytes_list.value]
    values = list(feature.int64_list.value) if kind == "int64_list" else list(feature.float_list.value)
    # JSON has no NaN or infinity (regalloc's use_def_density may hold them).
    return [v if not isinstance(v, float) or math.isfinite(v) else repr(v) for v in values]


def main():
    SequenceExample = build_messages()
    out = []
    if EXAMPLE:  # tf.train.Example records: [{key: [values]}]
        for payload in records(open(sys.argv[1], "rb").read()):
            example = SequenceExample()
            example.ParseFromString(payload)
            out.append({k: feature_values(v) for k, v in example.features.feature.items()})
        json.dump(out, sys.stdout, allow_nan=False)
        return
    for payload in records(open(sys.argv[1], "rb").read()):
        example = SequenceExample()
        example.ParseFromString(payload)
        assert example.SerializeToString() is not None
        record = {}
        for key, feature_list in example.feature_lists.feature_list.items():
            steps = []
            for feature in feature_list.feature:
                kind = feature.WhichOneof("kind")
                values = {"int64_list": list(feature.int64_list.value),
                          "float_list": list(feature.float_list.value)}[kind]
                # JSON has no NaN or infinity (regalloc's use_def_density may hold them).
                steps.append([v if not isinstance(v, float) or math.isfinite(v) else repr(v) for v in values])
            record[key] = steps
        out.append(record)
    json.dump(out, sys.stdout, allow_nan=False)


main()
