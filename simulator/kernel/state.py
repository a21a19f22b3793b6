"""Layout of the compiled engine's per-hand state: plain numpy arrays and the integer slots that index them.

One hand's state is a handful of arrays allocated once per batch and reset per hand (no allocation per turn):

- ``wall: int8[108]`` — the shuffled wall; draws come from ``g[G_HEAD]`` upwards, kong replacements from
  ``g[G_TAIL]`` downwards (no dead wall), so ``tiles_left = G_TAIL − G_HEAD``.
- ``conc: uint8[4, 27]`` concealed counts; ``mk, mt: int8[4, 4]`` meld kinds/tiles; ``nm: int64[4]`` melds.
- ``g: int64[G_N]`` hand-wide scalars (``G_*``); ``ps: int64[4, PS_N]`` per-seat scalars (``PS_*``).
- ``score: int64[4, N_COMP]`` money by component (``C_*``), base units; every payment moves money between two
  seats, so each column sums to zero.
- ``kl: int64[K_MAX, KL_N]`` the kong ledger: who made each kong, what each seat paid for it, and whether its
  income was later transferred or refunded.
- ``wins: int64[MAX_WINS, W_N]`` plus ``wconc: uint8[MAX_WINS, 27]``, ``wmk, wmt: int8[MAX_WINS, 4]``: the wins
  (``MAX_WINS_XUELIU`` rows under ``mode: xueliu``, where a seat can win many times).
- ``visible: int8[27]`` tiles every player has seen (discards and face-up melds; a concealed kong is face down and
  is added only around its owner's own decisions), for bots' acceptance counts.
- ``events: int32[E_MAX, EV_W]`` the optional event log (replay, tests); a one-row array disables it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import NamedTuple

import numpy as np
from numba import njit
from numba import types as nt
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.extending import intrinsic

from simulator.rules.columns import ROWS, row_layout
from simulator.rules.keys import SLOT, code
from simulator.rules.vocab import XUELIU_MAX_WIN_EVENTS

P_VOID_SUIT = SLOT["void_suit"]

# numba types of the engine's scalars and of its two tuples, for the compile plan (simulator.hands.precompile; the
# arrays' types are read off real allocations there).
I64 = nt.int64
BOOL = nt.boolean
WIN_RESULT = nt.UniTuple(nt.int64, 6)  # evaluate_win's (fan, capped, flags, gen, hand_type, points)
WIN_AT = nt.UniTuple(nt.int64, 6)  # engine.record_win's win: (winner, tile, kind, payer, n_payers, ctx)

N_SEATS = 4
N_KINDS = 27
N_TILES = 108
HAND = 13
MAX_WINS = 3          # at most three players win a hand (the fourth is always left)
MAX_WINS_XUELIU = 3 * XUELIU_MAX_WIN_EVENTS  # 血流: every win event (one tile set aside) has at most 3 winners
K_MAX = 28            # kongs per hand: at most one per kind (27), plus a spare slot

# Hand-wide scalars g[...]
(G_HEAD, G_TAIL, G_TURNS, G_NKONGS, G_NWINS, G_WIN_EVENTS, G_NWON, G_INTERRUPTED, G_NEV, G_EXHAUSTIVE,
 G_DEALER, G_EXCHANGE, G_ENDED, G_CHAIN, G_EV_OVERFLOW, G_MONEY_SCALE) = range(16)
G_N = 16
# G_CHAIN: kong-ledger index of the first kong of the current player's turn (杠上炮 / 呼叫转移 scope)

# Per-seat scalars ps[seat, ...]
(PS_VOID, PS_EVOID, PS_WON, PS_WIN_ORDER, PS_LOCKED, PS_LOCK_MASK, PS_LOCK_FAN, PS_DECLINED, PS_NKONGS,
 PS_NDRAWS, PS_WAITS, PS_BOT, PS_SAFE, PS_DISCARDED, PS_HUAZHU, PS_READY, PS_START_SH, PS_WIN_TURN,
 PS_WIN_KIND, PS_WIN_IDX, PS_DECLARED, PS_SHOWN, PS_DRAWN, PS_NWINS, PS_WON_KINDS, PS_CLEARED) = range(26)
PS_N = 26
# PS_NWINS: wins of this seat in the hand (血流: several); PS_WON = 1 only once it has left play
# PS_WON_KINDS: kinds this seat has won on (bit mask; 血流: its locked hand still waits on them); PS_CLEARED: kinds
# others discarded after its first win that it did not win on (bit mask; both public: a 血流 winner's locked hand
# never waits on a cleared kind unless it declined a win on it)
# PS_VOID: declared void suit (−1 none); PS_EVOID: the void passed to evaluate (−1 under void_suit: none)
# PS_SAFE: kinds discarded by someone else since this seat's last draw (this seat passed on them)
# PS_DECLARED: 0, or what this seat declared (1 sing, 2 dance: the declare_ready values); PS_SHOWN: a dancer's waits
# (bit mask, shown to all); PS_DRAWN: the tile this seat drew last (a declared hand must discard it)

# Score components (the players table's score_* columns, in schema.SCORE_COMPONENTS order)
C_WIN, C_KONG, C_TRANSFER, C_HUAZHU, C_CHADAJIAO, C_REFUND = range(6)
N_COMP = 6

# Kong ledger kl[i, ...]
KL_MAKER, KL_KIND, KL_TILE, KL_STATUS, KL_FEEDER, KL_PAID = range(6)   # KL_PAID..KL_PAID+3: paid per seat
KL_N = KL_PAID + N_SEATS
KS_LIVE, KS_TRANSFERRED, KS_REFUNDED, KS_RETURNED = range(4)  # RETURNED = 退税 at the exhaustive draw

# Win kinds (schema "kind"/"win_kind"), in simulator.vocab.WIN_KINDS order
WK_DISCARD, WK_SELF_DRAW, WK_ROB_KONG = range(3)


# Events: events[i] = (type, seat, tile, amount, a, b)
EV_W = 6
E_MAX = 1024
(EV_DEAL, EV_EXCHANGE, EV_VOID, EV_DRAW, EV_DISCARD, EV_PUNG, EV_KONG, EV_PAY, EV_WIN, EV_DECLINE, EV_ROBBED,
 EV_READY, EV_HUAZHU, EV_END, EV_LOCKED, EV_DECLARE) = range(16)
# EV_DEAL: seat, a = number of tiles (the tiles themselves are in the dealt arrays)
# EV_EXCHANGE: seat gives tile to seat a          EV_VOID: seat declares suit a
# EV_DRAW: seat draws tile, a = 1 from the tail  EV_DISCARD: seat discards tile, a = the bot's reason (expert R_*)
# EV_KONG: seat konged tile, a = 1 直杠 / 2 加杠 / 3 暗杠 (settlement.KK_*), b = feeder or −1
# EV_PAY: seat pays amount to a, b = component C_*   EV_PUNG: seat pungs tile from a
# EV_WIN: seat wins on tile, a = win kind, b = win record index   EV_ROBBED: seat's added kong of tile is robbed
# EV_DECLINE: seat declines a win on tile worth amount capped fan, a = win kind
# EV_READY: seat is ready at the end, amount = 查大叫 points   EV_HUAZHU: seat is a 花猪 at the draw
# EV_END: a = exhaustive draw (0/1), amount = tiles left; logged before the settlement events
# EV_LOCKED: seat could not win on tile (worth amount capped fan) because of its pass_ron_lock
# EV_DECLARE: seat declares ready after its discard, a = 1 唱歌 / 2 跳舞, amount = its waits (bit mask; shown
#   to the table only when dancing)


# The output slots, numbered from the column table (simulator.rules.columns.row_layout, in column order; a column
# whose source names a new slot adds its constant here): the per-hand results H_* (hands, BatchResult.h), per-player
# PL_* (players, .p; PL_SCORE..PL_SCORE+5 the score components, C_* order), the win records W_* (wins, .w, st.wins).
for _table, _prefix in ROWS.items():
    _slots, _width = row_layout(_table)
    globals().update(_slots)
    globals()[f"{_prefix}N"] = _width
H_EV_OVERFLOW = H_N  # noqa: F821  an engine diagnostic (the event buffer was full), checked by the replay, no column
H_N = H_EV_OVERFLOW + 1


VOID_DECLARED, VOID_LENIENT, VOID_NONE = (code("void_suit", x) for x in ("declared", "declared_lenient", "none"))


@njit(cache=True, _nrt=False)
def void_rule(params) -> int:
    """The ``void_suit`` rule (``VOID_DECLARED`` / ``VOID_LENIENT`` / ``VOID_NONE``): the one place compiled
    code reads it, since the engine, the bots and the settlement all depend on it."""
    return params[P_VOID_SUIT]


@njit(cache=True, _nrt=False)
def strict_void(params) -> bool:
    """Whether the declared void suit binds (``void_suit: declared``): its tiles must go first, and it may not be
    punged or konged (docs/spec.md §2)."""
    return void_rule(params) == VOID_DECLARED


@njit(cache=True, _nrt=False)
def tiles_left(g) -> int:
    return g[G_TAIL] - g[G_HEAD]


@njit(cache=True, inline="always")  # twice a decision of the expert per winner: no call
def held_face_up(conc_q, n_melds: int, ps_q) -> int:
    """The kind of the one tile a 血战 winner's concealed counts ``conc_q`` hold that the table has seen face up
    already, or −1. That is the tile of a discard or robbed-kong win, held by its first (or only) winner: 14 tiles,
    counting 3 per meld; a 一炮多响 partner's 13 lack it (the physical tile went to the first winner). A
    self-draw's tile is seen only when the hand is laid down. ``ps_q``: the seat's row of ``ps``. The one rule
    behind the expert's count of laid-down hands (``bots.laid_down``) and ``Observation.laid_down``."""
    if ps_q[PS_WIN_KIND] == WK_SELF_DRAW:
        return -1
    n = 3 * n_melds
    for k in range(N_KINDS):
        n += conc_q[k]
    if n < 14:
        return -1
    for k in range(N_KINDS):
        if (ps_q[PS_WON_KINDS] >> k) & 1:
            return k
    return -1


