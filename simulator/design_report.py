"""The report of ``xuezhan design``: ``DIR/NAME.md`` and its figure ``DIR/NAME.png``, from the run's document
(:func:`simulator.design.document`): the chosen rule set's targets with intervals per line-up on fresh walls
beside the baseline's, what could not be met (the closest candidate, the targets it misses and by how much), the
search walls' feasible set as a figure (each target's metric against the searched value, the band shaded) and the
search history.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from simulator.design_metrics import metric_info
from simulator.files import atomic_write


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
    fig, axes = plt.subplots(1, len(targets) + 1, figsize=(4.2 * (len(targets) + 1), 3.6), squeeze=False)
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
    ax = axes[0][-1]
    ax.scatter([h["trial"] for h in hist], [h["objective"] for h in hist], s=14,
               c=["tab:green" if h["met"] else "tab:red" for h in hist])
    ax.set_title(f"objective ({_objective(design)}) by trial\ngreen: every target met on the search walls",
                 fontsize=9)
    ax.set_xlabel("trial")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


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
              f"![feasible set and history]({f.name}.png)", "",
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
