"""One bot of this checkout against three bots of another commit at one table: duplicate seating, exact lockstep.

    taskset -c 0 python benchmarks/versus_commit.py --old d5b5a22 --walls 4000 --seed 7
    taskset -c 0 python benchmarks/versus_commit.py --old d5b5a22 --check 100      # the exactness checks only
    python benchmarks/versus_commit.py --help

The bot of this checkout ("me", ``--me``, default ``expert``) plays spec 0 and the other commit's bot ("them",
``--them``, default ``expert``) specs 1–3 of ``seats: [me, them, them, them]``; every wall is played four times,
hand_id = 4·deal_id + rotation, spec = (seat + rotation) % 4, as ``benchmarks/expert.py`` does. Printed: the mean
score of "me" per player-hand (base units) with its SE clustered by wall, and deal-ins (discard wins paid) per
player-hand of "me" and of "them". Since the three "them" seats play the same bot, against them this mean is
the answer to "is this bot positive against three of that commit's".

How two code versions share a table. The other commit's ``simulator/`` (and ``configs/``) is extracted with ``git
archive`` into ``--work`` (default ``/tmp/versus_commit``) and renamed to a package of its own (``sim_<commit>``:
every ``simulator`` in its sources becomes that name), so both versions import side by side in one process. Each
version runs its own :class:`~simulator.hands.game.Hand` on the same deal with *all four seats external*: its compiled
loop stops at every decision. At each stop both engines must show the same decision (seat, kind, legal set, tile,
from, fan — checked; any difference stops the run); the seat's answer is computed by the seat's own version: a small
compiled function (generated per version from a template of ``versus_kernels.py``) calls that version's bot
dispatcher (``simulator.bots.bot_discard`` etc.) on that version's live state at the decision, with exactly the
arguments the version's engine passes to an inline bot there (the planning void, the legal mask, the tile, the fan,
self-draw or not). The answer is then queued in both engines. The seat's random stream (the expert's discard
tie-breaks) is kept by the harness: it is swapped into the state around the bot call and out again, so it advances
exactly as in a batch, where the engine never rolls it back. The score is the engine of this checkout's (the other
engine's is compared hand by hand and differences are counted).

Checks (``--check N``, also run on 8 walls before every measurement): with the *same* version on both sides the
harness must reproduce that version's ``run_batch`` bit for bit (every output array: hands, players, deals, wins)
on N walls × 4 seatings, for ``[expert×4]`` and for ``[expert, greedy, greedy, greedy]`` (which also checks the
seat ↔ spec mapping), in this checkout and in the other commit; the deals of both versions must be identical.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import inspect
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from versus_kernels import KERNEL_ARRAYS, KERNEL_STRUCT  # beside this script

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's simulator, not whatever an editable install points at

def _package_digest(pkg_dir: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(pkg_dir.rglob("*.py")):
        h.update(str(f.relative_to(pkg_dir)).encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


# where a module lives in a version: packages since issue 48 (simulator/kernel/state.py …), top level before
MOVED = {"state": "kernel.state", "game": "hands.game", "compiled_rules": "hands.compiled_rules"}


def _module_name(pkg_dir: Path, name: str) -> str:
    """``name``'s dotted path inside the package at ``pkg_dir`` (either layout)."""
    return MOVED[name] if (pkg_dir / "kernel").is_dir() and name in MOVED else name


def _kernel_module(pkg: str, pkg_dir: Path, template: str, work: Path):
    """Write (once per package content) and import the answer kernel of package ``pkg``."""
    gen = work / "kernels"
    gen.mkdir(parents=True, exist_ok=True)
    name = f"answer_{pkg}_{_package_digest(pkg_dir)}"
    path = gen / f"{name}.py"
    text = template.replace("PKG.state", f"PKG.{_module_name(pkg_dir, 'state')}").replace("PKG", pkg)
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)  # a new file name per package content: numba's cache of it is never stale
    if str(gen) not in sys.path:
        sys.path.insert(0, str(gen))
    return importlib.import_module(name)


