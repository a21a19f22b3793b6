"""The report of ``xuezhan design``: ``DIR/NAME.md`` and its figure ``DIR/NAME.png``, from the run's document
(:func:`simulator.run.design.document`): the chosen rule set's targets with intervals per line-up on fresh walls
beside the baseline's, what could not be met (the closest candidate, the targets it misses and by how much), the
search walls' feasible set as a figure (each target's metric against the searched value, the band shaded; the
trade-off between the objective and the distance from feasibility, its Pareto front drawn; with two targets or
more, the first two against each other), the error bound of the confirmation and the search history.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from simulator.files import atomic_write
from simulator.run.design_metrics import metric_info


def metric_share(mid: str) -> bool:
    try:
        return metric_info(mid).share
    except KeyError:  # a searched key as the objective
        return False


def _cell(t: dict) -> str:
    lo, hi = t["ci95"]
    return f"{t['estimate']:+.4f} [{lo:+.4f}, {hi:+.4f}]"


def _params(p: dict) -> str:
    return ", ".join(f"{k} = {v}" for k, v in p.items()) or "the baseline's values"


def _target_table(rows: list[dict], base: list[dict]) -> list[str]:
    out = ["| target | line-up | on fresh walls (95% CI) | baseline (95% CI) | met | misses by | walls | n |",
           "|---|---|---|---|---|---|---|---|"]
    for r, b in zip(rows, base, strict=True):
        out.append(f"| {r['target']} | {r['population']} | {_cell(r)} | {_cell(b)} | {'yes' if r['met'] else 'no'} | "
                   f"{r['misses_by']:g} | {r['walls']:,} | {r['n']:,} |")
    return out


def figure(design: Any, doc: dict, path: Path) -> None:
    """One panel per target: the metric on the search walls (95% interval) against the first searched key (or the
    trial number), feasible trials filled, the target's band shaded; and the objective by trial."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    hist = doc["search"]["history"]
    key = next(iter(design.file.search))
    numeric = all(isinstance(h["params"][key], int | float) and not isinstance(h["params"][key], bool) for h in hist)
    xs = [h["params"][key] if numeric else h["trial"] for h in hist]
    targets = design.file.targets
    panels = len(targets) + 1 + (len(targets) >= 2)
    fig, axes = plt.subplots(1, panels, figsize=(4.2 * panels, 3.6), squeeze=False)
    pop = next(iter(design.populations))
    for ax, t in zip(axes[0], targets, strict=False):
        p = t.population or pop
        for h, x in zip(hist, xs, strict=True):
            e = h["estimates"][p][t.metric]
            ax.errorbar([x], [e["estimate"]], yerr=[[e["estimate"] - e["ci95"][0]], [e["ci95"][1] - e["estimate"]]],
                        fmt="o", color="tab:green" if h["met"] else "tab:red", mfc="tab:green" if h["met"] else "none",
                        ms=4, capsize=2)
        lo, hi = t.band
        if metric_share(t.metric) and lo <= 0 < hi < 1:  # a small share's bound: log-like scale near 0
            ax.set_yscale("symlog", linthresh=hi / 10, linscale=0.5)
        ymin, ymax = ax.get_ylim()
        ax.axhspan(max(lo, ymin), min(hi, ymax), color="tab:green", alpha=0.12, lw=0)
        ax.set_title(f"{t.text()}\n({p}; search walls)", fontsize=9)
        ax.set_xlabel(key if numeric else "trial")
    pareto(axes[0][-1], hist, _objective(design), chosen=(doc.get("chosen") or doc.get("closest") or {}).get("trial"))
    if len(targets) >= 2:
        tradeoff(axes[0][-2], hist, targets[0], targets[1], pop)
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def front(points: list[tuple[float, float]]) -> list[int]:
    """Indices of the Pareto front of ``(objective, excess)`` pairs, both minimised: no other point is at least as
    good in both and better in one. In ascending objective (ties: the first)."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], points[i][1], i))
    out, best = [], math.inf
    for i in order:
        if points[i][1] < best:
            out.append(i)
            best = points[i][1]
    return out


def pareto(ax: Any, hist: list[dict], objective: str, chosen: int | None) -> None:
    """The search's trade-off: each trial's objective against how far its intervals stick out of the targets on
    the search walls (summed, each in its target's scale; 0 = feasible), the Pareto front joined, the chosen (or
    closest) candidate ringed."""
    pts = [(h["objective"], h["excess"]) for h in hist]
    ax.scatter(*zip(*pts, strict=True), s=14, c=["tab:green" if h["met"] else "tab:red" for h in hist], zorder=2)
    idx = front(pts)
    ax.step([pts[i][0] for i in idx], [pts[i][1] for i in idx], where="post", color="grey", lw=1, zorder=1,
            label="Pareto front")
    for h, (x, y) in zip(hist, pts, strict=True):
        if h["trial"] == chosen:
            ax.scatter([x], [y], s=90, facecolors="none", edgecolors="black", zorder=3, label="chosen / closest")
    ax.axhline(0, color="tab:green", lw=0.8)
    ax.set_xlabel(f"objective ({objective})")
    ax.set_ylabel("distance from the targets (0 = feasible)")
    ax.set_title("trade-off on the search walls\ngreen: every target met", fontsize=9)
    ax.legend(fontsize=7)


def tradeoff(ax: Any, hist: list[dict], a: Any, b: Any, pop: str) -> None:
    """Two targets against each other on the search walls: each trial's two metrics (95% intervals), the box where
    both hold shaded."""
    pa, pb = a.population or pop, b.population or pop
    for h in hist:
        ea, eb = h["estimates"][pa][a.metric], h["estimates"][pb][b.metric]
        ax.errorbar([ea["estimate"]], [eb["estimate"]],
                    xerr=[[ea["estimate"] - ea["ci95"][0]], [ea["ci95"][1] - ea["estimate"]]],
                    yerr=[[eb["estimate"] - eb["ci95"][0]], [eb["ci95"][1] - eb["estimate"]]], fmt="o", ms=4,
                    capsize=2, color="tab:green" if h["met"] else "tab:red", mfc="tab:green" if h["met"] else "none")
    (alo, ahi), (blo, bhi) = a.band, b.band
    xmin, xmax = ax.get_xlim()
    ymin, ymax = ax.get_ylim()
    ax.fill_between([max(alo, xmin), min(ahi, xmax)], max(blo, ymin), min(bhi, ymax), color="tab:green", alpha=0.12,
                    lw=0)
    ax.set_xlabel(f"{a.metric} ({pa})")
    ax.set_ylabel(f"{b.metric} ({pb})")
    ax.set_title("the first two targets (search walls)\nshaded: both hold", fontsize=9)


def bound_text(confirmed: int, targets: int, met: bool) -> str:
    """What the result guarantees, for this run's numbers of re-measured candidates and of targets."""
    joint = (f" With {targets} targets each checked at 95%, the chance that every interval covers its true value "
             f"is at least {100 - 5 * targets:g}% (Bonferroni)." if targets > 1 else "")
    if not met:
        return ("Error bound: nothing was reported as met, so no rule set is vouched for; the closest candidate's "
                "intervals are 95% each." + joint)
    return (f"Error bound: {confirmed} candidate{'s' if confirmed != 1 else ''} re-measured on the same fresh walls, "
            f"the first that passed taken. A rule set whose true value lies just outside a one-sided target passes "
            f"with probability at most 2.5%, so the chance that the chosen one does not truly meet a target it is "
            f"reported to meet is at most {confirmed} × 2.5% = {2.5 * confirmed:g}% (Bonferroni over the "
            f"re-measured candidates; the file's `confirm` caps it)." + joint)


