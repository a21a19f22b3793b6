"""Fans and points (docs/spec.md §4, §8): compiled arithmetic on pattern flags.

Works on the ``int64`` flag bit set of :data:`simulator.rules.FLAGS`, the 根 count and the ``int64[N_PARAMS]``
rule vector; it is called by :func:`simulator.kernel.evaluate.evaluate_win` for each candidate split. Money in compiled
code is in **base units**; :func:`simulator.hands.score.score_hand` (the Python boundary: one win as a user writes it)
multiplies by ``scoring.base`` to give score units, as ``xuezhan score`` prints them.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from simulator.rules import vocab as R
from simulator.rules.keys import P_FLAG_FAN, P_TABLE_FAN, SLOT, code

P_SCORING_MODE, P_LONG_USES_GEN, P_POINTS = SLOT["scoring.mode"], SLOT["scoring.long_uses_gen"], SLOT["scoring.points"]
P_FAN_OFFSET, P_CAP, P_GEN_FAN = SLOT["scoring.fan_offset"], SLOT["scoring.cap"], SLOT["scoring.extras.gen"]
P_SELF_DRAW_BONUS = SLOT["scoring.self_draw_bonus"]
NO_CAP = code("scoring.cap", None)

# ---- flag and hand-type constants (module globals are compile-time constants for numba) ------------------
F_PINGHU = 1 << R.FLAG_BIT["pinghu"]
F_DUIDUIHU = 1 << R.FLAG_BIT["duiduihu"]
F_QINGYISE = 1 << R.FLAG_BIT["qingyise"]
F_QIDUI = 1 << R.FLAG_BIT["qidui"]
F_LONGQIDUI = 1 << R.FLAG_BIT["longqidui"]
F_DAIYAOJIU = 1 << R.FLAG_BIT["daiyaojiu"]
F_JIANGDUI = 1 << R.FLAG_BIT["jiangdui"]
F_JINGOU = 1 << R.FLAG_BIT["jingou"]
F_SHIBALUOHAN = 1 << R.FLAG_BIT["shibaluohan"]
F_MENQING = 1 << R.FLAG_BIT["menqing"]
F_ZHONGZHANG = 1 << R.FLAG_BIT["zhongzhang"]
F_TIANHU = 1 << R.FLAG_BIT["tianhu"]
F_DIHU = 1 << R.FLAG_BIT["dihu"]
F_GANGSHANGHUA = 1 << R.FLAG_BIT["gangshanghua"]
F_GANGSHANGPAO = 1 << R.FLAG_BIT["gangshangpao"]
F_QIANGGANGHU = 1 << R.FLAG_BIT["qiangganghu"]
F_HAIDILAOYUE = 1 << R.FLAG_BIT["haidilaoyue"]
F_HAIDIPAO = 1 << R.FLAG_BIT["haidipao"]
F_ZIMO = 1 << R.FLAG_BIT["zimo"]
F_SING = 1 << R.FLAG_BIT["sing"]
F_DANCE = 1 << R.FLAG_BIT["dance"]
N_FLAGS = len(R.FLAGS)
EXTRA_FLAG_MASK = sum(1 << R.FLAG_BIT[f] for f in R.EXTRA_FLAGS)  # fans counted in table mode too
ALL_FLAG_MASK = (1 << N_FLAGS) - 1

_H = R.HAND_TYPE_INDEX
HT_TIANHU, HT_DIHU, HT_PINGHU = _H["tianhu"], _H["dihu"], _H["pinghu"]
HT_QINGSHIBALUOHAN, HT_SHIBALUOHAN = _H["qingshibaluohan"], _H["shibaluohan"]
HT_QINGLONGQIDUI, HT_QINGJINGOU, HT_QINGQIDUI = _H["qinglongqidui"], _H["qingjingou"], _H["qingqidui"]
HT_QINGYAOJIU, HT_QINGDUI, HT_JIANGQIDUI = _H["qingyaojiu"], _H["qingdui"], _H["jiangqidui"]
HT_LONGQIDUI, HT_JIANGDUI, HT_JINGOU, HT_QIDUI = _H["longqidui"], _H["jiangdui"], _H["jingou"], _H["qidui"]
HT_DAIYAOJIU, HT_QINGYISE, HT_DUIDUIHU = _H["daiyaojiu"], _H["qingyise"], _H["duiduihu"]
N_HAND_TYPES = len(R.HAND_TYPES)
FIRST_LABEL = HT_TIANHU + 2  # LABEL_ORDER starts after tianhu, dihu in HAND_TYPES
assert R.HAND_TYPES[FIRST_LABEL:] == R.LABEL_ORDER

SCORING_TABLE = code("scoring.mode", "table")
POINTS_LINEAR = code("scoring.points", "linear")
BONUS_ADD_BASE = code("scoring.self_draw_bonus", "add_base")
BONUS_ADD_FAN = code("scoring.self_draw_bonus", "add_fan")
MAX_EXPONENT = 62  # 2^62 base units: beyond that an uncapped hand saturates instead of overflowing int64


@njit(cache=True, _nrt=False)
def _has(flags, f):
    return (flags & f) == f


@njit(cache=True, _nrt=False)
def hand_type_mask(flags, jiang):
    """Bit set over ``HAND_TYPES`` of the hand types (incl. composites) a hand with these flags matches.

    ``jiang``: every tile has rank 2, 5 or 8 (needed for 将七对, which has no flag of its own).
    """
    qing = _has(flags, F_QINGYISE)
    m = 1 << HT_PINGHU
    pairs = (
        (F_TIANHU, HT_TIANHU), (F_DIHU, HT_DIHU), (F_SHIBALUOHAN, HT_SHIBALUOHAN), (F_LONGQIDUI, HT_LONGQIDUI),
        (F_JIANGDUI, HT_JIANGDUI), (F_JINGOU, HT_JINGOU), (F_QIDUI, HT_QIDUI), (F_DAIYAOJIU, HT_DAIYAOJIU),
        (F_QINGYISE, HT_QINGYISE), (F_DUIDUIHU, HT_DUIDUIHU),
    )
    for f, ht in pairs:
        if _has(flags, f):
            m |= 1 << ht
    if qing:  # 清 composites: qingyise plus the shape
        composites = (
            (F_SHIBALUOHAN, HT_QINGSHIBALUOHAN), (F_LONGQIDUI, HT_QINGLONGQIDUI), (F_JINGOU, HT_QINGJINGOU),
            (F_QIDUI, HT_QINGQIDUI), (F_DAIYAOJIU, HT_QINGYAOJIU), (F_DUIDUIHU, HT_QINGDUI),
        )
        for f, ht in composites:
            if _has(flags, f):
                m |= 1 << ht
    if jiang and _has(flags, F_QIDUI):
        m |= 1 << HT_JIANGQIDUI
    return m


@njit(cache=True, _nrt=False)
def flag_fan(flags, params, allowed):
    """Sum of ``params[P_FLAG_FAN + bit]`` over the set flags within ``allowed``."""
    fan = 0
    f = flags & allowed
    b = 0
    while f:  # the set bits only, lowest first
        if f & 1:
            fan += params[P_FLAG_FAN + b]
        f >>= 1
        b += 1
    return fan


@njit(cache=True, _nrt=False)
def table_entry(mask, params):
    """Table mode: the matched, listed hand type with most fan (ties: earlier in HAND_TYPES), or −1."""
    best = -1
    best_fan = -1
    m = mask
    t = 0
    while m:  # the matched types only, in HAND_TYPES order
        if m & 1:
            fan = params[P_TABLE_FAN + t]
            if fan > best_fan:  # fan −1 = not listed, never beats best_fan ≥ −1
                best = t
                best_fan = fan
        m >>= 1
        t += 1
    return best


@njit(cache=True, _nrt=False)
def additive_label(mask):
    """Additive mode: the first hand type of LABEL_ORDER that the hand matches."""
    for t in range(FIRST_LABEL, N_HAND_TYPES):
        if (mask >> t) & 1:
            return t
    return HT_PINGHU


@njit(cache=True, _nrt=False)
def cap_fan(fan, params):
    """Apply the 封顶 (``P_CAP``, −1 = uncapped)."""
    cap = params[P_CAP]
    if cap != NO_CAP and fan > cap:
        return cap
    return fan


@njit(cache=True, _nrt=False)
def points_of(capped, params):
    """Points per payer in base units for a capped fan, before any self-draw add_base bonus.

    exponential: 2^(capped − fan_offset), the exponent clamped to [0, 62]; linear: capped.
    """
    if params[P_POINTS] == POINTS_LINEAR:
        return capped
    e = capped - params[P_FAN_OFFSET]
    if e < 0:
        e = 0
    if e > MAX_EXPONENT:
        e = MAX_EXPONENT
    return np.int64(1) << e


@njit(cache=True, _nrt=False)
def score_flags(flags, jiang, gen, self_draw, params):
    """Fan and points of one split: ``(fan, capped_fan, gen_after, hand_type, points)``, all int64.

    ``gen`` is the 根 count before long_uses_gen; ``self_draw`` applies the self-draw bonus; points in base units.
    """
    mask = hand_type_mask(flags, jiang)
    g = gen
    if params[P_SCORING_MODE] == SCORING_TABLE:
        ht = table_entry(mask, params)
        base_fan = 0
        if ht < 0:  # the validator requires a pinghu entry; unlisted => worth 0 as pinghu
            ht = HT_PINGHU
        else:
            base_fan = params[P_TABLE_FAN + ht]
        long_paid = ht in (HT_LONGQIDUI, HT_QINGLONGQIDUI)
        allowed = EXTRA_FLAG_MASK
    else:
        ht = additive_label(mask)
        base_fan = 0
        long_paid = _has(flags, F_LONGQIDUI)
        allowed = ALL_FLAG_MASK
    if params[P_LONG_USES_GEN] and long_paid and g > 0:
        g -= 1  # the four-of-a-kind that makes it 龙 is not a 根 as well
    fan = base_fan + flag_fan(flags, params, allowed) + g * params[P_GEN_FAN]
    bonus = params[P_SELF_DRAW_BONUS]
    if self_draw and bonus == BONUS_ADD_FAN:
        fan += 1
    capped = cap_fan(fan, params)
    pts = points_of(capped, params)
    if self_draw and bonus == BONUS_ADD_BASE:
        pts += 1
    return np.int64(fan), np.int64(capped), np.int64(g), np.int64(ht), np.int64(pts)