def extract_commit(commit: str, work: Path) -> tuple[str, Path]:
    """The ``simulator`` package and ``configs`` of ``commit`` as package ``sim_<hash>`` under ``work``; returns
    (package name, the directory to put on sys.path)."""
    full = subprocess.run(["git", "-C", str(ROOT), "rev-parse", f"{commit}^{{commit}}"], check=True,
                          capture_output=True, text=True).stdout.strip()
    pkg = f"sim_{full[:10]}"
    base = work / full[:10]
    if not (base / pkg / "__init__.py").is_file():  # extracted once: re-extracting would restamp the sources
        tmp = work / f"{full[:10]}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", full, "simulator", "configs"], check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tmp)], input=archive, check=True)
        (tmp / "simulator").rename(tmp / pkg)
        word = re.compile(r"\bsimulator\b")
        for f in (tmp / pkg).rglob("*.py"):
            f.write_text(word.sub(pkg, f.read_text()))
        shutil.rmtree(base, ignore_errors=True)
        tmp.rename(base)
    if str(base) not in sys.path:
        sys.path.insert(0, str(base))
    return pkg, base


class Side:
    """One code version's engine for one table: a Hand with every seat external, and the answer kernel."""

    def __init__(self, pkg: str, config: Path, seats: list[str], work: Path, overrides: tuple[str, ...] = ()):
        self.pkg = pkg
        pkg_dir = Path(importlib.import_module(pkg).__file__).parent
        mod = lambda m: importlib.import_module(f"{pkg}.{_module_name(pkg_dir, m)}")  # noqa: E731
        self.state, self.engine, game, rules_mod = mod("state"), mod("engine"), mod("game"), mod("rules")
        self.rules = rules_mod.load_rules(str(config), [*overrides, f"seats=[{', '.join(seats)}]"])
        # the engine of the state record (a file of the package itself: an editable install's finder would
        # otherwise find the installed checkout's module under an older package's name)
        self.struct = (pkg_dir / f"{_module_name(pkg_dir, 'compiled_rules').replace('.', '/')}.py").is_file()
        # the declare_ready choices (the vocabulary's DECLARES before the key table held them)
        self.declares = getattr(rules_mod, "DECLARES", None) or rules_mod.choices("declare_ready")
        if self.struct:
            table = mod("compiled_rules").CompiledTable.of(self.rules)
            self.bot_ids, self.bot_par = table.bot_ids, np.array(table.bot_par, dtype=np.int64)
            self.hand = game.Hand(table, range(4), record=False)
            self.kernel = _kernel_module(pkg, pkg_dir, KERNEL_STRUCT, work).answer
            self.bots, self.st = self.hand.game.bots, self.hand.st
            self.params = table.params
        else:
            self.bot_ids, self.bot_par = self.rules.bot_arrays()
            self.hand = game.Hand(self.rules, self.bot_ids, self.bot_par, range(4), record=False)
            self.kernel = _kernel_module(pkg, pkg_dir, KERNEL_ARRAYS, work).answer
            self.bots = self.hand.bots
            self.params = self.hand.params
            self.sh_buf = np.zeros(self.state.N_KINDS, np.int64)
        self.rng = np.zeros(4, np.uint64)
        self.out3 = np.zeros(3, np.int64)
        self.exchange: dict[int, list[int]] = {}

    # --- per hand
    def deal(self, rotation: int, wall_seed, bot_seed, dealer: int) -> None:
        for s in range(4):
            b = (s + rotation) % 4
            self.bots[s] = self.bot_ids[b]
            self.hand.bpar[s] = self.bot_par[b]
        self.hand.deal(wall_seed, bot_seed, dealer)
        self.rng[:] = self.rngs[1:]
        self.exchange = {}

    @property
    def rngs(self):
        return self.st.rngs if self.struct else self.hand.rngs

    @property
    def wall(self):
        return self.st.wall if self.struct else self.hand.arrays[0]

    @property
    def dealt(self):
        return self.st.dealt if self.struct else self.hand.dealt

    def advance(self):
        d = self.hand.advance()
        return None if d is None else (d.seat, d.kind, d.legal, d.tile, d.from_seat, d.fan)

    def apply(self, action: int) -> None:
        self.hand.apply(action)

    def answer(self, d) -> int:
        """The action this version's bot at seat ``d[0]`` chooses at decision ``d`` (the one pending here)."""
        seat, kind, legal, tile, frm, fan = d
        if kind == "exchange" and seat in self.exchange:  # picks 2 and 3: chosen with the first
            return self.exchange[seat].pop(0)
        k = self.state.DECISIONS.index(kind)
        h = self.hand
        if self.struct:
            a = self.kernel(h.game, h.st, h.bpar, seat, k, legal, tile, frm, fan, self.rng, self.out3)
        else:
            (_, conc, mk, mt, nm, g, ps, _, _, _, _, _, _, visible, _) = h.arrays
            a = self.kernel(h.table, h.params, h.bots, h.bpar, h.rngs, conc, mk, mt, nm, g, ps, visible,
                            self.sh_buf, seat, k, legal, tile, frm, fan, self.rng, self.out3)
        a = int(a)
        if kind == "exchange":
            self.exchange[seat] = [self.state.A_TILE0 + int(t) for t in self.out3[1:]]
        elif kind == "declare":
            a = self._declare_action(a)
        return a

    def _declare_action(self, declared: int) -> int:
        st = self.state
        if declared == 0:
            return st.A_PASS
        if self.struct:
            rule = int(self.params[self.rules_index("P_DECLARE_READY")])
            if rule == self.declares.index("both") and declared == self.declares.index("dance"):
                return st.A_DANCE
            if rule != self.declares.index("both") and declared != rule:
                raise RuntimeError(f"bot declared kind {declared} under declare_ready {self.declares[rule]}")
        return st.A_DECLARE

    def rules_index(self, name: str) -> int:
        return getattr(importlib.import_module(f"{self.pkg}.rules"), name)

    # --- outputs
    def new_raw(self, hand_ids, deal_ids, rotations):
        e = self.engine
        if "win_slots" in inspect.signature(e.win_rows_per_hand).parameters:  # since f4bed72: from the mode's slots
            rows = e.win_rows_per_hand(e.win_slots(self.params))
        else:
            rows = e.win_rows_per_hand(self.rules)
        return self.engine.empty_raw(hand_ids, deal_ids, rotations, rows)

    def write(self, raw, i: int, nw: int) -> int:
        e = self.engine
        if self.struct:
            return int(e.write_outputs(i, nw, self.st, e.batch_out(raw)))
        a = self.hand.arrays
        return int(e.write_outputs(i, nw, a[5], a[6], a[7], a[9], a[10], a[11], a[12], self.hand.dealt, raw["h"],
                                   raw["p"], raw["dealt"], raw["w"], raw["w_hand"], raw["wconc"], raw["wmk"],
                                   raw["wmt"]))

    def trim(self, raw, nw: int) -> None:
        self.engine.trim_raw(raw, nw)

    def batch(self, hand_ids, seed: int):
        return importlib.import_module(f"{self.pkg}.{'hands' if self.struct else 'engine'}").run_batch(
            self.rules, hand_ids, seed, duplicate=True)


