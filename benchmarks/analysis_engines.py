"""One representative stage of the analysis under three engines (issue 47): the paired per-seat moments of
``score_total`` of one variant against the baseline (players joined to players on hand and seat, then per seat
the count, Σd, Σd², Σx, Σx_base), the join every paired table makes.

    python benchmarks/analysis_engines.py RUN_DIR [--rounds N]     # each engine in a fresh process, alternating

- ``polars``: the project's way — lazy polars queries over hand-id pieces of the run (:mod:`analysis.pieces`),
  the moments summed (:mod:`analysis.paired_sums`);
- ``duckdb``: one SQL query over the hive dataset (``read_parquet`` of the two variants' part files; DuckDB's
  out-of-core join and aggregate, 2 threads, its default memory limit);
- ``arrow``: pyarrow, part file by part file (the two variants' files of one hand range read, joined with
  ``Table.join`` and summed with ``Table.group_by``: a dataset scan in file-sized batches).

Each engine's answer is checked against polars' (the integer sums exactly); peak RSS (``ru_maxrss`` of the child),
wall and CPU per engine are printed, then the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import polars as pl

COLS = ["seat", "n", "d", "dd", "x", "xb"]


def _arms(run_dir: Path) -> tuple[str, str]:
    from analysis.load import open_run

    run = open_run(run_dir, check="sizes")
    return run.baseline, next(v for v in run.variants if v != run.baseline)


def polars_seat(run_dir: Path) -> pl.DataFrame:
    from analysis.load import open_run
    from analysis.pieces import collect_pieces, summed

    run = open_run(run_dir, check="sizes")
    base, var = run.baseline, next(v for v in run.variants if v != run.baseline)

    def build(r):
        a = r.players(var).select("hand_id", "seat", pl.col("score_total").alias("x"))
        b = r.players(base).select("hand_id", "seat", pl.col("score_total").alias("xb"))
        d = (pl.col("x") - pl.col("xb")).cast(pl.Int64)
        return [a.join(b, on=["hand_id", "seat"]).group_by("seat").agg(
            pl.len().cast(pl.Int64).alias("n"), d.sum().alias("d"), (d * d).sum().alias("dd"),
            pl.col("x").cast(pl.Int64).sum().alias("x"), pl.col("xb").cast(pl.Int64).sum().alias("xb"))]

    return summed(collect_pieces(run, build)[0], ["seat"]).sort("seat").select(COLS)


def duckdb_seat(run_dir: Path) -> pl.DataFrame:
    import duckdb

    base, var = _arms(run_dir)
    con = duckdb.connect()
    con.execute("SET threads = 2; SET enable_progress_bar = false")
    files = {v: str(run_dir / "players" / f"variant={v}" / "*.parquet") for v in (base, var)}
    q = f"""
        WITH a AS (SELECT hand_id, seat, score_total AS x FROM read_parquet('{files[var]}')),
             b AS (SELECT hand_id, seat, score_total AS xb FROM read_parquet('{files[base]}'))
        SELECT a.seat::TINYINT AS seat, count(*)::BIGINT AS n, sum(x - xb)::BIGINT AS d,
               sum((x - xb)::BIGINT * (x - xb))::BIGINT AS dd, sum(x)::BIGINT AS x, sum(xb)::BIGINT AS xb
        FROM a JOIN b USING (hand_id, seat) GROUP BY a.seat ORDER BY a.seat"""
    return pl.from_arrow(con.sql(q).to_arrow_table()).select(COLS)


def arrow_seat(run_dir: Path) -> pl.DataFrame:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    base, var = _arms(run_dir)
    cols = ["hand_id", "seat", "score_total"]
    parts = []
    for fa in sorted((run_dir / "players" / f"variant={var}").glob("*.parquet")):
        fb = run_dir / "players" / f"variant={base}" / fa.name
        if not fb.exists():
            continue
        a = pq.read_table(fa, columns=cols).rename_columns(["hand_id", "seat", "x"])
        b = pq.read_table(fb, columns=cols).rename_columns(["hand_id", "seat", "xb"])
        j = a.join(b, keys=["hand_id", "seat"], join_type="inner")
        x, xb = pc.cast(j["x"], pa.int64()), pc.cast(j["xb"], pa.int64())
        d = pc.subtract(x, xb)
        t = pa.table({"seat": j["seat"], "d": d, "dd": pc.multiply(d, d), "x": x, "xb": xb})
        parts.append(pl.from_arrow(t.group_by("seat").aggregate(
            [("d", "count"), ("d", "sum"), ("dd", "sum"), ("x", "sum"), ("xb", "sum")])))
    whole = pl.concat(parts).group_by("seat").agg(pl.col("d_count").sum().alias("n"), pl.col("d_sum").sum().alias("d"),
                                                  pl.col("dd_sum").sum().alias("dd"), pl.col("x_sum").sum().alias("x"),
                                                  pl.col("xb_sum").sum().alias("xb"))
    return whole.with_columns(pl.col("seat").cast(pl.Int8)).sort("seat").select(COLS)


def files_seat(run_dir: Path, files: dict[str, list[Path]]) -> pl.DataFrame:
    """The polars query over explicit part files (``files``: variant → its players files), read 250,000 hands
    at a time by file (as :mod:`analysis.pieces` does): what the part size changes."""
    base, var = _arms(run_dir)
    step = max(1, round(len(files[var]) * 250_000 / _hands(files[var])))
    out = []
    for i in range(0, len(files[var]), step):
        a = pl.scan_parquet(files[var][i:i + step]).select("hand_id", "seat", pl.col("score_total").alias("x"))
        b = pl.scan_parquet(files[base][i:i + step]).select("hand_id", "seat", pl.col("score_total").alias("xb"))
        d = (pl.col("x") - pl.col("xb")).cast(pl.Int64)
        out.append(a.join(b, on=["hand_id", "seat"]).group_by("seat").agg(
            pl.len().cast(pl.Int64).alias("n"), d.sum().alias("d"), (d * d).sum().alias("dd"),
            pl.col("x").cast(pl.Int64).sum().alias("x"), pl.col("xb").cast(pl.Int64).sum().alias("xb")).collect())
    return pl.concat(out).group_by("seat").agg(pl.exclude("seat").sum()).sort("seat").select(COLS)


def _hands(files: list[Path]) -> int:
    import pyarrow.parquet as pq

    return sum(pq.ParquetFile(f).metadata.num_rows for f in files) // 4


def merged_parts(run_dir: Path, out: Path, k: int) -> dict[str, list[Path]]:
    """The two arms' players part files, ``k`` consecutive ones merged into one file (written once under
    ``out``): the same rows in ``k`` times fewer, larger parts."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    base, var = _arms(run_dir)
    got: dict[str, list[Path]] = {}
    for v in (base, var):
        src = sorted((run_dir / "players" / f"variant={v}").glob("*.parquet"))
        if k == 1:
            got[v] = src
            continue
        dst = out / f"k{k}" / v
        dst.mkdir(parents=True, exist_ok=True)
        got[v] = []
        for i in range(0, len(src), k):
            f = dst / f"part-{i:06d}.parquet"
            if not f.exists():
                pq.write_table(pa.concat_tables([pq.read_table(x) for x in src[i:i + k]]), f)
            got[v].append(f)
    return got


