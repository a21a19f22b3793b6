"""Check that a change to the engine or the bots is behaviour-identical: digests of every raw array played.

    python benchmarks/same_play.py --save /tmp/before.json      # on the code before the change
    python benchmarks/same_play.py --check /tmp/before.json     # after it: exits 1 on any difference
    python benchmarks/same_play.py --runs --save /tmp/runs.json # the Parquet bytes of four small studies

Plays each case (a rule set, a seating and a few overrides) with events recorded, and hashes every array the
engine returns (scores, wins, the event log with the expert's reason codes …) per case, through each of the three
ways hands are played: the compiled batch (``hands.run_batch``), the step API with Python agents at some seats
(``game.play_hands``) and chained sessions (``sessions.run_sessions``). Same seed, same code behaviour ⇒ same
digests; a speed-up or a refactor that changes one decision anywhere changes a digest. ``--runs`` instead runs
four small studies (quickstart, sessions, xueliu, declare) through the runner and hashes every Parquet file they
write (the manifests' SHA-256s): the log bytes themselves. ``tests/test_golden.py`` checks the committed digests
of ``tests/data/golden_play.json`` (made with ``--hands 200 --save tests/data/golden_play.json``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np

from simulator.hands import run_batch
from simulator.rules import load_rules
from simulator.state import BatchResult

# Batch cases: (rule set, overrides) played by hands.run_batch
CASES = {
    "expert4_chengdu": ("chengdu", ["seats=[expert, expert, expert, expert]"]),
    "greedy4_chengdu": ("chengdu", ["seats=[greedy, greedy, greedy, greedy]"]),
    "mixed_chengdu": ("chengdu", ["seats=[expert, greedy, value, defensive]"]),
    "expert4_qq_sichuan": ("qq_sichuan", ["seats=[expert, expert, expert, expert]"]),
    "expert4_xueliu": ("xueliu", ["seats=[expert, expert, expert, expert]"]),
    "expert4_void_none": ("chengdu", ["seats=[expert, expert, expert, expert]", "void_suit=none"]),
    "expert_tempered": ("chengdu", ["seats=[{bot: expert, temperature: 0.5}, expert, greedy, value]"]),
    "value4_sing": ("chengdu", ["seats=[value, value, value, value]", "declare_ready=sing"]),
    "expert4_dance": ("chengdu", ["seats=[expert, expert, value, value]", "declare_ready=dance"]),
    "mixed_xueliu_dance": ("xueliu", ["seats=[expert, value, greedy, defensive]", "declare_ready=dance"]),
}
# Step cases: the same, with the Python agents of simulator.agents at the listed seat specs (a tenth of the hands)
STEP_CASES = {
    "step_greedy_value": ("chengdu", ["seats=[greedy, value, expert, greedy]"],
                          {0: "GreedyBot", 1: "ValueBot"}),
    "step_random_xueliu": ("xueliu", ["seats=[greedy, greedy, value, expert]"], {0: "RandomBot"}),
}
# Session cases: whole sessions of 8 hands under each dealer rule (hands rounded down to whole sessions)
SESSION_CASES = {f"session_{rule}": ("chengdu", ["seats=[value, greedy, expert, greedy]", "session.hands=8",
                                                 f"session.dealer={rule}", "session.bankroll=40"])
                 for rule in ("rotate", "first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw", "dice")}
SESSION_CASES["session_xueliu_feeder"] = ("xueliu", ["seats=[value, greedy, greedy, greedy]", "session.hands=8",
                                                     "session.dealer=feeder_keeps_on_draw"])
# Studies whose Parquet bytes --runs hashes: (study, hands)
RUNS = {"quickstart": 400, "sessions": 64, "xueliu": 200, "declare": 400}


def digest(raw) -> str:
    """SHA-256 over the names, dtypes, shapes and bytes of the (nested) arrays of ``raw``."""
    h = hashlib.sha256()

    def walk(prefix: str, obj) -> None:
        if isinstance(obj, BatchResult):
            obj = obj.arrays()
        if isinstance(obj, dict):
            for key in sorted(obj):
                walk(f"{prefix}/{key}", obj[key])
            return
        arr = np.ascontiguousarray(obj)
        h.update(f"{prefix}:{arr.dtype}:{arr.shape}".encode())
        h.update(arr.tobytes() if arr.dtype != object else repr(arr.tolist()).encode())

    walk("", raw)
    return h.hexdigest()


def _report(out: dict[str, str], name: str, value: str) -> None:
    out[name] = value
    print(f"  {name}: {value[:16]}", flush=True)


def run(hands: int, seed: int) -> dict[str, str]:
    """Digest of every case played with ``hands`` hands (step cases a tenth, sessions whole sessions)."""
    from simulator import agents
    from simulator.game import play_hands
    from simulator.sessions import run_sessions

    ids = np.arange(hands, dtype=np.int64)
    out: dict[str, str] = {}
    for name, (config, overrides) in CASES.items():
        _report(out, name, digest(run_batch(load_rules(config, overrides), ids, seed, record=True)))
    step_ids = np.arange(max(1, hands // 10), dtype=np.int64)
    for name, (config, overrides, seats) in STEP_CASES.items():
        bots = {b: getattr(agents, cls)() for b, cls in seats.items()}
        _report(out, name, digest(play_hands(load_rules(config, overrides), step_ids, seed, bots, record=True)))
    for name, (config, overrides) in SESSION_CASES.items():
        rules = load_rules(config, overrides)
        sess_ids = np.arange(max(1, hands // rules.session.hands) * rules.session.hands, dtype=np.int64)
        _report(out, name, digest(run_sessions(rules, sess_ids, seed, record=True)))
    return out


def run_studies(seed: int) -> dict[str, str]:
    """SHA-256 of every Parquet file of four small studies (``RUNS``), keyed study/variant/table/file."""
    import tempfile
    from pathlib import Path

    from simulator.study import simulate_study

    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for study, hands in RUNS.items():
            res = simulate_study(study, out_dir=Path(tmp) / study, hands=hands, seed=seed, jobs=1, progress=False)
            for f in sorted(res.out_dir.rglob("*.parquet")):
                _report(out, f"{study}/{f.relative_to(res.out_dir).as_posix()}",
                        hashlib.sha256(f.read_bytes()).hexdigest())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--runs", action="store_true", help="hash the Parquet files of four small studies instead")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", help="write the digests to this JSON file")
    mode.add_argument("--check", help="compare with the digests of this JSON file")
    args = ap.parse_args()
    got = run_studies(args.seed) if args.runs else run(args.hands, args.seed)
    if args.save:
        with open(args.save, "w") as fh:
            json.dump({"hands": args.hands, "seed": args.seed, "digests": got}, fh, indent=1)
        return
    with open(args.check) as fh:
        ref = json.load(fh)
    if (ref["hands"], ref["seed"]) != (args.hands, args.seed):
        sys.exit(f"error: {args.check} was made with --hands {ref['hands']} --seed {ref['seed']}")
    if set(ref["digests"]) != set(got):
        sys.exit(f"error: {args.check} has other cases ({sorted(set(ref['digests']) ^ set(got))})")
    bad = [k for k in ref["digests"] if got.get(k) != ref["digests"][k]]
    print("identical" if not bad else f"DIFFERENT: {', '.join(bad)}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
