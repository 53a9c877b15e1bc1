#!/usr/bin/env python3
"""Sets keys in a CometBFT config.toml in place, keeping its comments and layout.

Usage: cometbft_config.py FILE KEY=VALUE [KEY=VALUE ...]
  KEY is `name` for a top-level key or `section.name` (e.g. p2p.laddr, consensus.timeout_commit).
  VALUE is written as TOML: strings are quoted unless they already are, or are true/false/numbers.
A key that is not present in FILE is an error (a typo must not pass silently).
"""
import re
import sys


def toml_value(raw: str) -> str:
    if raw in ("true", "false") or re.fullmatch(r"-?\d+", raw) or raw.startswith(('"', "[")):
        return raw
    return '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'


def set_keys(text: str, assignments: dict) -> str:
    lines = text.splitlines(keepends=True)
    section = ""
    pending = dict(assignments)
    for i, line in enumerate(lines):
        header = re.match(r"^\s*\[([^\]]+)\]\s*$", line)
        if header:
            section = header.group(1).strip()
            continue
        kv = re.match(r"^(\s*)([A-Za-z0-9_\-]+)(\s*=\s*)(.*?)(\r?\n)?$", line)
        if not kv:
            continue
        full = f"{section}.{kv.group(2)}" if section else kv.group(2)
        if full in pending:
            lines[i] = f"{kv.group(1)}{kv.group(2)}{kv.group(3)}{toml_value(pending.pop(full))}{kv.group(5) or ''}"
    if pending:
        raise KeyError(f"keys not found in config: {', '.join(sorted(pending))}")
    return "".join(lines)


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    assignments = {}
    for arg in argv[2:]:
        key, sep, value = arg.partition("=")
        if not sep:
            print(f"cometbft_config.py: expected KEY=VALUE, got {arg!r}", file=sys.stderr)
            return 2
        assignments[key] = value
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        text = set_keys(text, assignments)
    except KeyError as e:
        print(f"cometbft_config.py: {path}: {e.args[0]}", file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
