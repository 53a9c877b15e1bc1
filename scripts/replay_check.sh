#!/usr/bin/env bash
# Proves that two kairosd builds give byte-identical app hashes for the same blocks, with real
# CometBFT v0.38.25 (issue 22: "the app hash of the same blocks is byte-identical before and
# after"):
#   1. a fresh single-validator chain runs CometBFT + OLD_KAIROSD under a mixed workload (bank
#      sends from six accounts, ordered, unordered, two-message and failing ones; the locks
#      module's register, acquire, write, release and refund-registration, some failing in the
#      block) until height BLOCKS (default 200); the header app hash of every block, every tx's
#      result and /abci_info are recorded, with the chain frozen at its last height;
#   2. kairosd's home is wiped and NEW_KAIROSD starts empty under the same CometBFT home: the
#      handshake sends InitChain with the same genesis and FinalizeBlock + Commit for every stored
#      block, checking each app hash against the next header (CometBFT panics on a mismatch);
#   3. the genesis hash and the app hash after every block, as NEW logged them and as CometBFT
#      executed them, and NEW's /abci_info, are compared with the recording: one line per height.
# Exit 0 when every height is equal, 1 on any difference, 2 when the run itself failed.
# Takes ~BLOCKS/2.5 s for the workload plus a few seconds for the replay. Needs the CometBFT
# tools of scripts/setup.sh (.tools/bin); REPLAY_SEED picks the workload's random choices,
# KAIROS_E2E_KEEP=1 keeps the temp directory with every log. See scripts/replay_check.py.
#   scripts/replay_check.sh OLD_KAIROSD NEW_KAIROSD [BLOCKS]
set -euo pipefail
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: $0 OLD_KAIROSD NEW_KAIROSD [BLOCKS]" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
exec python3 "$ROOT/scripts/replay_check.py" "$@"
