"""Rule vocabulary: the identifiers shared by code, logs and reports (pattern flags, hand types, bots, the
enumerations of rule keys) and the slots of :meth:`simulator.rules.RuleSet.to_arrays`, the flat ``int64`` vector the
compiled engine reads (the slot of rule key ``<key>`` is the constant ``P_<KEY>``). Plain tuples and integers: no
pydantic, no numpy. Re-exported by :mod:`simulator.rules`, where callers import them.
"""

from __future__ import annotations

from simulator.rules.bot_table import BOT_INDEX as BOT_INDEX
from simulator.rules.bot_table import BOT_LABELS as BOT_LABELS
from simulator.rules.bot_table import BOT_MILLI as BOT_MILLI
from simulator.rules.bot_table import BOTS as BOTS
from simulator.rules.bot_table import N_BOT_PARAMS as N_BOT_PARAMS
from simulator.rules.bot_table import PYTHON_BOT as PYTHON_BOT

# ---------------------------------------------------------------------------------------------------------
# Identifiers shared by code, logs and reports (docs/spec.md §3). The order of FLAGS is the bit order of the
# pattern mask returned by the evaluator and the column order of the logs.
SHAPE_PATTERNS = ("pinghu", "duiduihu", "qingyise", "qidui", "longqidui", "daiyaojiu", "jiangdui", "jingou",
                  "shibaluohan")
EXTRA_FLAGS = ("menqing", "zhongzhang", "tianhu", "dihu", "gangshanghua", "gangshangpao", "qiangganghu",
               "haidilaoyue", "haidipao", "zimo", "sing", "dance")
FLAGS = SHAPE_PATTERNS + EXTRA_FLAGS
FLAG_BIT = {name: i for i, name in enumerate(FLAGS)}
EXTRAS = ("gen",) + EXTRA_FLAGS
COMPOSITES = ("qingdui", "qingqidui", "qinglongqidui", "qingyaojiu", "qingjingou", "jiangqidui",
              "qingshibaluohan")
# Additive-mode label priority (docs/spec.md §3); table mode picks the listed entry with most fan, ties going to
# the earlier entry of HAND_TYPES.
LABEL_ORDER = ("qingshibaluohan", "shibaluohan", "qinglongqidui", "qingjingou", "qingqidui", "qingyaojiu",
               "qingdui", "jiangqidui", "longqidui", "jiangdui", "jingou", "qidui", "daiyaojiu", "qingyise",
               "duiduihu", "pinghu")
HAND_TYPES = ("tianhu", "dihu") + LABEL_ORDER
HAND_TYPE_INDEX = {name: i for i, name in enumerate(HAND_TYPES)}

# The compiled bots and the players log's ``bot`` labels come from the bot table (simulator.rules.bot_table).
BOT_ENTRY_POINTS = "xuezhan.bots"  # entry-point group under which packages register Python bots by name

# Slots of RuleSet.to_arrays(): scalars first, then fan per flag, then table fan per hand type.
_SCALARS = ("mode", "exchange_three", "void_suit", "multiple_ron", "rob_kong", "pass_ron_lock",
            "forced_win_last_tiles", "kong_bloom_payer", "scoring_mode", "long_uses_gen", "points",
            "fan_offset", "cap", "base", "self_draw_bonus", "gen_fan", "discard_kong_discarder",
            "discard_kong_others", "added_kong_each", "concealed_kong_each", "added_kong_fresh_only",
            "after_kong_deal_in", "refund_kongs_if_not_ready", "huazhu_penalty", "huazhu_pays", "chadajiao",
            "last_discard_claims", "declare_ready")
(P_MODE, P_EXCHANGE_THREE, P_VOID_SUIT, P_MULTIPLE_RON, P_ROB_KONG, P_PASS_RON_LOCK, P_FORCED_WIN_LAST_TILES,
 P_KONG_BLOOM_PAYER, P_SCORING_MODE, P_LONG_USES_GEN, P_POINTS, P_FAN_OFFSET, P_CAP, P_BASE,
 P_SELF_DRAW_BONUS, P_GEN_FAN, P_DISCARD_KONG_DISCARDER, P_DISCARD_KONG_OTHERS, P_ADDED_KONG_EACH,
 P_CONCEALED_KONG_EACH, P_ADDED_KONG_FRESH_ONLY, P_AFTER_KONG_DEAL_IN, P_REFUND_KONGS_IF_NOT_READY,
 P_HUAZHU_PENALTY, P_HUAZHU_PAYS, P_CHADAJIAO, P_LAST_DISCARD_CLAIMS, P_DECLARE_READY) = range(len(_SCALARS))
P_FLAG_FAN = len(_SCALARS)                 # P_FLAG_FAN + FLAG_BIT[flag]: fan of a flag (additive + extras)
P_TABLE_FAN = P_FLAG_FAN + len(FLAGS)      # P_TABLE_FAN + HAND_TYPE_INDEX[t]: table fan, -1 = not listed
P_KEY_TABLE = P_TABLE_FAN + len(HAND_TYPES)  # then the slots of simulator.rules.keys (its N_PARAMS in all)
NO_CAP = -1            # value of P_CAP when uncapped
HUAZHU_CAP = -1        # value of P_HUAZHU_PENALTY for "cap"
UNCAPPED_HUAZHU_FAN = 6  # docs/spec.md §5: "cap" when uncapped means 2^6 base units

# Enumerations in slot order (the integer stored is the index in the tuple).
MODES = ("xuezhan", "single", "xueliu")
# 血流成河: each win event sets one tile aside for good and every seat keeps at least one tile, so a hand has at
# most 108 − 4 win events (the bound that sizes the engine's win records and the money check of log_bounds)
XUELIU_MAX_WIN_EVENTS = 104
EXCHANGES = ("none", "clockwise", "counterclockwise", "opposite", "random")
VOID_SUITS = ("declared", "declared_lenient", "none")
PASS_LOCKS = ("off", "same_tile", "all_tiles", "higher_fan")
BLOOM_PAYERS = ("self_draw", "feeder")
SCORING_MODES = ("additive", "table")
POINTS = ("exponential", "linear")
SELF_DRAW_BONUSES = ("none", "add_base", "add_fan")
DEAL_INS = ("keep", "refund", "transfer")
HUAZHU_PAYERS = ("unwon", "all")
LAST_DISCARD_CLAIMS = ("win_only", "any")
DECLARES = ("none", "sing", "dance", "both")  # both: a ready player may sing or dance (seed 000 lists both)
# Fan of 唱歌/跳舞 when the rule file does not set scoring.extras.sing/dance (docs/rules.md: no seed gives one).
# Filled into the extras only under declare_ready sing/dance/both, so rule sets without it keep their digests.
DECLARE_FAN = {"sing": 1, "dance": 2}