ENGINES = {"polars": polars_seat, "duckdb": duckdb_seat, "arrow": arrow_seat}


def main(argv: list[str] | None = None) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from analysis_scale import run_code

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--parts", default="", help="part sizes to compare instead, as merge factors, e.g. 1,10")
    ap.add_argument("--scratch", type=Path, default=Path("/tmp/xuezhan_parts"), help="merged parts (--parts)")
    args = ap.parse_args(argv)
    if args.parts:
        part_sizes(args.run_dir, [int(k) for k in args.parts.split(",")], args.scratch, args.rounds)
        return
    results: dict[str, list[tuple[float, float, float]]] = {}
    names = list(ENGINES)
    for r in range(args.rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            src = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
                   "from pathlib import Path\nimport analysis_engines as e\n"
                   f"e.ENGINES[{name!r}](Path({str(args.run_dir)!r}))\n")
            peak, wall, cpu, rc = run_code(src, None, {})
            if rc == 0:
                results.setdefault(name, []).append((peak, wall, cpu))
            print(f"round {r + 1}  {name:8s} peak {peak:6.2f} GiB  wall {wall:7.1f} s  cpu {cpu:7.1f} s"
                  f"{'' if rc == 0 else '  FAILED'}", flush=True)
    # the answers are checked after the timed children (forked from this process, a child's ru_maxrss starts at
    # this process's resident size, which the check would raise)
    want = polars_seat(args.run_dir)
    for name, f in ENGINES.items():
        got = f(args.run_dir)
        print(f"{name}: {'same answer' if got.equals(want) else 'DIFFERENT answer'} ({want['n'].sum():,} pairs)",
              flush=True)
    print("\nmedians (peak GiB / wall s / CPU s):")
    for name, rows in results.items():
        peak, wall, cpu = (statistics.median(x) for x in zip(*rows, strict=True))
        print(f"  {name:8s} {peak:6.2f} / {wall:7.1f} / {cpu:7.1f}  ({len(rows)} rounds)")


def part_sizes(run_dir: Path, factors: list[int], scratch: Path, rounds: int) -> None:
    """The stage over the run's parts as written and merged ``k`` to one, each in a fresh process, alternating."""
    from analysis_scale import run_code

    for k in factors:  # written in a child: this process stays small (a child's ru_maxrss starts at its size)
        run_code(f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\nfrom pathlib import Path\n"
                 f"import analysis_engines as e\ne.merged_parts(Path({str(run_dir)!r}), Path({str(scratch)!r}), {k})\n",
                 None, {})
    for r in range(rounds):
        for k in factors if r % 2 == 0 else factors[::-1]:
            src = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
                   "from pathlib import Path\nimport analysis_engines as e\n"
                   f"e.files_seat(Path({str(run_dir)!r}), e.merged_parts(Path({str(run_dir)!r}), "
                   f"Path({str(scratch)!r}), {k}))\n")
            peak, wall, cpu, rc = run_code(src, None, {})
            print(f"round {r + 1}  parts x{k:<4d} peak {peak:6.2f} GiB  wall {wall:7.1f} s  cpu {cpu:7.1f} s"
                  f"{'' if rc == 0 else '  FAILED'}", flush=True)
    sets = {k: merged_parts(run_dir, scratch, k) for k in factors}
    want = files_seat(run_dir, sets[factors[0]])
    for k, files in sets.items():
        n = len(next(iter(files.values())))
        same = files_seat(run_dir, files).equals(want)
        print(f"x{k}: {n} players files an arm, {_hands(next(iter(files.values()))) // n:,} hands a file; "
              f"{'same answer' if same else 'DIFFERENT answer'}", flush=True)


if __name__ == "__main__":
    main()
