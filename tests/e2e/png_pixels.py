#!/usr/bin/python3
"""Decodes a PNG (8-bit RGB or RGBA, non-interlaced, as Chromium writes its
screenshots) with the standard library alone and prints, as JSON, its size,
how many pixels are not white, and how many are close to each #RRGGBB colour
given: an independent check that a page rendered, and rendered its charts.

usage: png_pixels.py FILE [#RRGGBB ...]
"""
import json
import struct
import sys
import zlib


def decode(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise SystemExit("%s: not a PNG (bad signature)" % path)
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if zlib.crc32(kind + body) != struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])[0]:
            raise SystemExit("%s: chunk %r has a bad CRC" % (path, kind))
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise SystemExit("%s: unsupported PNG (depth %d, colour type %d, interlace %d)" % (path, depth, colour, interlace))
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, channels, rows


def main():
    path, colours = sys.argv[1], [c.lstrip("#") for c in sys.argv[2:]]
    width, height, channels, rows = decode(path)
    targets = [tuple(int(c[i:i + 2], 16) for i in (0, 2, 4)) for c in colours]
    non_white, near = 0, [0] * len(targets)
    for row in rows:
        for x in range(0, len(row), channels):
            r, g, b = row[x], row[x + 1], row[x + 2]
            if r < 250 or g < 250 or b < 250:
                non_white += 1
            for i, (tr, tg, tb) in enumerate(targets):
                if abs(r - tr) <= 12 and abs(g - tg) <= 12 and abs(b - tb) <= 12:
                    near[i] += 1
    print(json.dumps({"width": width, "height": height, "non_white": non_white,
                      "near": dict(zip(sys.argv[2:], near))}))


main()