def arrays_of(raw) -> dict[str, np.ndarray]:
    """The integer output arrays of a batch result (either version's layout)."""
    names = ("h", "p", "dealt", "w", "w_hand", "wconc", "wmk", "wmt")
    return {n: np.asarray(raw[n] if isinstance(raw, dict) else getattr(raw, n)) for n in names}


class Mismatch(RuntimeError):
    pass


def play(me: Side, them: Side, walls: range, seed: int, progress: float = 0.0):
    """Play walls × 4 seatings, ``me`` at spec 0 and ``them`` at specs 1–3, both engines in lockstep. Returns the
    raw outputs of each engine (``me``'s is the score), hands whose final scores differ between the two engines,
    decisions asked and seconds."""
    deal_ids = np.repeat(np.arange(walls.start, walls.stop, dtype=np.int64), 4)
    rotations = np.tile(np.arange(4, dtype=np.int64), len(walls))
    hand_ids = 4 * deal_ids + rotations
    wall_seeds, bot_seeds = me.engine.deal_seeds(seed, deal_ids)
    w2, b2 = them.engine.deal_seeds(seed, deal_ids)
    if not (np.array_equal(wall_seeds, w2) and np.array_equal(bot_seeds, b2)):
        raise Mismatch("the two versions derive different seeds")
    dealers = deal_ids % 4
    raw_me, raw_them = me.new_raw(hand_ids, deal_ids, rotations), them.new_raw(hand_ids, deal_ids, rotations)
    nw_me = nw_them = 0
    decisions = 0
    score_diff = []
    t0 = time.time()
    last = t0
    for i in range(hand_ids.shape[0]):
        r = int(rotations[i])
        for side in (me, them):
            side.deal(r, wall_seeds[i], bot_seeds[i], int(dealers[i]))
        if not (np.array_equal(me.wall, them.wall) and np.array_equal(me.dealt, them.dealt)):
            raise Mismatch(f"hand {hand_ids[i]}: the two versions deal different walls")
        while True:
            d1, d2 = me.advance(), them.advance()
            if d1 != d2:
                raise Mismatch(f"hand {hand_ids[i]}: decision {decisions}: this checkout asks {d1}, the other {d2}")
            if d1 is None:
                break
            spec = (d1[0] + r) % 4
            a = (me if spec == 0 else them).answer(d1)
            me.apply(a)
            them.apply(a)
            decisions += 1
        nw_me = me.write(raw_me, i, nw_me)
        nw_them = them.write(raw_them, i, nw_them)
        p1 = arrays_of(raw_me)["p"][4 * i:4 * i + 4]
        p2 = arrays_of(raw_them)["p"][4 * i:4 * i + 4]
        s1, s2 = p1[:, -6:], p2[:, -6:]
        if not np.array_equal(s1, s2):
            score_diff.append(int(hand_ids[i]))
        if progress and time.time() - last > progress:
            last = time.time()
            print(f"    {i + 1:,}/{hand_ids.shape[0]:,} hands, {(i + 1) / (last - t0):.1f} hands/s", flush=True)
    me.trim(raw_me, nw_me)
    them.trim(raw_them, nw_them)
    return raw_me, raw_them, score_diff, decisions, time.time() - t0


