#!/usr/bin/env python3
"""`kairosd snapshots` by hand, on a stopped single node (docs/state-sync.md).

A node commits a few blocks (a transfer among them) and is stopped. Then, on its home:
- `snapshots export` takes a snapshot of the last committed height, whose app hash is the one
  kairosd logged for that height; `snapshots list -o json` lists it;
- `snapshots dump H` writes it as one file, `snapshots load FILE` adds that file to another
  home's snapshot directory (same height, hash and app hash), and a file with one changed byte is
  refused naming the chunk, and adds nothing;
- `snapshots restore H` into that other (empty) home gives the same app hash; a second restore
  is refused (the store is not empty);
- `snapshots delete H` removes it from the list; errors name what is missing.
"""

import os
import shutil

import harness
from harness import check, log


def snapshots(home, *args, expect_rc=0):
    return harness.run_split([harness.KAIROSD, "--home", home, "snapshots", *args],
                             expect_rc=expect_rc)


def test_snapshots_cli():
    with harness.Node("snapcli", accounts={"alice": harness.GENESIS_COINS, "bob": None}) as node:
        node.start()
        node.wait_for_height(2)
        node.send("alice", "bob", "100stake")
        node.wait_for_height(node.height() + 1)
        node.stop_all()
        logged = harness.committed_hashes(node.kairosd.text())
        height = max(logged)
        home = node.kairos_home

        made = snapshots(home, "export", "-o", "json").json()
        check(made["height"] == height, f"export: height {made['height']}, expected {height}")
        check(made["app_hash"] == logged[height],
              f"export: app hash {made['app_hash']}, kairosd logged {logged[height]}")
        check(made["chunks"] >= 1 and made["keys"] > 0, f"export: {made}")
        listed = snapshots(home, "list", "-o", "json").json()
        check(listed == made, f"list: {listed}, export said {made}")
        log(f"exported height {height}: {made['chunks']} chunk(s), {made['keys']} keys, "
            f"app hash {made['app_hash']}")

        other = os.path.join(node.dir, "other")
        harness.run([harness.KAIROSD, "--home", other, "init"])
        archive = os.path.join(node.dir, "snap.bin")
        snapshots(home, "dump", str(height), "--output-file", archive)

        bad = archive + ".bad"
        shutil.copy(archive, bad)
        with open(bad, "r+b") as f:
            f.seek(os.path.getsize(bad) - 10)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 1]))
        refused = snapshots(other, "load", bad, expect_rc=1)
        check("snapshot chunk" in refused.err and "manifest" in refused.err,
              f"load of a changed file: {refused.err!r}")
        check(snapshots(other, "list").out.strip() == "", "a refused load left a snapshot")

        loaded = snapshots(other, "load", archive).out
        check(f"height: {height} " in loaded and made["hash"] in loaded, f"load: {loaded!r}")
        again = snapshots(other, "list", "-o", "json").json()
        check(again == made, f"list after load: {again}, expected {made}")

        restored = snapshots(other, "restore", str(height)).out
        check(f"restored height {height}, app hash {made['app_hash']}" in restored,
              f"restore: {restored!r}")
        twice = snapshots(other, "restore", str(height), expect_rc=1)
        check("restore into an empty home" in twice.err, f"second restore: {twice.err!r}")
        log(f"dump, load and restore into another home: app hash {made['app_hash']}")

        snapshots(other, "delete", str(height))
        check(snapshots(other, "list").out.strip() == "", "delete left the snapshot listed")
        missing = snapshots(other, "delete", str(height), expect_rc=1)
        check(f"no snapshot at height {height}" in missing.err, f"delete again: {missing.err!r}")
        wrong = snapshots(home, "restore", str(height), "2", expect_rc=2)
        check("this build knows only format 1" in wrong.err, f"format 2: {wrong.err!r}")


if __name__ == "__main__":
    harness.main(test_snapshots_cli)
