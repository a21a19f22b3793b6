"""Rule vocabulary: the identifiers shared by code, logs and reports (pattern flags, hand types, bots). The rule
keys, their choices (enum integers) and their slots in :meth:`simulator.rules.RuleSet.to_arrays` are the key
table's (:mod:`simulator.rules.keys`). Plain tuples and integers: no pydantic, no numpy. Re-exported by
:mod:`simulator.rules`, where callers import them.
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

UNCAPPED_HUAZHU_FAN = 6  # docs/spec.md §5: "cap" when uncapped means 2^6 base units
# 血流成河: each win event sets one tile aside for good and every seat keeps at least one tile, so a hand has at
# most 108 − 4 win events (the bound that sizes the engine's win records and the money check of log_bounds)
XUELIU_MAX_WIN_EVENTS = 104
# Fan of 唱歌/跳舞 when the rule file does not set scoring.extras.sing/dance (docs/rules.md: no seed gives one).
# Filled into the extras only under declare_ready sing/dance/both, so rule sets without it keep their digests.
DECLARE_FAN = {"sing": 1, "dance": 2}