class HandState(NamedTuple):
    """One hand's mutable state, allocated once per batch (or per :class:`simulator.hands.game.Hand`) and reset per hand
    (``engine.alloc``; shapes and dtypes in the module docstring). Compiled code takes it whole as ``st`` and reads
    fields by name. ``rngs: uint64[5]`` (the wall's stream, then one per seat), ``pc: int64[PC_N]`` (where a paused
    hand resumes), ``dealt: uint8[4, 27]`` (the deal before 换三张), and two scratch buffers of the turn loop:
    ``winners: int64[4]`` (the seats winning on a tile) and ``sh_buf: int64[27]`` (the bots' shanten per discard)."""

    wall: np.ndarray
    conc: np.ndarray
    mk: np.ndarray
    mt: np.ndarray
    nm: np.ndarray
    g: np.ndarray
    ps: np.ndarray
    score: np.ndarray
    kl: np.ndarray
    wins: np.ndarray
    wconc: np.ndarray
    wmk: np.ndarray
    wmt: np.ndarray
    visible: np.ndarray
    events: np.ndarray
    rngs: np.ndarray
    pc: np.ndarray
    dealt: np.ndarray
    winners: np.ndarray
    sh_buf: np.ndarray


class Game(NamedTuple):
    """What a hand is played under, built once per batch: the suit table (``uint8[5**9, 32]``, simulator.kernel.tables),
    the rule parameters (``int64[N_PARAMS]``, ``RuleSet.to_arrays``), the bot id of each seat (``int64[4]``, set per
    hand) and the step interface ``io: int64[IO_N]`` (which seats are external, the decision point, the answers)."""

    table: np.ndarray
    params: np.ndarray
    bots: np.ndarray
    io: np.ndarray


