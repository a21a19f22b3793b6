"""Check that a change to the engine or the bots is behaviour-identical: digests of every raw array played.

    python benchmarks/same_play.py --save /tmp/before.json      # on the code before the change
    python benchmarks/same_play.py --check /tmp/before.json     # after it: exits 1 on any difference
    python benchmarks/same_play.py --runs --save /tmp/runs.json # the logs of five small studies
    python benchmarks/same_play.py --golden expert              # regenerate tests/data/golden_expert.json
    python benchmarks/same_play.py --golden engine              # regenerate tests/data/golden_engine.json
    python benchmarks/same_play.py --check /tmp/before.json --except PL_NEW   # all but a slot a change adds

Plays each case (a rule set, a seating and a few overrides) with events recorded, and hashes every array the engine
returns (scores, wins, the event log with the expert's reason codes …; the integer rows of hands, players and wins
slot by slot, keyed by the slot's name, so a renumbering of the slots changes no digest) per case, through each of
the three ways hands are played: the compiled batch (``hands.run_batch``), the step API with Python agents at some
seats (``game.play_hands``) and chained sessions (``sessions.run_sessions``). Same seed, same code behaviour ⇒ same
digests; a speed-up or a refactor that changes one decision anywhere changes a digest. ``--runs`` instead runs
five small studies (quickstart, sessions, xueliu, declare, exchange) through the runner and digests every Parquet
file they write: its decoded columns (names, Arrow types, values, dictionaries), the project's own ``xuezhan.*``
key-value metadata and the row-group layout and compression the writer options fix — never the file's bytes,
which embed the writer's version (``created_by``: ``parquet-cpp-arrow version …``), so a pyarrow release that
writes the same data leaves the digests alone.

Every case and study is in one of two groups: ``expert`` (an expert bot at some seat) and ``engine`` (none), and
each group has its own committed file (``tests/data/golden_<group>.json``, play digests of 200 hands and the
studies' log digests), checked by ``tests/test_golden.py``. A change to the expert regenerates only
``--golden expert``; a change to the engine, the rules, the logs or the other bots shows in the engine file,
and a commit that regenerates it says why.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys

import numpy as np

from simulator.hands import run_batch
from simulator.kernel.state import BatchResult
from simulator.rules import load_rules

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
    "expert4_exchange_three": ("exchange_three", ["seats=[expert, expert, expert, expert]"]),
    # the engine group: the same rule paths with no expert seated (an expert change leaves these alone)
    "plain_qq_sichuan": ("qq_sichuan", ["seats=[greedy, value, defensive, greedy]"]),
    "plain_xueliu": ("xueliu", ["seats=[greedy, value, defensive, value]"]),
    "plain_void_none": ("chengdu", ["seats=[value, greedy, defensive, value]", "void_suit=none"]),
    "plain_xueliu_dance": ("xueliu", ["seats=[value, value, greedy, defensive]", "declare_ready=dance"]),
    "plain_exchange_three": ("exchange_three", ["seats=[value, greedy, defensive, greedy]"]),
    "plain_exchange_three_xueliu": ("xueliu", ["seats=[greedy, value, greedy, defensive]",
                                               "exchange_three=random"]),
}
# Step cases: the same, with the Python agents of simulator.agents at the listed seat specs (a tenth of the hands)
STEP_CASES = {
    "step_greedy_value": ("chengdu", ["seats=[greedy, value, expert, greedy]"],
                          {0: "GreedyBot", 1: "ValueBot"}),
    "step_random_xueliu": ("xueliu", ["seats=[greedy, greedy, value, expert]"], {0: "RandomBot"}),
    "step_plain_exchange": ("exchange_three", ["seats=[greedy, value, defensive, greedy]"],
                            {0: "RandomBot", 3: "ValueBot"}),
}
# Session cases: whole sessions of 8 hands under each dealer rule (hands rounded down to whole sessions)
DEALERS = ("rotate", "first_winner", "feeder_on_multi_ron", "feeder_keeps_on_draw", "dice")
SESSION_CASES = {f"session_{rule}": ("chengdu", ["seats=[value, greedy, expert, greedy]", "session.hands=8",
                                                 f"session.dealer={rule}", "session.bankroll=40"])
                 for rule in DEALERS}
SESSION_CASES["session_xueliu_feeder"] = ("xueliu", ["seats=[value, greedy, greedy, greedy]", "session.hands=8",
                                                     "session.dealer=feeder_keeps_on_draw"])
SESSION_CASES.update({f"plain_session_{rule}": ("chengdu", ["seats=[value, greedy, defensive, greedy]",
                                                            "session.hands=8", f"session.dealer={rule}",
                                                            "session.bankroll=40"])
                      for rule in DEALERS})
SESSION_CASES.update({f"plain_session_xueliu_{rule}": ("xueliu", ["seats=[greedy, value, greedy, defensive]",
                                                                  "session.hands=8", f"session.dealer={rule}"])
                      for rule in ("first_winner", "dice")})
# Studies whose logs --runs digests: (study: a shipped name or the study itself, hands)
RUNS = {"quickstart": ("quickstart", 400), "sessions": ("sessions", 64), "xueliu": ("xueliu", 200),
        "declare": ("declare", 400),
        "exchange": ({"name": "exchange", "baseline": {"name": "chengdu", "rules": "chengdu"},
                      "variants": [{"name": "exchange_three", "rules": "exchange_three"}],
                      "seats": ["value", "greedy", "defensive", "greedy"], "duplicate": True, "hands": 200,
                      "seed": 3}, 200)}
GROUPS = ("engine", "expert")
"""``expert``: the cases and studies that seat an expert bot; ``engine``: the others."""


def group_of(seats) -> str:
    """The golden group of a case or study from its seats (override strings or a study's seat list)."""
    return "expert" if "expert" in repr(seats) else "engine"


def play_group(name: str) -> str:
    """The group of a play case (its seat overrides; the Python agents are never the expert)."""
    for cases in (CASES, STEP_CASES, SESSION_CASES):
        if name in cases:
            return group_of(cases[name][1])
    raise KeyError(name)


def study_group(study: str) -> str:
    """The group of a ``RUNS`` study (its seats)."""
    from simulator.run.study import load_study

    return group_of(load_study(RUNS[study][0])[0].seats)


ROWS = {"h": "H_", "p": "PL_", "w": "W_"}  # BatchResult's integer rows and the prefix of their slot constants


def slot_names(prefix: str) -> list[str]:
    """The name of each slot of a row of the engine's output, by index: the ``state`` constant that numbers it
    (``PL_FAN``), or the constant below it plus the offset (the score components ``PL_SCORE+1`` …)."""
    from simulator.kernel import state

    width = getattr(state, f"{prefix}N")
    named = {v: n for n, v in vars(state).items()
             if n.startswith(prefix) and n != f"{prefix}N" and isinstance(v, int) and 0 <= v < width}
    names, base, start = [], "", 0
    for i in range(width):
        if i in named:
            base, start = named[i], i
        names.append(base if i == start else f"{base}+{i - start}")
    return names


def by_slot(raw: BatchResult, ignore=()) -> dict:
    """``raw``'s arrays with each integer row (``h``, ``p``, ``w``) as one array per slot, keyed by the slot's
    name (:func:`slot_names`): a digest of it does not depend on how the slots are numbered, and the slots named in
    ``ignore`` are left out."""
    out = raw.arrays()
    for row, prefix in ROWS.items():
        out[row] = {name: out[row][:, i] for i, name in enumerate(slot_names(prefix)) if name not in ignore}
    return out


def digest(raw, ignore=()) -> str:
    """SHA-256 over the names, dtypes, shapes and bytes of the (nested) arrays of ``raw`` (the engine's integer
    rows slot by slot, by the slots' names, without those in ``ignore``)."""
    h = hashlib.sha256()

    def walk(prefix: str, obj) -> None:
        if isinstance(obj, BatchResult):
            obj = by_slot(obj, ignore)
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


def run(hands: int, seed: int, group: str | None = None, ignore=()) -> dict[str, str]:
    """Digest of every case (of ``group``, or all) played with ``hands`` hands (step cases a tenth, sessions
    whole sessions), without the slots named in ``ignore``."""
    from simulator import agents
    from simulator.hands.game import play_hands
    from simulator.hands.sessions import run_sessions

    def chosen(cases: dict) -> dict:
        return {k: v for k, v in cases.items() if group is None or group_of(v[1]) == group}

    ids = np.arange(hands, dtype=np.int64)
    out: dict[str, str] = {}
    for name, (config, overrides) in chosen(CASES).items():
        _report(out, name, digest(run_batch(load_rules(config, overrides), ids, seed, record=True), ignore))
    step_ids = np.arange(max(1, hands // 10), dtype=np.int64)
    for name, (config, overrides, seats) in chosen(STEP_CASES).items():
        bots = {b: getattr(agents, cls)() for b, cls in seats.items()}
        _report(out, name, digest(play_hands(load_rules(config, overrides), step_ids, seed, bots, record=True),
                                         ignore))
    for name, (config, overrides) in chosen(SESSION_CASES).items():
        rules = load_rules(config, overrides)
        sess_ids = np.arange(max(1, hands // rules.session.hands) * rules.session.hands, dtype=np.int64)
        _report(out, name, digest(run_sessions(rules, sess_ids, seed, record=True), ignore))
    return out


def log_digest(path, ignore=()) -> str:
    """SHA-256 of what a Parquet log file holds, not of its bytes: every column's name, Arrow type, nullability
    and decoded values (a categorical column's dictionary and codes), the file's ``xuezhan.*`` key-value
    metadata, and per row group its rows and each column chunk's compression and statistics presence (what
    ``simulator.logs.encode.PARQUET_OPTIONS`` fixes). The writer's ``created_by`` and its encodings and page layout
    are left out: they change with the pyarrow release, the data does not. Columns and metadata keys named in
    ``ignore`` are left out too (what a deliberate change of the format adds, to show the rest is identical)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from simulator.logs.layout import read_file_metadata

    h = hashlib.sha256()
    pf = pq.ParquetFile(path)
    h.update(repr(sorted((k, v) for k, v in read_file_metadata(path).items() if k not in ignore)).encode())
    meta = pf.metadata
    for i in range(meta.num_row_groups):
        rg = meta.row_group(i)
        h.update(repr((rg.num_rows, [(rg.column(j).compression, rg.column(j).is_stats_set)
                                     for j in range(rg.num_columns)
                                     if rg.column(j).path_in_schema not in ignore])).encode())
    table = pf.read()
    for field, column in zip(table.schema, table.columns, strict=True):
        if field.name in ignore:
            continue
        h.update(f"{field.name}:{field.type}:{field.nullable}".encode())
        arr = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        if pa.types.is_dictionary(arr.type):
            h.update(repr(arr.dictionary.to_pylist()).encode())
            arr = arr.indices
        h.update(repr(arr.to_pylist()).encode())
    return h.hexdigest()


def run_studies(seed: int, group: str | None = None, ignore=()) -> dict[str, str]:
    """:func:`log_digest` of every Parquet file of the small studies of ``RUNS`` (of ``group``, or all), keyed
    study/table/variant/file, without the columns and metadata keys named in ``ignore``."""
    import tempfile
    from pathlib import Path

    from simulator.run.study import simulate_study

    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for study, (ref, hands) in RUNS.items():
            if group is not None and study_group(study) != group:
                continue
            res = simulate_study(ref, out_dir=Path(tmp) / study, hands=hands, seed=seed, jobs=1, progress=False)
            for f in sorted(res.out_dir.rglob("*.parquet")):
                _report(out, f"{study}/{f.relative_to(res.out_dir).as_posix()}", log_digest(f, ignore))
    return out


GOLDEN_HANDS = 200
"""Hands per play case of the committed golden files."""


def golden_path(group: str):
    from pathlib import Path

    return Path(__file__).resolve().parents[1] / "tests" / "data" / f"golden_{group}.json"


def golden(group: str, seed: int = 11) -> dict:
    """The content of ``tests/data/golden_<group>.json``: play digests of ``GOLDEN_HANDS`` hands per case and
    the studies' log digests, both of that group only."""
    return {"hands": GOLDEN_HANDS, "seed": seed, "play": run(GOLDEN_HANDS, seed, group),
            "runs": run_studies(seed, group)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hands", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--runs", action="store_true", help="digest the logs of the small studies instead")
    ap.add_argument("--group", choices=GROUPS, help="only the cases of this group (default: all)")
    ap.add_argument("--except", dest="ignore", action="append", default=[], metavar="NAME",
                    help="leave this engine slot (PL_FAN), log column or file metadata key out of the digests "
                         "(repeatable): a change that adds one compares everything else with --check")
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--save", help="write the digests to this JSON file")
    mode.add_argument("--check", help="compare with the digests of this JSON file")
    mode.add_argument("--golden", choices=GROUPS, help="regenerate tests/data/golden_<GROUP>.json")
    args = ap.parse_args()
    if args.golden:
        path = golden_path(args.golden)
        path.write_text(json.dumps(golden(args.golden, args.seed), indent=1) + "\n")
        print(f"wrote {path}")
        return
    ignore = tuple(args.ignore)
    got = run_studies(args.seed, args.group, ignore) if args.runs else run(args.hands, args.seed, args.group, ignore)
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