def same_version_check(pkg: str, config: Path, work: Path, walls: int, seed: int,
                       overrides: tuple[str, ...] = ()) -> list[str]:
    """The harness with version ``pkg`` on both sides against that version's own ``run_batch``, bit for bit, for
    [expert×4] and [expert, greedy×3]. Returns failure messages (empty: exact). The sides are built as in a
    measurement (:func:`sides`): each knows only its own bot and has ``random`` at the other seats, so an answer
    asked of the wrong side would be a random bot's and the hands would not match."""
    fails = []
    for me_bot, them_bot in (("expert", "expert"), ("expert", "greedy")):
        a, b = sides(pkg, config, pkg, config, me_bot, them_bot, work, overrides)
        raw, _, diff, n_dec, secs = play(a, b, range(walls), seed)
        lineup = [me_bot] + [them_bot] * 3
        batch = Side(pkg, config, lineup, work, overrides).batch(np.arange(4 * walls, dtype=np.int64), seed)
        x, y = arrays_of(raw), arrays_of(batch)
        st = a.state
        rot = np.repeat(np.asarray(np.arange(4 * walls) % 4), 4)
        spec = (x["p"][:, st.PL_SEAT] + rot) % 4
        # the logged bot of a seat is the side's own id ("random" at the other side's seats): compared apart
        same_bot = np.array_equal(x["p"][spec == 0, st.PL_BOT], y["p"][spec == 0, st.PL_BOT])
        x["p"] = np.delete(x["p"], st.PL_BOT, axis=1)
        y["p"] = np.delete(y["p"], st.PL_BOT, axis=1)
        bad = [k for k in x if x[k].shape != y[k].shape or not np.array_equal(x[k], y[k])]
        if not same_bot:
            bad.append("bot of spec 0")
        label = f"{pkg} {'/'.join(lineup)} {walls} walls × 4 ({n_dec:,} decisions, {4 * walls / secs:.1f} hands/s)"
        if bad or diff:
            fails.append(f"{label}: differs from run_batch in {bad}, engines' scores differ in {len(diff)} hands")
        print(f"  same-version check {label}: {'EXACT' if not bad and not diff else 'DIFFERS ' + str(bad)}",
              flush=True)
    return fails


