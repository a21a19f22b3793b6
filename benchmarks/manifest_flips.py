"""Random single-bit flips of a run's manifests: each must be refused (by ``xuezhan verify`` and by the readers)
or harmless (the readers return exactly what the intact run gives). Counts silent changes; exit 1 if any.

Usage::

    python benchmarks/manifest_flips.py --flips 500 --seed 0

Builds a two-arm study (chengdu against huazhu_8x, 200 hands, seed 3) in a temporary directory, then flips one
random bit of one arm's ``_manifest.json`` (or, with ``--file study.json``, of the study record) per trial on a
fresh copy. The tests run the same check in small (``tests/test_trust.py``).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

from analysis.load import RunDirError, open_run
from simulator.logs import manifest as mf
from simulator.run.study import simulate_study
from simulator.run.verify import verify_run

STUDY = """name: flips
baseline: chengdu
variants:
  - name: hz8
    rules: huazhu_8x
hands: 200
seed: 3
chunk_size: 50
"""


def outputs(run: Path) -> tuple:
    r = open_run(run)
    return (r.variants, r.manifests, r.study, r.baseline, *(r.scan(t).collect().to_dicts() for t in mf.TABLES))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flips", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--file", choices=["manifest", "study.json"], default="manifest")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        (tmp_path / "flips.yaml").write_text(STUDY)
        ref = tmp_path / "ref"
        simulate_study(tmp_path / "flips.yaml", out_dir=ref, jobs=1, progress=False)
        expected = outputs(ref)
        counts = {"refused": 0, "harmless": 0, "silent": 0, "verify_missed": 0}
        start = time.perf_counter()
        for i in range(args.flips):
            run = tmp_path / f"t{i}"
            shutil.copytree(ref, run)
            arm = rng.choice(["chengdu", "hz8"])
            rel = "study.json" if args.file == "study.json" else f"_variants/variant={arm}/{mf.MANIFEST}"
            path = run / rel
            data = bytearray(path.read_bytes())
            bit = rng.randrange(8 * len(data))
            data[bit // 8] ^= 1 << (bit % 8)
            path.write_bytes(bytes(data))
            try:
                got = outputs(run)
            except RunDirError:
                counts["refused"] += 1
                counts["verify_missed"] += verify_run(run)[1] == 0
            else:
                if got == expected:
                    counts["harmless"] += 1
                else:
                    counts["silent"] += 1
                    print(f"SILENT: {rel} bit {bit}", file=sys.stderr)
            shutil.rmtree(run)
        seconds = time.perf_counter() - start
    print(f"{args.flips} flips of {args.file} ({seconds:.0f} s): {counts['refused']} refused, {counts['harmless']} "
          f"harmless, {counts['silent']} silent changes, {counts['verify_missed']} refused by readers but passed "
          "by verify")
    return 1 if counts["silent"] or counts["verify_missed"] else 0


if __name__ == "__main__":
    sys.exit(main())
