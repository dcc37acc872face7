#!/usr/bin/env python3
"""Turns a tool's docs page (Markdown) into a help2man include file, so that
the man page carries the docs' description, formats and examples next to the
options help2man reads from the tool's own --help.

usage: docs_to_help2man.py DOCS_PAGE.md OUTPUT.h2m
"""
import re
import sys


def inline(text):
    """Markdown inline markup to troff font escapes."""
    text = text.replace("\\", "\\e")
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # links: keep the text
    text = re.sub(r"\*\*([^*]+)\*\*", r"\\fB\1\\fR", text)
    text = re.sub(r"`([^`]+)`", r"\\fB\1\\fR", text)
    text = text.replace("-", "\\-")
    return text


def line_start_safe(line):
    """A text line starting with . or ' would be read as a request."""
    return "\\&" + line if line.startswith((".", "'")) else line


def convert(markdown):
    out = []
    title_seen = False
    in_code = False
    paragraph_open = False
    for raw in markdown.splitlines():
        line = raw.rstrip()
        if line.startswith("```"):
            if in_code:
                out += [".fi", ".RE"]
            else:
                out += [".PP", ".RS 4", ".nf"]
            in_code = not in_code
            continue
        if in_code:
            out.append(line_start_safe(line.replace("\\", "\\e")))
            continue
        heading = re.match(r"^(#+)\s+(.*)$", line)
        if heading:
            if not title_seen and len(heading.group(1)) == 1:
                title_seen = True  # the page title is the man page's NAME
                continue
            text = inline(heading.group(2))
            out.append((".SS " if len(heading.group(1)) <= 2 else ".TP\n\\fB") + text +
                       ("" if len(heading.group(1)) <= 2 else "\\fR"))
            continue
        if re.match(r"^\|?\s*:?-{3,}", line):  # table separator: the row above was the header
            if len(out) >= 3 and out[-3] == ".TP":
                del out[-3:]
            continue
        if line.startswith("|"):
            cells = [inline(c.strip()) for c in line.strip("|").split("|")]
            out += [".TP", line_start_safe(cells[0] or "\\&"), line_start_safe(" \\(em ".join(c for c in cells[1:] if c) or "\\&")]
            continue
        item = re.match(r"^\s*(?:[-*]|\d+\.)\s+(.*)$", line)
        if item:
            out += [".IP \\(bu 2", line_start_safe(inline(item.group(1)))]
            continue
        if not line.strip():
            out.append(".PP")
            continue
        out.append(line_start_safe(inline(line.strip())))
    # Collapse repeated paragraph breaks, which groff would render as blank lines.
    text = "\n".join(out)
    text = re.sub(r"(\.PP\n)+", ".PP\n", text)
    return text.strip("\n") + "\n"


def main():
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        body = convert(f.read())
    with open(target, "w", encoding="utf-8") as f:
        f.write("[DETAILS]\n" + body + "\n[SEE ALSO]\n"
                "The full documentation is in /usr/share/doc/mlgo-corpus/docs/ and at the project's docs/ directory.\n")


if __name__ == "__main__":
    main()