class BatchOut(NamedTuple):
    """The outputs a batch of n hands is played into (``engine.play``, :class:`Batch`): ``h int64[n, H_N]``,
    ``p int64[4n, PL_N]``, ``dealt uint8[4n, 27]``, the win rows ``w int64[rows, W_N]`` with ``w_hand int64[rows]``
    (row of the hand) and the winning hands ``wconc uint8[rows, 27]``, ``wmk, wmt int8[rows, 4]``, and ``events
    int32[cap, 1 + EV_W]`` (column 0 = row of the hand; one row when not recording)."""

    h: np.ndarray
    p: np.ndarray
    dealt: np.ndarray
    w: np.ndarray
    w_hand: np.ndarray
    wconc: np.ndarray
    wmk: np.ndarray
    wmt: np.ndarray
    events: np.ndarray


@dataclass(eq=False)
class BatchResult:
    """What a batch of ``n`` hands returns (:func:`simulator.hands.run_batch`, the step path
    :func:`simulator.hands.game.play_hands`, :func:`simulator.hands.sessions.run_sessions`): the engine's integer
    outputs before any formatting (:mod:`simulator.logs.records` turns them into the log columns). Slots of each row:
    ``state.H_*``, ``PL_*``, ``W_*``.

    - ``hand_ids, deal_ids, rotations``: ``int64[n]`` (hand id = 4·deal id + rotation under duplicate seating);
    - ``h: int64[n, H_N]`` per hand; ``p: int64[4n, PL_N]`` per player (row 4i + seat); ``dealt: uint8[4n, 27]`` the
      deals before 换三张;
    - ``w: int64[m, W_N]`` the wins, ``w_hand: int64[m]`` the row of each win's hand, ``wconc: uint8[m, 27]``,
      ``wmk, wmt: int8[m, 4]`` the winning hands;
    - ``events: int32[e, 1 + EV_W]`` (column 0 = hand row; no rows when not recording);
    - ``bot_labels``: the bot names by logged id when Python bots played (else ``None``: ``vocab.BOT_LABELS``);
    - under sessions: ``session_id, hand_in_session: int64[n]`` and ``bankroll: float64[4n]`` (else ``None``).
    """

    hand_ids: np.ndarray
    deal_ids: np.ndarray
    rotations: np.ndarray
    h: np.ndarray
    p: np.ndarray
    dealt: np.ndarray
    w: np.ndarray
    w_hand: np.ndarray
    wconc: np.ndarray
    wmk: np.ndarray
    wmt: np.ndarray
    events: np.ndarray
    bot_labels: tuple | None = None
    session_id: np.ndarray | None = None
    hand_in_session: np.ndarray | None = None
    bankroll: np.ndarray | None = None

    def arrays(self) -> dict:
        """The fields that are set, by name (``None`` ones left out)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


class Deals(NamedTuple):
    """Per-hand inputs of a batch, ``n`` rows each: ``wall_seeds, bot_seeds uint64[n]`` (engine.deal_seeds),
    ``dealers int64[n]`` (seat 0-3) and ``rotations int64[n]`` (seat s plays bot spec ``(s + rotation) % 4``)."""

    wall_seeds: np.ndarray
    bot_seeds: np.ndarray
    dealers: np.ndarray
    rotations: np.ndarray


class Batch(NamedTuple):
    """What the batch path of ``engine.play`` plays and where it writes: seat ``s`` of hand ``i`` of ``deals``
    (:class:`Deals`) is played by bot spec ``(s + deals.rotations[i]) % 4``, ``bot_ids int64[specs]`` and its
    parameter rows ``bot_par int64[specs, N_BOT_PARAMS]`` (``None`` for a line-up without parameterised bots,
    ``engine.lineup_params``); ``record``: copy each hand's events to ``out.events``; ``out``: :class:`BatchOut`."""

    bot_ids: np.ndarray
    bot_par: np.ndarray | None
    deals: Deals
    record: bool
    out: BatchOut


