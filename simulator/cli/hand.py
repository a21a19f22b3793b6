"""``xuezhan score``, ``replay`` and ``play``: the commands about one hand (score it, replay it, play it).
"""

from __future__ import annotations

from pathlib import Path

import typer

from simulator.choices import Lang, Suit
from simulator.cli import complete as cli_complete
from simulator.cli.common import fail

# ---- score (simulator.kernel.scoring) -------------------------------------------------------------------------------

def score(
    hand: str | None = typer.Argument(None, help="Concealed tiles incl. the winning tile, e.g. 123m456m789m11p22p."),
    win_tile: str | None = typer.Option(None, "--win-tile", help="The winning tile, e.g. 2p."),
    meld: list[str] | None = typer.Option(
        None, "--meld", help="Meld set down: pung:5p, kong:7s or ckong:3m (暗杠); repeatable or comma-separated "
        "as in the logs' melds column (pung:5p,kong:7s)."),
    self_draw: bool = typer.Option(False, "--self-draw", help="Won by self-draw (自摸)."),
    rob_kong: bool = typer.Option(False, "--rob-kong", help="Won by robbing an added kong (抢杠胡)."),
    after_kong: bool = typer.Option(False, "--after-kong", help="Self-draw on a kong replacement (杠上花)."),
    kong_discard: bool = typer.Option(False, "--kong-discard", help="Discard made right after its maker's kong."),
    last_tile: bool = typer.Option(False, "--last-tile", help="Last tile of the wall (海底)."),
    first_draw: bool = typer.Option(False, "--first-draw", help="First draw: 天胡 with --dealer, else 地胡."),
    dealer: bool = typer.Option(False, "--dealer", help="The winner is the dealer (with --first-draw)."),
    context: str = typer.Option(
        "", "--context", help="Context as in the logs' context column, e.g. after_kong,last_tile (same as the "
        "flags above)."),
    void: Suit | None = typer.Option(None, "--void", help="Declared void suit m, p or s (default: none declared)."),
    rules_ref: str = typer.Option("chengdu", "--rules", autocompletion=cli_complete.rule_sets,
                                  help="Rule set: a name in configs/ or a YAML path."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of the breakdown."),
    vectors: Path | None = typer.Option(None, "--vectors", help="Run a vectors file (scoring.yaml format)."),
) -> None:
    """Score one winning hand (fan, capped fan, points per payer), or check a file of scoring vectors."""
    import json

    from simulator.hands.score import breakdown, check_vectors, score_hand
    from simulator.rules import load_rules

    if vectors is not None:
        _text_file(vectors, "--vectors")
        results = check_vectors(vectors)
        for line in results:
            typer.echo(json.dumps(line, ensure_ascii=False))
        failed = sum(not r["ok"] for r in results)
        typer.echo(f"{len(results) - failed} passed, {failed} failed")
        raise typer.Exit(1 if failed else 0)
    if hand is None or win_tile is None:
        raise fail("score needs HAND and --win-tile (or --vectors FILE)")
    if self_draw and rob_kong:
        raise fail("--self-draw and --rob-kong exclude each other")
    win = "self_draw" if self_draw else "rob_kong" if rob_kong else "discard"
    flags = {"after_kong": after_kong, "after_own_kong_discard": kong_discard, "last_tile": last_tile,
             "first_draw": first_draw, "dealer": dealer}
    ctx = {k for k, v in flags.items() if v} | {c.strip() for c in context.split(",") if c.strip()}
    melds = [m.strip() for spec in meld or [] for m in spec.split(",") if m.strip()]
    rules = load_rules(rules_ref, set_ or None)
    result = score_hand(rules, hand, melds, win_tile, win, ctx, void=void)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        typer.echo("\n".join(breakdown(rules, result, win)))


def _text_file(path: Path, option: str) -> None:
    """Refuse, in one line, a file that cannot be read as UTF-8 text (a binary file given by mistake)."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise fail(f"{option} {path}: cannot read ({exc.strerror})") from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise fail(f"{option} {path}: not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})") from None


# ---- replay (simulator.replay) --------------------------------------------------------------------------------

def replay(
    config: str | None = typer.Argument(None, autocompletion=cli_complete.rule_sets,
                                        help="Rule set: a name in configs/ (chengdu, cap3, ...) or a YAML "
                                        "path (not with --run)."),
    seed: int | None = typer.Option(None, "--seed", help="Master seed, as given to simulate (not with --run)."),
    hand: int = typer.Option(0, "--hand", help="Hand id to replay (default 0)."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
    duplicate: bool = typer.Option(False, "--duplicate", help="The seating of duplicate play (hand_id = "
                                   "4·deal_id + rotation), as simulate --duplicate."),
    run: Path | None = typer.Option(None, "--run", help="Replay a hand of this run directory exactly as it was "
                                    "played (rules, seed, seating from its manifest), verified against its logs."),
    variant: str | None = typer.Option(None, "--variant", autocompletion=cli_complete.variants,
                                       help="Variant of --run (default: the study's baseline, "
                                       "or the only variant)."),
    lang: Lang = typer.Option("zh", "--lang", help="zh (Chinese tile names) or en (tile notation, English)."),
) -> None:
    """Print one hand as a player would follow it: deal, 换三张, 定缺, every turn, wins with fans, settlement."""
    from simulator.replay import LANGS, record_logged_hand, show
    from simulator.replay import replay as play

    if lang not in LANGS:
        raise fail(f"--lang {lang!r}: expected one of {', '.join(LANGS)}")
    if run is not None:
        given = [name for name, v in (("CONFIG", config), ("--seed", seed), ("--set", set_),
                                      ("--duplicate", duplicate or None)) if v is not None]
        if given:
            raise fail(f"--run replays the run's own rules, seed and seating: drop {', '.join(given)}")
        show(record_logged_hand(run, variant, hand), lang)
        return
    if config is None or seed is None:
        raise fail("replay needs CONFIG and --seed (or --run DIR)")
    if variant is not None:
        raise fail("--variant needs --run")
    play(config, seed, hand, set_ or None, duplicate=duplicate, lang=lang)



# ---- play (simulator.agents.play) ------------------------------------------------------------------------------------

def play(
    config: str = typer.Argument("chengdu", autocompletion=cli_complete.rule_sets,
                                 help="Rule set: a name in configs/ or a YAML path."),
    seed: int = typer.Option(0, "--seed", help="Master seed (the same hands as simulate --seed)."),
    hand: int = typer.Option(0, "--hand", help="Hand id to play."),
    seat: int = typer.Option(0, "--seat", help="Your seat, 0–3 (the other seats keep the rule set's bots)."),
    set_: list[str] | None = typer.Option(None, "--set", help="Rule override KEY=VALUE, repeatable."),
) -> None:
    """Take a seat in the terminal against the bots: answer with a tile (5m), pass, pung, kong, win, a suit at
    定缺, or Enter for the first legal action; then replay the hand to see what everyone did."""
    from simulator.agents.play import Human, final_lines
    from simulator.agents.play import play as play_hand
    from simulator.rules import load_rules

    if not 0 <= seat <= 3:
        raise fail(f"--seat {seat}: expected 0, 1, 2 or 3")
    if hand < 0:
        raise fail(f"--hand {hand}: hand ids are 0 or more")
    raw = play_hand(load_rules(config, set_ or None), seed, hand, seat, Human())
    for line in final_lines(raw):
        typer.echo(line)
