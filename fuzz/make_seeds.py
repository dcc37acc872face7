#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into OUT/<target>/.

The seeds are small, valid (and a few nearly valid) inputs shaped like the
test fixtures; objects and archives are built here with the real clang and
llvm-ar, so no binary blob is checked in.

usage: make_seeds.py OUT [--clang CLANG] [--llvm-ar AR]
"""
import argparse
import hashlib
import json
import os
import struct
import subprocess
import sys
import tempfile


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def compile_commands(out):
    t = "compile_commands"
    write(out, t, "arguments", json.dumps([
        {"directory": "/src", "arguments": ["clang", "-c", "a.c", "-o", "obj/a.o"], "file": "a.c"},
        {"directory": "/src", "arguments": ["clang", "-c", "b.c", "-o"], "file": "b.c"},
    ]))
    write(out, t, "command", json.dumps([
        {"directory": "/src", "command": "clang -c 'x y.c' -o \"obj/x y.o\" -DQ=\\\"1\\\"", "file": "x y.c"},
        {"directory": "/src", "command": "clang -c c.c", "output": "c.o", "file": "c.c"},
        {"directory": "/src", "command": "clang 'unterminated", "file": "d.c"},
        {"file": "no-directory.c"},
        7,
    ], indent=2))
    write(out, t, "empty", "[]")


def linker_params(out):
    t = "linker_params"
    write(out, t, "plain", "-o\nbin/app\nobj/a.o\nobj/b.o\n-lm\nlib/libx.a\n")
    write(out, t, "nested", "@inner.params\n\"obj/with space.o\"\n-o\napp\n")
    write(out, t, "no-output", "a.o\nb.o\n--start-group\nc.o\n--end-group\n")
    write(out, t, "trailing-o", "a.o\n-o\n")
    write(out, t, "self", "@link.params\n")


def aquery(out):
    t = "aquery"
    link = {"mnemonic": "CppLink", "arguments": ["clang", "-o", "bin/app", "obj/a.o", "@inner.params", "obj/b.o"]}
    write(out, t, "link", json.dumps({"actions": [{"mnemonic": "CppCompile", "arguments": ["clang", "-c"]}, link]}))
    write(out, t, "two-links", json.dumps({"actions": [link, dict(link, arguments=["ld", "x.o", "-o", "y"])]}))
    write(out, t, "no-link", json.dumps({"actions": [], "artifacts": [{"id": 1, "pathFragmentId": 2}]}))


def corpus_description(out):
    t = "corpus_description"
    write(out, t, "plain", json.dumps({"has_thinlto": False, "modules": ["a", "dir/b", "lib/libx.a/m.o"]}, indent=2))
    write(out, t, "override", json.dumps({
        "global_command_override": ["-cc1", "-O2"], "has_thinlto": True, "extra": {"n": 1.5, "big": 2**64},
        "modules": []}, indent=2))
    # A module name with a byte that is not UTF-8, as Python writes it.
    write(out, t, "surrogate", '{\n  "modules": [\n    "caf\\udce9",\n    "\\u00e9"\n  ]\n}')


def llvmcmd(out):
    t = "llvmcmd"
    write(out, t, "cc1", "-cc1\0-triple\0x86_64-unknown-linux-gnu\0-O2\0-emit-obj\0")
    write(out, t, "empty-fields", "\0\0-O3\0")


def command_line_screen(out):
    t = "command_line_screen"
    nul = lambda *args: "".join(a + "\0" for a in args)
    write(out, t, "cc1", nul("-cc1", "-triple", "x86_64-pc-linux-gnu", "-Oz", "-emit-obj", "-mllvm",
                             "-inline-threshold=10", "-dependency-file", "x.d", "-ivfsoverlay", "/o.yaml"))
    write(out, t, "driver", nul("-Oz", "-g", "-fno-omit-frame-pointer", "-MD"))
    write(out, t, "response-file", nul("-cc1", "-main-file-name", "@/tmp/x.rsp"))
    write(out, t, "response-file-driver", nul("-O2", "-isystem", "@/tmp/x.rsp"))
    write(out, t, "wl-plugin", nul("-O2", "-Wl,-plugin,/tmp/x.so"))
    write(out, t, "xlinker", nul("-O2", "-Xlinker", "-plugin", "-Xlinker", "/tmp/x.so"))
    write(out, t, "mllvm-exec", nul("-cc1", "-mllvm", "-exec-on-ir-change=/bin/true"))
    write(out, t, "mllvm-joined", nul("-O2", "-mllvm=-attributor-view-dep-graph"))
    write(out, t, "xclang-mllvm", nul("-O2", "-Xclang", "-mllvm", "-Xclang", "-pgo-view-counts=graph"))
    write(out, t, "config", nul("-O2", "--config=/tmp/x.cfg", "-ccc-install-dir", "/tmp"))
    write(out, t, "two-jobs", nul("-O2", "-fno-integrated-as", "-save-temps"))


def trajectories(out):
    t = "trajectories"
    write(out, t, "plain", '{"module":"a.o","decisions":[1,0,0,1]}\n{"module":"lib/b.o","decisions":[]}\n')
    write(out, t, "then", '{"module":"a.o","decisions":[0,1],"then":"default"}\n'
                          '{"module":"c.o","decisions":[1],"then":"random:0.5:7"}\n')
    write(out, t, "duplicate", '{"module":"a.o","decisions":[1]}\n{"module":"a.o","decisions":[0]}\n')
    write(out, t, "bad", '{"module":"../x","decisions":[2,"1",true]}\n')


def explored_shards(out):
    t = "explored_shards"
    def line(module, trajectory, size, kept, decisions, flipped=None):
        site = ("null" if flipped is None or not size else
                '{"caller":"f","callee":"g","site":%d,"loc":%s}' % (flipped, "null" if flipped else '"a.c:3:7"'))
        return ('{"module":"%s","trajectory":%d,"base_policy":"default","flipped_step":%s,"flipped_site":%s,'
                '"status":"%s","reason":"","detail":"","native_size":%s,"kept":%s,"decisions":%s}\n' % (
                    module, trajectory, "null" if flipped is None else flipped, site, "ok" if size else "failed",
                    size if size else "null", "true" if kept else "false",
                    decisions if size else "null"))
    shard0 = (line("a.o", 0, 120, False, "[1,0,1]") + line("a.o", 1, 110, True, "[0,0,1]", 0) +
              line("a.o", 2, None, False, None, 1) + line("lib/b.o", 0, 40, True, "[]"))
    shard1 = line("c.o", 0, 300, True, "[1]") + line("c.o", 1, 310, False, "[0]", 0)
    write(out, t, "good", shard0 + "--\n" + shard1)
    write(out, t, "foreign", shard0 + "--\n" + line("a.o", 0, 1, True, "[]"))
    write(out, t, "two-kept", line("a.o", 0, 1, True, "[1]") + line("a.o", 1, 1, True, "[0]", 0) + "--\n")
    write(out, t, "gap", line("c.o", 0, 1, True, "[]") + "--\n" + line("c.o", 2, 1, False, "[]"))
    write(out, t, "types", '{"module":7,"trajectory":-1,"kept":"yes","decisions":[2]}\n--\n')


def shell_words(out):
    t = "shell_words"
    write(out, t, "quotes", "clang -c 'a b.c' \"x\\\"y\" c\\ d -o out.o")
    write(out, t, "newline", "a\\\nb \"$HOME\" '`'")
    write(out, t, "unterminated", "clang \"abc")


def log_bytes(header, records):
    """A training log: header, then ('context', name) | ('obs', n, bytes) | ('out', n, bytes)."""
    text = json.dumps(header, separators=(",", ":")).encode() + b"\n"
    for r in records:
        if r[0] == "context":
            text += json.dumps({"context": r[1]}, separators=(",", ":")).encode() + b"\n"
        elif r[0] == "obs":
            text += b'{"observation":%d}\n' % r[1] + r[2] + b"\n"
        else:
            text += b'{"outcome":%d}\n' % r[1] + r[2] + b"\n"
    return text


def spec(name, type_="int64_t", shape=(1,)):
    return {"name": name, "type": type_, "port": 0, "shape": list(shape)}


def training_log(out):
    t = "training_log"
    inliner = {"features": [spec("callee_users"), spec("inlining_default"), spec("inlining_decision")],
               "score": spec("reward", "float")}
    obs = lambda a, b, c: struct.pack("<qqq", a, b, c)
    write(out, t, "inliner", log_bytes(inliner, [
        ("context", "main"), ("obs", 0, obs(3, 1, 1)), ("out", 0, struct.pack("<f", 0.5)),
        ("obs", 1, obs(10, 0, 0)), ("context", "f"), ("obs", 0, obs(0x0a0a, 1, 1)), ("context", "main"),
        ("obs", 2, obs(1, 1, 0))]))
    regalloc = {"features": [spec("mask", shape=(33,)), spec("weights", "float", (33,)), spec("index_to_evict")],
                "score": spec("reward", "float")}
    write(out, t, "regalloc", log_bytes(regalloc, [
        ("context", "foo"), ("obs", 0, b"\1\0\0\0\0\0\0\0" * 33 + b"\0\0\x80\x3f" * 33 + struct.pack("<q", 32)),
        ("out", 0, struct.pack("<f", -1.25))]))
    # An interactive channel: one stream per header, advice declared, no score.
    channel = {"features": [spec("sz"), spec("inlining_default")], "advice": spec("inlining_decision")}
    stream = log_bytes(channel, [("context", "a"), ("obs", 0, struct.pack("<qq", 5, 1)), ("obs", 1, struct.pack("<qq", 9, 0))])
    write(out, t, "channel", stream + stream)
    write(out, t, "types", log_bytes({"features": [spec("i8", "int8_t", (2, 2)), spec("d", "double", (0,)),
                                                   spec("u16", "uint16_t")]},
                                     [("context", "x"), ("obs", 0, b"\n\n\n\n\1\2")]))
    write(out, t, "truncated", log_bytes(inliner, [("context", "main"), ("obs", 0, obs(1, 1, 1))])[:-9])
    channel_header(out, stream)


def channel_header(out, inliner_stream):
    """What the compiler sends on an interactive channel's .out, one header per
    stream: the inliner's (two streams), eviction's, priority's, and headers
    the host must refuse."""
    t = "channel_header"
    write(out, t, "inliner", inliner_stream + inliner_stream)
    evict = {"features": [spec("mask", shape=(33,)), spec("is_free", shape=(33,))],
             "advice": spec("index_to_evict")}
    write(out, t, "evict", log_bytes(evict, [("context", "f"), ("obs", 0, struct.pack("<33q", *([1] * 32 + [0])) +
                                                                 struct.pack("<33q", *([0] * 33)))]))
    priority = {"features": [spec("li_size"), spec("stage"), spec("weight", "float")],
                "advice": spec("priority", "float")}
    write(out, t, "priority", log_bytes(priority, [("context", "g"), ("obs", 0, struct.pack("<qqf", 12, 1, 0.5))]))
    no_default = {"features": [spec("sz")], "advice": spec("inlining_decision")}
    write(out, t, "no-default", log_bytes(no_default, [("context", "a"), ("obs", 0, struct.pack("<q", 5))]))
    short_mask = {"features": [spec("mask", shape=(32,))], "advice": spec("index_to_evict", shape=(2,))}
    write(out, t, "short-mask", log_bytes(short_mask, [("context", "f"), ("obs", 0, b"\1" * 256)]))


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


def tfrecord(payload):
    length = struct.pack("<Q", len(payload))
    return length + struct.pack("<I", masked(crc32c(length))) + payload + struct.pack("<I", masked(crc32c(payload)))


def tfrecords(out):
    t = "tfrecord"
    write(out, t, "two", tfrecord(b"\x0a\x02\x08\x01") + tfrecord(b""))
    write(out, t, "bad-crc", tfrecord(b"payload")[:-1] + b"\0")
    # A SequenceExample as the datasets hold them: an int64 list of two steps
    # ([1, 2] and []) and a float list of one step ([0.5]).
    def ld(field, body):
        return bytes([field << 3 | 2, len(body)]) + body
    ints = ld(1, ld(3, ld(1, b"\x01\x02"))) + ld(1, ld(3, b""))
    floats = ld(1, ld(2, ld(1, struct.pack("<f", 0.5))))
    lists = ld(1, ld(1, b"d") + ld(2, ints)) + ld(1, ld(1, b"r") + ld(2, floats))
    write(out, t, "sequence-example", tfrecord(ld(2, lists)))


def journal(out):
    t = "journal"
    line = lambda **kw: json.dumps(dict({"input": "obj/a.o", "name": "a", "status": "ok", "reason": "", "size": 10,
                                         "mtime_ns": 1700000000000000000}, **kw), separators=(",", ":"))
    write(out, t, "resume", "\n".join([
        line(), line(input="lib/x.a", member="m.o", name="lib/x.a/m.o"),
        line(input="b.o", name="b", status="failed", reason="bitcode_section_missing", size=0, mtime_ns=-1),
        line(status="bogus"), '{"input":"torn']) )


def harvest_journal(out):
    """A shard directory as harvest-logs writes it (journal, summary, default-size
    cache, joined by "\n--\n"), with lines copied from a real 2-shard harvest."""
    t = "harvest_journal"
    header = json.dumps({"options": {"corpus": "/data/corpus", "problem": "inliner", "compiler": "opt",
                                     "opt_path": "opt-22", "passes": "default<Oz>", "llc_path": "llc-22",
                                     "log_format": "interactive", "policy": "random:0.5:1", "shard": "1/2"}})
    def record(module, status="ok", log=True, **kw):
        r = {"module": module, "status": status, "reason": "" if status == "ok" else "compiler_failed",
             "detail": "", "exit_status": "exit 0" if status == "ok" else "exit 1", "stderr_tail": "",
             "seconds": 0.412, "decisions": 118 if log else 0, "streams": 0, "log_written": log,
             "native_size": 1731 if status == "ok" else None, "default_size": 1802 if status == "ok" else None,
             "reward": 0.0394 if status == "ok" else None}
        r.update(kw)
        return json.dumps(r)
    journal = "\n".join([header, record("m10"), record("m3", log=False), record("dir/m7", "failed", False),
                         record("m5", "timeout", False, reason="timeout"), record("m10", regalloc_score=12.5)]) + "\n"
    summary = json.dumps({"mlgo_version": "mlgo-corpus 0.1.0 (git abc, LLVM 22.1.0)", "corpus": "/data/corpus",
                          "problem": "inliner", "compiler": "opt", "mode": "plugin",
                          "mode_reason": "auto: the plugin loaded cleanly", "policy": "random:0.5:1", "shard": "1/2",
                          "interrupted": False, "modules": {"planned": 6, "ok": 2, "failed": 1, "timeout": 1,
                                                            "skipped_done": 0, "without_log": 1},
                          "decisions": 236, "seconds": 3.5, "decisions_per_second": 67.4,
                          "harvester_peak_rss_kb": 58000, "harvester_cpu_seconds": 0.8}, indent=2)
    cache = header + "\n" + json.dumps({"module": "m10", "native_size": 1802}) + "\n"
    write(out, t, "shard", journal + "\n--\n" + summary + "\n--\n" + cache)
    write(out, t, "torn", journal + record("m11")[:40])
    write(out, t, "wrong-types", header + "\n" + record("m1", decisions="5", log_written=1) + "\n--\n{\"shard\": 1}")


def ir2vec_vocab(out):
    t = "ir2vec_vocab"
    good = {"Opcodes": {"Ret": [0.5, -1.0], "Add": [1, 2]}, "Types": {"VoidTy": [0.0, 1e-3]},
            "Arguments": {"Constant": [2.5, 3]}}
    write(out, t, "good", json.dumps(good).encode())
    ragged = json.loads(json.dumps(good))
    ragged["Types"]["IntegerTy"] = [1.0]
    write(out, t, "ragged", json.dumps(ragged).encode())
    write(out, t, "no-types", json.dumps({"Opcodes": good["Opcodes"], "Arguments": good["Arguments"]}).encode())
    write(out, t, "not-json", b"{\"Opcodes\": [")



def mir2vec_vocab(out):
    t = "mir2vec_vocab"
    good = {"Opcodes": {"MOV": [0.5, -1.0], "ADD": [1, 2]}, "CommonOperands": {"Immediate": [0.0, 1e-3]},
            "PhysicalRegisters": {"GR32": [2.5, 3]}, "VirtualRegisters": {"GR32": [1, 1]}}
    write(out, t, "good", json.dumps(good).encode())
    ragged = json.loads(json.dumps(good))
    ragged["PhysicalRegisters"]["GR64"] = [1.0]
    write(out, t, "ragged", json.dumps(ragged).encode())
    write(out, t, "no-virtual", json.dumps({k: v for k, v in good.items() if k != "VirtualRegisters"}).encode())
    write(out, t, "ir2vec", json.dumps({"Opcodes": good["Opcodes"], "Types": {}, "Arguments": {}}).encode())
    write(out, t, "not-json", b"{\"Opcodes\": [")


def openke(out):
    """entity2id.txt, relation2id.txt and train2id.txt, separated by lines %%."""
    t = "openke"

    def files(entities, relations, triplets):
        def counted(lines):
            return "\n".join([str(len(lines))] + lines) + "\n"
        return (counted(["%s\t%d" % (e, i) for i, e in enumerate(entities)]) + "%%\n" +
                counted(["%s\t%d" % (r, i) for i, r in enumerate(relations)]) + "%%\n" +
                counted(["%d %d %d" % x for x in triplets]))

    write(out, t, "llvm", files(["Add", "Ret", "IntegerTy", "VoidTy", "Variable", "Constant", "ICMP_EQ"],
                                ["Type", "Next", "Arg0", "Arg1"], [(0, 2, 0), (0, 1, 1), (0, 4, 2), (1, 3, 0)]))
    write(out, t, "mir", files(["ADD32rr", "MOV32ri", "RET", "Immediate", "MBB", "PhyReg_GR32", "PhyReg_GR64",
                                "VirtReg_GR32", "VirtReg_GR64"],
                               ["Next", "Arg0", "Arg1"], [(0, 1, 0), (0, 7, 1), (1, 3, 2), (2, 5, 1)]))
    write(out, t, "out-of-range", files(["Add"], ["Type"], [(0, 3, 0)]))
    write(out, t, "short", "2\nAdd\t0\n%%\n1\nType\t0\n%%\n1\n0 0 0\n")

def baseline_cache(out):
    t = "baseline_cache"
    fmt, key = "mlgo-baseline-cache/1", "a" * 64

    def check(k, size):
        h = hashlib.sha256()
        for part in (fmt, k, str(size)):
            h.update(f"{len(part)}:{part}".encode())
        return h.hexdigest()

    def entry(k=key, size=1234, check_key=key):
        return json.dumps({"format": fmt, "key": k, "native_size": size, "check": check(check_key, size),
                           "module": "m0"}) + "\n"

    write(out, t, "valid", entry())
    write(out, t, "foreign", entry(k="b" * 64, check_key="b" * 64))
    write(out, t, "edited", entry().replace("1234", "1000"))
    write(out, t, "truncated", entry()[:50])


def decision_sites(out):
    """Sites files as harvest-logs --decision_sites writes them, and a few near misses."""
    t = "decision_sites"
    site = lambda caller, callee, n, loc="m.c:3:7", d=True, p=False: json.dumps(
        {"caller": caller, "callee": callee, "site": n, "loc": loc, "default": d, "decision": p})
    write(out, t, "module", "\n".join([site("main", "helper", 0), site("main", "helper", 1, None),
                                       site("_ZN1A1fEv", "", 0, "a.cc:10:1", False, True)]) + "\n")
    write(out, t, "no-newline", site("f", "g", 0))
    write(out, t, "duplicate", site("f", "g", 0) + "\n" + site("f", "g", 0) + "\n")
    write(out, t, "wrong-types", '{"caller": 1, "callee": "g", "site": -1, "loc": 3, "default": "yes"}\n')


def inline_decisions(out):
    """Decisions files as export-decisions writes them, and a few near misses."""
    t = "inline_decisions"
    d = lambda caller, callee, n, p: {"caller": caller, "callee": callee, "site": n, "inline": p}
    line = lambda module, source, decisions: json.dumps(
        {"module": module, "source_filename": source, "decisions": decisions}, separators=(",", ":"),
        ensure_ascii=False)
    write(out, t, "modules", "\n".join([
        line("lib/lapi.o", "../src/lapi.c", [d("lua_call", "luaD_call", 0, False), d("lua_call", "luaD_call", 2, True)]),
        line("lstate.o", "", []),
        line("a.o", "src/a.c", [d("_ZN1A1fEv", "", 0, True), d("main", "caf\u00e9", 18446744073709551615, False)]),
    ]) + "\n")
    write(out, t, "blank-lines", "\n\n" + line("m.o", "m.c", [d("f", "g", 0, True)]) + "\n  \n")
    write(out, t, "no-newline", line("m.o", "m.c", [d("f", "g", 0, True)]))
    write(out, t, "duplicate-module", line("m.o", "a.c", []) + "\n" + line("m.o", "b.c", []) + "\n")
    write(out, t, "duplicate-source", line("a.o", "m.c", []) + "\n" + line("b.o", "m.c", []) + "\n")
    write(out, t, "duplicate-site", line("m.o", "m.c", [d("f", "g", 0, True), d("f", "g", 0, False)]) + "\n")
    write(out, t, "wrong-types",
          '{"module": "", "source_filename": null, "decisions": [{"caller": 1, "callee": "g", "site": -1, '
          '"inline": "yes", "loc": "m.c:1:1"}]}\n')


def objects(out, clang, llvm_ar):
    t = "object_sections"
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.c")
        with open(src, "w") as f:
            f.write("int f(int x) { return x + 1; }\n")
        builds = {
            "elf.o": ["-target", "x86_64-linux-gnu", "-O2"],
            "elf-nocmd.o": ["-target", "x86_64-linux-gnu", "-fembed-bitcode=bitcode"],
            "coff.o": ["-target", "x86_64-windows-msvc"],
            "macho.o": ["-target", "arm64-apple-macos"],
        }
        for name, flags in builds.items():
            obj = os.path.join(tmp, name)
            embed = [] if any(x.startswith("-fembed") for x in flags) else ["-Xclang", "-fembed-bitcode=all"]
            subprocess.run([clang, "-c", src, "-o", obj] + embed + flags, check=True)
            with open(obj, "rb") as f:
                obj_bytes = f.read()
            write(out, t, name, obj_bytes)
            write(out, "native_size", name, obj_bytes)
        archive = os.path.join(tmp, "lib.a")
        subprocess.run([llvm_ar, "rc", archive, os.path.join(tmp, "elf.o"), os.path.join(tmp, "elf-nocmd.o")],
                       check=True)
        with open(archive, "rb") as f:
            write(out, t, "lib.a", f.read())
    write(out, t, "not-an-object", "hello\n")
    write(out, "native_size", "not-an-object", "hello\n")
    write(out, "native_size", "elf-header-only", b"\x7fELF\x02\x01\x01" + b"\0" * 9 + b"\x01\0\x3e\0")
    # bitcode: plain, with a ThinLTO summary, and a wrapper header (Darwin).
    bitcode = {}
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.c")
        with open(src, "w") as f:
            f.write("static int g(int x) { return x * 3; }\nint f(int x) { return g(x) + 1; }\n")
        for name, flags in {"plain.bc": ["-emit-llvm", "-O2"], "thin.bc": ["-flto=thin", "-O2"],
                            "wrapper.bc": ["-emit-llvm", "-target", "arm64-apple-macos"]}.items():
            bc = os.path.join(tmp, name)
            subprocess.run([clang, "-c", src, "-o", bc] + flags, check=True)
            with open(bc, "rb") as f:
                bitcode[name] = f.read()
            write(out, "bitcode", name, bitcode[name])
            write(out, "thinlto_index", name, bitcode[name])
    write(out, "bitcode", "magic-only", b"BC\xc0\xde")
    write(out, "thinlto_index", "magic-only", b"BC\xc0\xde")
    linked_sections(out, bitcode)


def linked_sections(out, bitcode):
    """A linked binary's merged .llvmbc and .llvmcmd sections, separated by a
    line --llvmcmd--: the objects' bitcode files one after the other (with
    alignment padding), and one cc1 command line per object."""
    t = "linked_sections"
    sep = b"\n--llvmcmd--\n"
    nul = lambda *args: b"".join(a.encode() + b"\0" for a in args)
    cmd = lambda main: nul("-cc1", "-triple", "x86_64-unknown-linux-gnu", "-main-file-name", main, "-O2")
    plain, thin, wrapper = bitcode["plain.bc"], bitcode["thin.bc"], bitcode["wrapper.bc"]
    pad = lambda b: b + b"\0" * (-len(b) % 8)
    write(out, t, "two", pad(plain) + thin + sep + cmd("a.c") + cmd("dir/b.c"))
    write(out, t, "wrapped", b"\0" * 8 + wrapper + wrapper + sep + b"\0\0" + cmd("m.c") + cmd("m.c"))
    write(out, t, "one", plain + sep + nul("-cc1", "-O2"))
    write(out, t, "truncated", plain[:len(plain) // 2] + sep + nul("-O2", "-cc1"))
    write(out, t, "no-main-file-name", thin + sep + nul("-cc1", "-main-file-name") + nul("-cc1", "-main-file-name", ""))


def compile_server_protocol(out):
    """The pipe between harvest-logs and mlgo-compile-server: messages (a u32
    count, then per string a u32 length and its bytes), one after another."""
    t = "compile_server_protocol"
    def message(*strings):
        data = struct.pack("<I", len(strings))
        for s in strings:
            b = s.encode() if isinstance(s, str) else s
            data += struct.pack("<I", len(b)) + b
        return data
    greeting = message("mlgo-compile-server", "3", "22.1.0")
    write(out, t, "greeting-and-replies", greeting + message("4242", "-1", "0", "") +
          message("4243", "3", "13", "") + message("-1", "-1", "0", "unknown tool 'cc'"))
    write(out, t, "request", message("opt", "/dev/null", "/tmp/w/stderr", "", "/tmp/w", "3", "2", "-", "0",
                                     "opt-22", "-passes=default<Oz>", "m.bc", "llc-22", "-O2", "/tmp/extra"))
    write(out, t, "confined-request", message("llc", "/dev/null", "/dev/null", "/tmp", "/tmp/w", "1", "0", "2", "1",
                                              "llc-22", "/usr", "/lib", "/usr/bin/llc-22"))
    write(out, t, "pid-beyond-pid_t", message("4294967297", "-1", "0", ""))
    write(out, t, "bad-numbers", message(" 12", "+3", "4096", "") + message("12", "-2", "0", ""))
    write(out, t, "truncated", greeting[:-3])
    write(out, t, "huge-count", struct.pack("<I", 1 << 20) + message("x"))
    write(out, t, "huge-string", struct.pack("<II", 1, (1 << 20) + 1) + b"x")


def regalloc_remarks(out):
    """llc -pass-remarks-output YAML filtered to regalloc, as harvest-logs asks for it."""
    t = "regalloc_remarks"
    def remark(function, args, name="SpillReloadCopies", kind="Missed"):
        text = "--- !%s\nPass:            regalloc\nName:            %s\n" % (kind, name)
        text += "DebugLoc:        { File: m.c, Line: 3, Column: 0 }\nFunction:        %s\n" % function
        text += "Args:\n" + "".join("  - %s: '%s'\n" % kv for kv in args) + "...\n"
        return text
    spills = [("NumSpills", "1"), ("TotalSpillsCost", "2.5"), ("String", " spills "), ("NumReloads", "2"),
              ("TotalReloadsCost", "3.0"), ("String", " reloads "), ("TotalFoldedSpillsCost", "0"),
              ("TotalFoldedReloadsCost", "1.25e-1"), ("NumCopies", "4"), ("TotalCopiesCost", "10")]
    write(out, t, "two-functions", remark("main", spills) + remark("_ZN1A1fEv", spills[:3]) +
          remark("main", [("String", "done")], name="LoopSpillReloadCopies"))
    write(out, t, "empty", "")
    write(out, t, "not-a-number", remark("f", [("TotalSpillsCost", "lots")]))
    write(out, t, "passed", remark("g", spills, kind="Passed") + remark("", spills))
    write(out, t, "huge", remark("h", [("TotalReloadsCost", "1e308"), ("TotalSpillsCost", "nan")]))
    write(out, t, "broken-yaml", "--- !Missed\nPass: regalloc\nName: [SpillReloadCopies\n")


def link_order(out):
    t = "link_order"
    write(out, t, "good", json.dumps({"mlgo_version": "mlgo-corpus 0.1.0", "input_type": "params",
                                      "input": "link.params", "modules": ["c", "a", "lib/x.a/m.o", "dir/b"]}, indent=2))
    write(out, t, "partial", json.dumps({"input_type": "binary", "input": "app", "modules": ["a", "c"]}))
    write(out, t, "unknown-module", json.dumps({"input_type": "binary", "input": "app",
                                                "modules": ["a", "dir/b", "c", "z"]}))
    write(out, t, "twice", json.dumps({"input_type": "binary", "input": "app", "modules": ["a", "a", "dir/b", "c"]}))
    write(out, t, "wrong-types", json.dumps({"input_type": 1, "input": "app", "modules": "a"}))
    write(out, t, "not-json", '{"modules": [')


def tflite_models(out):
    """Policies written by the tests' own model writer (tests/e2e/tflite_models.py),
    on a handful of inliner and eviction features so the seeds stay small: the
    models for tflite_model, each with its output_spec.json for policy_dir."""
    t = "tflite_model"
    writer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "e2e", "tflite_models.py")
    inliner = [{"name": n, "type": "int64_t", "shape": [1]} for n in ("callee_basic_block_count", "callsite_height",
                                                                      "cost_estimate", "caller_users", "callee_users")]
    evict = [{"name": "mask", "type": "int64_t", "shape": [33]},
             {"name": "is_free", "type": "int64_t", "shape": [33]},
             {"name": "weighed_reads_by_max", "type": "float", "shape": [33]},
             {"name": "instructions", "type": "int64_t", "shape": [300]},
             {"name": "instructions_mapping", "type": "int64_t", "shape": [33, 300]},
             {"name": "mbb_frequencies", "type": "float", "shape": [100]},
             {"name": "mbb_mapping", "type": "int64_t", "shape": [300]}]
    kinds = [("inliner", inliner), ("constant1", inliner), ("insurance", inliner), ("evict_mask_argmax", evict), ("evict", evict),
             ("malformed-unknown-operator", inliner), ("malformed-quantized", inliner)]
    with tempfile.TemporaryDirectory() as tmp:
        for kind, features in kinds:
            spec = os.path.join(tmp, kind + ".json")
            with open(spec, "w") as f:
                json.dump({"features": features}, f)
            r = subprocess.run(["/usr/bin/python3", writer, kind, spec, os.path.join(tmp, kind)], capture_output=True, text=True)
            if r.returncode != 0:  # a kind needing features we left out: skip it, say so
                print("make_seeds: no %s model: %s" % (kind, r.stderr.strip().splitlines()[-1:]), file=sys.stderr)
                continue
            with open(os.path.join(tmp, kind, "model.tflite"), "rb") as f:
                model = f.read()
            write(out, t, kind + ".tflite", model)
            # policy_dir: the directory's two files in one input.
            with open(os.path.join(tmp, kind, "output_spec.json"), "rb") as f:
                write(out, "policy_dir", kind, model + b"\n--output_spec--\n" + f.read())
    write(out, t, "not-a-model", "TFL3 but not really\n")
    write(out, "policy_dir", "not-a-model", "TFL3\n--output_spec--\n[]")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--clang", default="clang-22")
    p.add_argument("--llvm-ar", default="llvm-ar-22")
    a = p.parse_args()
    for make in (compile_commands, linker_params, aquery, corpus_description, llvmcmd, command_line_screen, trajectories, explored_shards,
                 shell_words, training_log,
                 tfrecords, journal, harvest_journal, baseline_cache, decision_sites, inline_decisions,
                 ir2vec_vocab,
                 mir2vec_vocab, openke, compile_server_protocol, regalloc_remarks, link_order):
        make(a.out)
    objects(a.out, a.clang, a.llvm_ar)
    tflite_models(a.out)


if __name__ == "__main__":
    main()