@intrinsic
def borrowed(typingctx, rec):
    """The same record (a NamedTuple of arrays such as :class:`HandState`, one array, or a tuple of arrays and
    ``None``), its arrays as borrowed views: same data, shape and strides, no owner (a null NRT meminfo).

    numba reference-counts every array a compiled function receives, at its entry and at each exit, and every
    view it takes (``conc[p]``); with an owner that is an atomic operation, without one a null check. The engine
    runs on borrowed views of the state the caller owns (the caller keeps the arrays alive for the whole call):
    measured, the counting took about half of a greedy batch's compiled time (docs/internals.md, "Speed").
    Never return a borrowed view out of the call that borrowed it."""
    def _null(context, builder, ty, value):
        ary = context.make_array(ty)(context, builder, value=value)
        ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
        ary.parent = cgutils.get_null_value(ary.parent.type)
        return ary._getvalue()

    if isinstance(rec, nt.NoneType):
        return rec(rec), lambda context, builder, signature, args: args[0]
    if isinstance(rec, nt.Array):
        def codegen(context, builder, signature, args):
            return _null(context, builder, rec, args[0])
        return rec(rec), codegen
    if not isinstance(rec, nt.BaseTuple) or not all(isinstance(t, (nt.Array, nt.NoneType)) for t in rec.types):
        raise TypingError(f"borrowed: expected arrays, a tuple of arrays or None, got {rec}")

    def codegen(context, builder, signature, args):
        out = args[0]
        for i, ty in enumerate(rec.types):
            if isinstance(ty, nt.Array):
                out = builder.insert_value(out, _null(context, builder, ty, builder.extract_value(out, i)), i)
        return out
    return rec(rec), codegen