def sides(me_pkg: str, me_cfg: Path, them_pkg: str, them_cfg: Path, me_bot: str, them_bot: str, work: Path,
          overrides: tuple[str, ...] = ()):
    """The two sides of a table: ``me`` plays spec 0 (``random`` at specs 1–3, never asked), ``them`` specs 1–3
    (``random`` at spec 0, never asked)."""
    return (Side(me_pkg, me_cfg, [me_bot] + ["random"] * 3, work, overrides),
            Side(them_pkg, them_cfg, ["random"] + [them_bot] * 3, work, overrides))


def report(raw, walls: range, label: str) -> dict:
    """Mean score of spec 0 per player-hand with SE clustered by wall; deal-ins per player-hand (discard wins,
    as benchmarks/expert.py counts them) of spec 0 and of specs 1–3."""
    x = arrays_of(raw)
    p, w, w_hand = x["p"], x["w"], x["w_hand"]
    st = importlib.import_module("simulator.kernel.state")
    n_hands = p.shape[0] // 4
    row = np.arange(p.shape[0])
    hand = row // 4
    deal = hand // 4  # walls are played in order, four seatings each: hand row // 4 = wall index
    rot = hand % 4
    seat = p[:, st.PL_SEAT]
    mine = (seat + rot) % 4 == 0
    score = p[:, st.PL_SCORE:st.PL_SCORE + st.N_COMP].sum(axis=1).astype(np.float64)
    nw = len(walls)
    per_wall = np.bincount(deal[mine], weights=score[mine], minlength=nw) / 4.0
    my_seat = seat[mine]  # one per hand, in hand order
    discard = w[:, st.W_KIND] == st.WK_DISCARD
    payer = w[:, st.W_PAYER]
    es = my_seat[w_hand]
    mine_in = discard & (payer == es)
    others_in = discard & (payer != es) & (payer >= 0)
    d_wall = np.bincount(w_hand[mine_in] // 4, minlength=nw) / 4.0
    se = per_wall.std(ddof=1) / np.sqrt(nw)
    out = {"mean": per_wall.mean(), "se": se, "deal_in_me": d_wall.mean(),
           "deal_in_me_se": d_wall.std(ddof=1) / np.sqrt(nw), "deal_in_them": others_in.sum() / (3 * n_hands),
           "per_wall": per_wall, "d_wall": d_wall}
    print(f"  {label}: me {out['mean']:+.4f} ± {se:.4f} base units per player-hand (SE clustered by wall; {nw:,} "
          f"walls × 4 seatings); deal-ins per player-hand: me {out['deal_in_me']:.4f} ± {out['deal_in_me_se']:.4f}, "
          f"them {out['deal_in_them']:.4f}", flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", default="d5b5a22", help="the other commit (its bots play specs 1-3)")
    ap.add_argument("--config", default="chengdu", help="a rule set name (configs/<name>.yaml of each version)")
    ap.add_argument("--set", nargs="*", default=[], help="rule overrides for both versions, e.g. declare_ready=dance")
    ap.add_argument("--walls", type=int, default=2000)
    ap.add_argument("--first-wall", type=int, default=0)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--me", default="expert", help="this checkout's bot (spec 0)")
    ap.add_argument("--them", default="expert", help="the other commit's bot (specs 1-3)")
    ap.add_argument("--check", type=int, default=8, help="walls of the same-version checks run first (0: none)")
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--work", default="/tmp/versus_commit", help="where the other commit is extracted")
    ap.add_argument("--save", help="write per-wall figures (.npz: score, deal_in, wall ids) here")
    ap.add_argument("--chunk", type=int, default=250, help="walls per progress line / checkpoint")
    args = ap.parse_args()
    work = Path(args.work)
    old_pkg, old_base = extract_commit(args.old, work)
    new_cfg = ROOT / "configs" / f"{args.config}.yaml"
    old_cfg = old_base / "configs" / f"{args.config}.yaml"
    print(f"this checkout: {ROOT} ({_git_head()}); other: {args.old} as {old_pkg}; {args.config}"
          f"{' ' + ' '.join(args.set) if args.set else ''}, seed {args.seed}", flush=True)
    if args.check:
        fails = same_version_check("simulator", new_cfg, work, args.check, args.seed, tuple(args.set))
        fails += same_version_check(old_pkg, old_cfg, work, args.check, args.seed, tuple(args.set))
        if fails:
            print("NOT EXACT:\n  " + "\n  ".join(fails))
            sys.exit(1)
    if args.check_only:
        return
    me, them = sides("simulator", new_cfg, old_pkg, old_cfg, args.me, args.them, work, tuple(args.set))
    per_wall, d_wall, them_in, diffs, n_dec, secs = [], [], [], 0, 0, 0.0
    start, stop = args.first_wall, args.first_wall + args.walls
    for lo in range(start, stop, args.chunk):
        walls = range(lo, min(stop, lo + args.chunk))
        raw_me, _, diff, n, s = play(me, them, walls, args.seed)
        n_dec, secs, diffs = n_dec + n, secs + s, diffs + len(diff)
        out = report(raw_me, walls, f"walls {walls.start}-{walls.stop - 1} ({4 * len(walls) / s:.1f} hands/s, "
                                    f"{len(diff)} hands scored differently by the other engine)")
        per_wall.append(out["per_wall"])
        d_wall.append(out["d_wall"])
        them_in.append(out["deal_in_them"] * len(walls))
        if args.save:
            np.savez(args.save, score=np.concatenate(per_wall), deal_in=np.concatenate(d_wall),
                     first_wall=start, seed=args.seed)
    pw, dw = np.concatenate(per_wall), np.concatenate(d_wall)
    n = len(pw)
    print(f"TOTAL {args.me} (this checkout) vs 3 {args.them} ({args.old}), {args.config} seed {args.seed}, walls "
          f"{start}-{stop - 1}: {pw.mean():+.4f} ± {pw.std(ddof=1) / np.sqrt(n):.4f} per player-hand; deal-ins "
          f"me {dw.mean():.4f} ± {dw.std(ddof=1) / np.sqrt(n):.4f}, them {sum(them_in) / n:.4f}; {n_dec:,} decisions, "
          f"{4 * n / secs:.1f} hands/s; {diffs} hands scored differently by the other engine", flush=True)


def _git_head() -> str:
    r = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "simulator"], capture_output=True,
                           text=True).stdout.strip()
    return r.stdout.strip() + (" +dirty simulator/" if dirty else "")


if __name__ == "__main__":
    main()
