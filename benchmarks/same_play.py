"""Check that a change to the bots' code is behaviour-identical: digests of every raw array of ``run_batch``.

    python benchmarks/same_play.py --save /tmp/before.json      # on the code before the change
    python benchmarks/same_play.py --check /tmp/before.json     # after it: exits 1 on any difference

Plays each case (a rule set, a seating and a few overrides) with events recorded, and hashes every array
``engine.run_batch`` returns (scores, wins, the event log with the expert's reason codes …) per case. Same seed,
same code behaviour ⇒ same digests; a speed-up that changes one decision anywhere changes a digest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np

from simulator.engine import run_batch
from simulator.rules import load_rules

CASES = {
    "expert4_chengdu": ("chengdu", ["seats=[expert, expert, expert, expert]"]),
    "greedy4_chengdu": ("chengdu", ["seats=[greedy, greedy, greedy, greedy]"]),
    "mixed_chengdu": ("chengdu", ["seats=[expert, greedy, value, defensive]"]),
    "expert4_qq_sichuan": ("qq_sichuan", ["seats=[expert, expert, expert, expert]"]),
    "expert4_xueliu": ("xueliu", ["seats=[expert, expert, expert, expert]"]),
    "expert4_void_none": ("chengdu", ["seats=[expert, expert, expert, expert]", "void_suit=none"]),
    "expert_tempered": ("chengdu", ["seats=[{bot: expert, temperature: 0.5}, expert, greedy, value]"]),
}


def digest(raw) -> str:
    """SHA-256 over the names, dtypes, shapes and bytes of the (nested) arrays of ``raw``."""
    h = hashlib.sha256()

    def walk(prefix: str, obj) -> None:
        if isinstance(obj, dict):
            for key in sorted(obj):
                walk(f"{prefix}/{key}", obj[key])
            return
        arr = np.ascontiguousarray(obj)
        h.update(f"{prefix}:{arr.dtype}:{arr.shape}".encode())
        h.update(arr.tobytes() if arr.dtype != object else repr(arr.tolist()).encode())

    walk("", raw)
    return h.hexdigest()


def run(hands: int, seed: int) -> dict[str, str]:
    ids = np.arange(hands, dtype=np.int64)
    out = {}
    for name, (config, overrides) in CASES.items():
        out[name] = digest(run_batch(load_rules(config, overrides), ids, seed, record=True))
        print(f"  {name}: {out[name][:16]}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=11)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", help="write the digests to this JSON file")
    mode.add_argument("--check", help="compare with the digests of this JSON file")
    args = ap.parse_args()
    got = run(args.hands, args.seed)
    if args.save:
        with open(args.save, "w") as fh:
            json.dump({"hands": args.hands, "seed": args.seed, "digests": got}, fh, indent=1)
        return
    with open(args.check) as fh:
        ref = json.load(fh)
    if (ref["hands"], ref["seed"]) != (args.hands, args.seed):
        sys.exit(f"error: {args.check} was made with --hands {ref['hands']} --seed {ref['seed']}")
    bad = [k for k in ref["digests"] if got.get(k) != ref["digests"][k]]
    print("identical" if not bad else f"DIFFERENT: {', '.join(bad)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