@intrinsic
def stack_empty(typingctx, n, dtype):
    """``np.empty(n, dtype)`` on the calling function's stack (``n`` a constant): uninitialised, C-contiguous, no
    owner (a null NRT meminfo), so neither a heap allocation nor reference counting; it lives until the calling
    function returns (alloca'd in its entry block, so one per call even inside a loop). The bots' per-decision
    scratch arrays (issue 30). Never return it, nor keep a view of it, out of that call."""
    if not isinstance(n, nt.IntegerLiteral):
        return None  # numba retries with the literal value of a constant
    if not isinstance(dtype, (nt.NumberClass, nt.DType)):
        raise TypingError(f"stack_empty: expected a numpy scalar type, got {dtype}")
    size = n.literal_value
    arr = nt.Array(getattr(dtype, "instance_type", None) or dtype.dtype, 1, "C")

    def codegen(context, builder, signature, args):
        ety = context.get_data_type(arr.dtype)
        data = cgutils.alloca_once(builder, ety, size=size)
        ary = context.make_array(arr)(context, builder)
        intp = context.get_value_type(nt.intp)
        item = context.get_abi_sizeof(ety)
        context.populate_array(ary, data=data, shape=[intp(size)], strides=[intp(item)], itemsize=intp(item),
                               meminfo=None)
        return ary._getvalue()
    return arr(n, dtype), codegen


@njit(cache=True, inline="always")  # every draw and discard: inlined, so that no call passes the whole state
def log_event(st, typ, seat, tile, amount, a, b) -> None:
    """Append one event when recording (``events`` has more than one row); overflow is flagged, not fatal."""
    if st.events.shape[0] > 1:
        i64 = np.int64  # one signature for every call site (a literal argument would compile a copy per value)
        _append_event(st.events, st.g, i64(typ), i64(seat), i64(tile), i64(amount), i64(a), i64(b))


@njit(cache=True, _nrt=False)
def _append_event(events, g, typ: int, seat: int, tile: int, amount: int, a: int, b: int) -> None:
    i = g[G_NEV]
    if i >= events.shape[0]:
        g[G_EV_OVERFLOW] = 1
        return
    events[i, 0] = typ
    events[i, 1] = seat
    events[i, 2] = tile
    events[i, 3] = amount
    events[i, 4] = a
    events[i, 5] = b
    g[G_NEV] = i + 1


@njit(cache=True, _nrt=False)
def pay(st, payer: int, payee: int, amount: int, comp: int) -> None:
    """Move ``amount`` base units from ``payer`` to ``payee`` under component ``comp`` (zero-sum by design): in
    money units, ``amount × settlement.money_scale`` (``g[G_MONEY_SCALE]``, set by ``settlement.settle_deal``)."""
    scale = st.g[G_MONEY_SCALE]
    pay_units(st, payer, payee, amount * scale if scale > 1 else amount, comp)


@njit(cache=True, _nrt=False)
def pay_units(st, payer: int, payee: int, amount: int, comp: int) -> None:
    """Move ``amount`` money units (not scaled: ``settlement.dealer_compensation``) from ``payer`` to
    ``payee`` under component ``comp``; the score arrays and the ``pay`` events count money units."""
    if amount == 0 or payer == payee:
        return
    score = st.score
    score[payer, comp] -= amount
    score[payee, comp] += amount
    log_event(st, EV_PAY, payer, -1, amount, payee, comp)


@njit(cache=True, _nrt=False)
def next_in(ps, seat) -> int:
    """The next seat in turn order after ``seat`` that has not won (``seat`` itself if all others have)."""
    for i in range(1, N_SEATS + 1):
        q = (seat + i) % N_SEATS
        if ps[q, PS_WON] == 0:
            return q
    return seat


