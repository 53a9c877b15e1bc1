#!/usr/bin/env python3
"""Sets keys in a CometBFT config.toml in place, keeping its comments and layout; reads one.

Usage: cometbft_config.py [--report] FILE KEY=VALUE [KEY=VALUE ...]
       cometbft_config.py --get FILE KEY
  KEY is `name` for a top-level key or `section.name` (e.g. p2p.laddr, consensus.timeout_commit).
  VALUE is written as TOML: strings are quoted unless they already are, or are true/false/numbers.
  --report prints one line "KEY: OLD -> NEW" for each key whose value changed.
  --get prints KEY's value (a string without its quotes).
A key that is not present in FILE is an error (a typo must not pass silently).
"""
import re
import sys
import tomllib


def toml_value(raw: str) -> str:
    if raw in ("true", "false") or re.fullmatch(r"-?\d+", raw) or raw.startswith(('"', "[")):
        return raw
    return '"' + raw.replace("\\", "\\\\").replace('"', '\\"') + '"'


def get_key(text: str, key: str):
    """The value of `key` ("name" or "section.name") in TOML `text`; KeyError if absent."""
    value = tomllib.loads(text)
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(f"key not found in config: {key}")
        value = value[part]
    return value


def set_keys(text: str, assignments: dict, changes: list = None) -> str:
    """`text` with each key of `assignments` set; appends (key, old, new) to `changes` for each
    key whose value differs from before."""
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
            new = toml_value(pending.pop(full))
            old = kv.group(4).strip()
            if changes is not None and old != new:
                changes.append((full, old, new))
            lines[i] = f"{kv.group(1)}{kv.group(2)}{kv.group(3)}{new}{kv.group(5) or ''}"
    if pending:
        raise KeyError(f"keys not found in config: {', '.join(sorted(pending))}")
    return "".join(lines)


def main(argv):
    if len(argv) == 4 and argv[1] == "--get":
        with open(argv[2], encoding="utf-8") as f:
            try:
                value = get_key(f.read(), argv[3])
            except KeyError as e:
                print(f"cometbft_config.py: {argv[2]}: {e.args[0]}", file=sys.stderr)
                return 1
        print(str(value).lower() if isinstance(value, bool) else value)
        return 0
    report = len(argv) > 1 and argv[1] == "--report"
    if report:
        argv = argv[:1] + argv[2:]
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
    changes = []
    try:
        text = set_keys(text, assignments, changes)
    except KeyError as e:
        print(f"cometbft_config.py: {path}: {e.args[0]}", file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if report:
        for key, old, new in changes:
            print(f"{key}: {old} -> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
