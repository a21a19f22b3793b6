"""Adapted players' weights and the expert they were tuned on: a play fingerprint.

``xuezhan tune`` (:mod:`simulator.run.tune`) seats a candidate expert (:func:`candidate`) in seat 0 against a field
(:func:`lineup`). Beside the weights it writes a **fingerprint** of the expert it tuned: the SHA-256 of the scores
of ``FINGERPRINT_HANDS`` hands (hand ids 0.., seed 0, duplicate seating) that the tuned seat and the field play
under the tuned rule set. Weights tuned for one version of the expert belong to that version (a change to the
expert can turn a measured gain into a loss: docs/studies.md, "Adapted players"); when the expert's play changes,
those hands play differently and the digest differs. A run seating the file then says so
(:func:`stale_notes`, a warning per variant), as it does when the rule set itself changed since the tuning.
A file that keeps the defaults is never stale: the defaults are the expert's own.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

import numpy as np

from simulator.hands import play_hands
from simulator.logs.manifest import Stale
from simulator.rules import TUNABLE, TUNED_KEY, BotSpec, RulesError, RuleSet, apply_overrides, load_rules, validate
from simulator.rules.load import read_yaml_mapping
from simulator.rules.seats import resolve_tuned_path

DEFAULTS = {k: BotSpec.model_fields[k].default for k in TUNABLE}  # the default expert's values
FINGERPRINT_HANDS = 32  # hand ids 0..31 of seed 0, duplicate seating (a multiple of 4)


def lineup(rules: RuleSet, seat0: dict[str, Any], field: list[Any], source: str = "--field") -> RuleSet:
    """``rules`` with ``seat0`` in seat 0 and the field in seats 1–3 (validated; one-line error naming
    ``source``)."""
    return validate(apply_overrides(rules.resolved(), {"seats": [seat0, *field]}), source)


def candidate(params: dict[str, float]) -> dict[str, Any]:
    """Seat 0's spec: an expert with these tuned values (the other parameters as the default expert's)."""
    return {"bot": "expert", **params}


def play_fingerprint(rules: RuleSet) -> str:
    """SHA-256 (hex) of the ``score_total`` column (int64, players rows in order) of hands
    ``0..FINGERPRINT_HANDS−1`` of seed 0 under ``rules``, duplicate seating."""
    ids = np.arange(FINGERPRINT_HANDS, dtype=np.int64)
    scores = np.asarray(play_hands(rules, ids, 0, duplicate=True)["players"]["score_total"], dtype=np.int64)
    return hashlib.sha256(np.ascontiguousarray(scores).tobytes()).hexdigest()


def fingerprint_record(rules: RuleSet, params: dict[str, float], field: list[Any]) -> dict:
    """The tuned file's ``fingerprint`` entry for weights ``params`` seated against ``field`` under ``rules``."""
    return {"hands": FINGERPRINT_HANDS, "seed": 0, "duplicate": True,
            "sha256": play_fingerprint(lineup(rules, candidate(params), field))}


def stale_notes(rules: RuleSet) -> list[Stale]:
    """One :class:`Stale` per tuned file seated in ``rules`` (``params_from``) whose weights no longer fit: the
    expert's play or the tuned rule set changed since the file was written. Files keeping the defaults, without a
    fingerprint (written before it existed) or no longer on disk (a recorded rule set) are not checked."""
    refs = sorted({s.params_from for s in rules.seats if s.params_from})
    notes = []
    for ref in refs:
        try:
            path = resolve_tuned_path(ref)
        except RulesError:
            continue
        found = _stale_note(str(path), path.stat().st_mtime_ns)
        if found:
            notes.append(Stale(ref, f"params_from {ref}: {found[0]}", found[1]))
    return notes


@functools.lru_cache(maxsize=64)
def _stale_note(path: str, mtime_ns: int) -> tuple[str, str] | None:
    """``(problem, advice)`` if the tuned file at ``path`` is stale (cached per modification time), or None."""
    doc = read_yaml_mapping(Path(path), "a tuned-parameters file")
    params, fp, tuned_on = doc.get(TUNED_KEY), doc.get("fingerprint"), doc.get("rules")
    if not isinstance(fp, dict) or not isinstance(params, dict) or params == DEFAULTS:
        return None
    try:
        name, overrides, field = tuned_on["name"], tuned_on["set"], doc["field"]
        rules = load_rules(name, list(overrides))
        if lineup(rules, {"bot": "expert"}, field).digest() != tuned_on["digest"]:
            return (f"the rule set {name!r} has changed since it was tuned, so its measured gain may not hold",
                    f"rerun xuezhan tune {name}")
        same = play_fingerprint(lineup(rules, candidate(params), field)) == fp["sha256"]
    except (RulesError, KeyError, TypeError) as e:
        return f"cannot check that it was tuned on this expert ({e})", "rerun xuezhan tune to write a checkable file"
    if same:
        return None
    return ("tuned on another version of the expert (its check hands play differently now), so its measured "
            "gain may not hold", f"rerun xuezhan tune {name}")