# ---------------------------------------------------------------------------------------------------------
# The step interface: decisions of seats played from Python (simulator.hands.game)
# One array ``io: int64[IO_N]`` carries it (a single argument: CPython passes a call of more than 30 arguments as
# *args, which numba cannot inline). A seat with ``io[IO_EXT + seat] = 1`` is decided outside compiled code. The
# engine runs compiled seats inline and, at a decision of an external seat, takes the next queued answer; when
# none is left it writes the decision point (``DP_*`` slots) and returns, the state as at the decision. The caller
# queues the answer and resumes: the state is rolled back to the start of the step (a copy kept in ``snap``) and
# the step replayed with the same answers, so the compiled seats' choices and the random streams repeat exactly.

# Actions: one integer space for every decision (the Discrete action space of simulator.agents.env)
A_TILE0 = 0        # 0..26: the tile kind to discard, to pass at 换三张 (one pick at a time) or to kong
A_VOID0 = 27       # 27..29: the void suit (characters, dots, bamboo)
A_PASS, A_PUNG, A_KONG, A_WIN = 30, 31, 32, 33
A_DECLARE = 34     # declare ready: 唱歌 or 跳舞, whichever declare_ready the rule set has (唱歌 under both)
A_DANCE = 35       # 跳舞, under declare_ready: both only
N_ACTIONS = 36

# Decision kinds
D_EXCHANGE, D_VOID, D_DISCARD, D_CLAIM, D_SELF_KONG, D_TAKE_WIN, D_DECLARE = range(7)
DECISIONS = ("exchange", "void", "discard", "claim", "self_kong", "take_win", "declare")

IO_EXT = 0  # io[0:4]: 1 = the seat is external
# The decision point: status, whose decision, which, the legal actions (bit mask over N_ACTIONS), the tile it is
# about (discard/robbed kong tile for claims and wins, one's own winning tile, −1 otherwise), who gave it (−1 for
# own tiles), the capped fan of the win on offer, and the illegal action received (status ST_ILLEGAL)
DP_STATUS, DP_SEAT, DP_KIND, DP_LEGAL, DP_TILE, DP_FROM, DP_FAN, DP_ACTION = range(4, 12)
ST_RUNNING, ST_PAUSED, ST_ILLEGAL = range(3)
# Answers: how many are queued for the current step, how many the replay has consumed, then the answers
ANS_COUNT, ANS_USED = 12, 13
ANS_N0 = 14
ANS_MAX = 32  # answers within one step: at most 16 (four seats' 换三张 picks and 定缺 in the setup step)
IO_N = ANS_N0 + ANS_MAX

# Where a paused hand resumes pc[...]: stage, the turn loop's variables at the start of the paused step, steps
# played, and whether it is paused (the state then shows the decision's moment, for the observation; resuming
# first rolls it back to the snapshot taken at the start of the step)
PC_STAGE, PC_CUR, PC_OUTCOME, PC_DREW, PC_FROM_TAIL, PC_DEALER_FIRST, PC_STEPS, PC_PAUSED = range(8)
PC_N = 8
STAGE_SETUP, STAGE_TURNS, STAGE_DONE = range(3)


@njit(cache=True, _nrt=False)  # only external seats' decisions: an ordinary call
def ask(io, seat: int, kind: int, legal: int, tile: int, frm: int, fan: int) -> int:
    """The external seat's answer to this decision, or −1 with the decision point set (paused: no answer queued
    yet; illegal: the answer is not in ``legal``). Legality is checked here, before anything is changed."""
    used = io[ANS_USED]
    io[DP_SEAT] = seat
    io[DP_KIND] = kind
    io[DP_LEGAL] = legal
    io[DP_TILE] = tile
    io[DP_FROM] = frm
    io[DP_FAN] = fan
    if used >= io[ANS_COUNT]:
        io[DP_STATUS] = ST_PAUSED
        return -1
    a = io[ANS_N0 + used]
    io[ANS_USED] = used + 1
    if a < 0 or a >= N_ACTIONS or not (legal >> a) & 1:
        io[DP_STATUS] = ST_ILLEGAL
        io[DP_ACTION] = a
        return -1
    return a
