#!/usr/bin/python3
"""Hostile inputs to mlgo_corpus: each must raise MlgoError (a ValueError)
whose message names the file and the reason, never crash the interpreter.

usage: check_hostile.py WORK_DIR
Each case runs in its own python3 process, so that a crash (a signal) is
seen as one; prints one line per case and exits 1 if any case failed.
"""
import importlib.util
import json
import os
import random
import struct
import subprocess
import sys

HEADER = json.dumps({"features": [{"name": "x", "type": "int64_t", "port": 0, "shape": [1]},
                                  {"name": "inlining_decision", "type": "int64_t", "port": 0, "shape": [1]}]})
GOOD = (HEADER + "\n" + '{"context":"m"}\n' + '{"observation":0}\n').encode() + struct.pack("<qq", 5, 1) + b"\n"


# TFRecord framing: the fuzz seeds' writer (its CRC-32C and mask).
_seeds = importlib.util.spec_from_file_location(
    "make_seeds", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz", "make_seeds.py"))
make_seeds = importlib.util.module_from_spec(_seeds)
_seeds.loader.exec_module(make_seeds)


def frame(payload, length=None):
    if length is None:
        return make_seeds.tfrecord(payload)
    header = struct.pack("<Q", length)
    return header + struct.pack("<I", make_seeds.masked(make_seeds.crc32c(header))) + payload


def ld(field, body):
    return bytes([field << 3 | 2, len(body)]) + body


rng = random.Random(7)
LOGS = {
    "empty": (b"", "empty input"),
    "not-a-header": (b"hello\n", "bad JSON line"),
    "huge-shape": ((HEADER.replace("[1]", "[1099511627776]", 1) + "\n").encode(), "limit"),
    "truncated-tensor": (GOOD[:-5], "truncated"),
    "out-of-order": (GOOD.replace(b'"observation":0', b'"observation":3'), "out of order"),
    "outcome-without-score": (GOOD + b'{"outcome":0}\n' + struct.pack("<f", 1) + b"\n", "declares no score"),
    "no-newline-after-tensor": (GOOD[:-1] + b"X", "expected a newline"),
    # Messages quote the bad bytes: undecodable ones must not lose the message.
    "random-bytes": (b"\xff\xfe" + bytes(rng.randrange(256) for _ in range(4096)), "bad JSON line"),
    "header-then-junk": ((HEADER + "\n").encode() + bytes(rng.randrange(256) for _ in range(512)), ""),
}
TFRECORDS = {
    "bad-crc": (frame(b"payload")[:-1] + b"\0", "bad payload CRC"),
    "truncated-record": (frame(b"payload")[:-3], "truncated"),
    "length-near-2^64": (frame(b"", length=2**64 - 4) + b"x" * 16, "truncated payload"),
    # A bytes_list step, then an int64_list step, in one feature list.
    "mixed-bytes-list": (frame(ld(2, ld(1, ld(1, b"k") + ld(2, ld(1, ld(1, ld(1, b"abc"))) +
                                                              ld(1, ld(3, ld(1, b"\x01"))))))),
                         "a int64_list step in a list of bytes_list"),
    "length-past-message": (frame(b"\x12\x7f\x0a"), "runs past the end"),
}


def expect_error(call, path, reason):
    import mlgo_corpus
    try:
        call(path)
    except mlgo_corpus.MlgoError as e:
        message = str(e)
        assert isinstance(e, ValueError)
        assert message, "an empty message"
        assert reason in message, "message %r lacks %r" % (message, reason)
        assert os.path.basename(path) in message or "record" in message, "message %r names no file" % message
        return "raised: " + message.splitlines()[0][:160]
    raise AssertionError("no error")


def run_case(kind, name, path):
    import mlgo_corpus
    if kind == "log":
        reason = LOGS[name][1]
        first = expect_error(mlgo_corpus.read_log, path, reason)
        # Streaming reaches the same error (after any good batches).
        expect_error(lambda p: [len(b) for b in mlgo_corpus.iter_log(p, batch_size=1)], path, reason)
        return first
    if kind == "tfrecord":
        return expect_error(mlgo_corpus.read_tfrecord, path, TFRECORDS[name][1])
    if kind == "harvest-escape":
        return expect_error(mlgo_corpus.Harvest, path, "../../etc/passwd")
    if kind == "harvest-special-files":
        harvest = mlgo_corpus.Harvest(path)
        module = harvest["m.o"]
        first = expect_error(lambda p: module.read_log(), module.log_path, "not a regular file")
        expect_error(lambda p: module.sites(), module.sites_path, "a symbolic link below")
        return first
    if kind == "corpus-escape":
        return expect_error(mlgo_corpus.Corpus, path, "leaves the corpus")
    if kind == "directory-as-log":
        return expect_error(mlgo_corpus.read_log, path, "Is a directory")
    if kind == "context-at-end":
        log = mlgo_corpus.read_log(path)
        assert len(log) == 1 and log.decisions[0, 0] == 1
        return "read: 1 observation"
    raise AssertionError("unknown case " + kind)


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--case":
        print(run_case(*sys.argv[2:5]))
        return
    work = sys.argv[1]
    cases = []
    for name, (data, _) in LOGS.items():
        path = os.path.join(work, name + ".log")
        open(path, "wb").write(data)
        cases.append(("log", name, path))
    for name, (data, _) in TFRECORDS.items():
        path = os.path.join(work, name + ".tfrecord")
        open(path, "wb").write(data)
        cases.append(("tfrecord", name, path))
    harvest = os.path.join(work, "harvest")
    os.makedirs(harvest, exist_ok=True)
    with open(os.path.join(harvest, "harvest.jsonl"), "w") as f:
        f.write(json.dumps({"options": {}}) + "\n")
        f.write(json.dumps({"module": "../../etc/passwd", "status": "ok", "reason": "", "detail": "",
                            "exit_status": "", "stderr_tail": "", "seconds": 0, "decisions": 1, "streams": 1,
                            "log_written": True, "native_size": 10, "default_size": None,
                            "reward": None}) + "\n")
    cases.append(("harvest-escape", "module-name-leaves-the-directory", harvest))
    # A harvest whose log is a FIFO (a read would block forever) and whose
    # sites file is a symbolic link out of the directory.
    special = os.path.join(work, "special")
    os.makedirs(os.path.join(special, "logs"), exist_ok=True)
    with open(os.path.join(special, "harvest.jsonl"), "w") as f:
        f.write(json.dumps({"options": {}}) + "\n")
        f.write(json.dumps({"module": "m.o", "status": "ok", "reason": "", "detail": "", "exit_status": "",
                            "stderr_tail": "", "seconds": 0, "decisions": 1, "streams": 1, "log_written": True,
                            "native_size": 10, "default_size": None, "reward": None}) + "\n")
    os.mkfifo(os.path.join(special, "logs", "m.o.log"))
    os.symlink("/etc/passwd", os.path.join(special, "logs", "m.o.sites.jsonl"))
    cases.append(("harvest-special-files", "fifo-log-and-symlinked-sites", special))
    corpus = os.path.join(work, "corpus")
    os.makedirs(corpus, exist_ok=True)
    with open(os.path.join(corpus, "corpus_description.json"), "w") as f:
        json.dump({"has_thinlto": False, "modules": ["ok", "../outside"]}, f)
    cases.append(("corpus-escape", "module-name-leaves-the-corpus", corpus))
    cases.append(("directory-as-log", "directory", work))
    ending = os.path.join(work, "context-at-end.log")
    open(ending, "wb").write(GOOD + b'{"context":"n"}\n')
    cases.append(("context-at-end", "context-at-end", ending))

    failed = 0
    for kind, name, path in cases:
        child = subprocess.run([sys.executable, __file__, "--case", kind, name, path], capture_output=True, text=True,
                               timeout=60)
        if child.returncode != 0:
            failed += 1
            print("FAIL %s/%s: exit %d\n%s" % (kind, name, child.returncode, child.stderr[-2000:]))
        else:
            print("ok   %s/%s: %s" % (kind, name, child.stdout.strip()))
    print("%d cases, %d failed" % (len(cases), failed))
    sys.exit(1 if failed else 0)


main()