def _objective(design: Any) -> str:
    obj = design.file.objective
    return obj if isinstance(obj, str) else " ".join(next(iter(obj.items())))


def write_report(design: Any, doc: dict, out_dir: Path) -> Path:
    """Write ``out_dir/NAME.md`` and ``NAME.png``; returns the Markdown's path."""
    f = design.file
    s, fr = doc["search"], doc["fresh"]
    lines = [f"# Design {f.name}", "", f.description, "" if f.description else "",
             f"Baseline `{f.baseline}`; line-ups: " + "; ".join(
                 f"{name} ({', '.join(b.bot for b in r.seats)}{', duplicate seating' if dup else ''})"
                 for name, (r, dup) in design.populations.items()) + f"; objective: {_objective(design)}.", ""]
    base_rows = doc["baseline_fresh"]["targets"]
    if doc["met"]:
        c = doc["chosen"]
        lines += ["## Result: every target met", "",
                  f"Chosen (trial {c['trial']}): {_params(c['params'])}; changed from the baseline: "
                  f"{_params(c['changed'])}. Written as `{f.name}.yaml` (extends the baseline). Measured on "
                  f"{fr['walls']:,} fresh walls (seed {fr['seed']}) per line-up; a target is met only when its 95% "
                  "interval lies inside it:", "", *_target_table(c["targets"], base_rows), ""]
    else:
        c = doc["closest"]
        failed = "; ".join(f"{t['target']} ({t['population']}): {_cell(t)}, outside by {t['misses_by']:g}"
                           for t in c["failed"])
        lines += ["## Result: not met", "",
                  f"No candidate met every target on fresh walls ({len(doc['confirmed'])} re-measured; "
                  f"{s['feasible']} of {s['trials']} met them on the search walls). No rule file was written.", "",
                  f"Closest candidate (trial {c['trial']}): {_params(c['params'])}. Failed: {failed}.", "",
                  *_target_table(c["targets"], base_rows), ""]
    lines += ["## Search", "",
              f"{s['trials']} trials (budget {s['budget']}) on the same {s['walls']:,} walls of seed {s['seed']} "
              f"({s['blocks']} blocks; a trial stops after a block whose interval of some target lies wholly outside "
              f"it); {s['feasible']} met every target on the search walls. Re-measured on fresh walls, best "
              "objective first: " + (", ".join(f"trial {x['trial']} ({'met' if x['met'] else 'not met'})"
                                               for x in doc["confirmed"]) or "none") + ".", "",
              bound_text(len(doc["confirmed"]), len(f.targets), doc["met"]), "",
              f"![feasible set, trade-off and Pareto front]({f.name}.png)", "",
              "| trial | values | objective | met (search walls) | " + " | ".join(t.metric for t in f.targets) + " |",
              "|---|---|---|---|" + "---|" * len(f.targets)]
    pop = next(iter(design.populations))
    for h in s["history"]:
        cells = [_cell(h["estimates"][t.population or pop][t.metric]) for t in f.targets]
        lines.append(f"| {h['trial']} | {_params(h['params'])} | {h['objective']:g} | {'yes' if h['met'] else 'no'} | "
                     + " | ".join(cells) + " |")
    lines += ["", "Search-wall values are optimistic for the chosen candidate (the best of many on the same walls); "
              "only the fresh-wall intervals above decide. Method, guarantees and limits: docs/design.md.", ""]
    figure(design, doc, out_dir / f"{f.name}.png")
    path = out_dir / f"{f.name}.md"
    atomic_write(path, "\n".join(lines).encode())
    return path
