"""The project's name lists, declared once: plain tuples and dicts, no numba, no numpy (analysis imports them).

Win kinds (the ``kind``/``win_kind`` log columns and the engine's ``WK_*`` indices, in this order), meld kinds (the
engine's ``MELD_*`` values index :data:`MELD_NAMES`: the spelling of the logs and of ``xuezhan score --meld``;
:data:`MELD_API_NAMES` is the bot API's spelling of the same kinds), and the Chinese and English display names
of hand types, pattern flags and melds. The pattern flags and hand types themselves are rule vocabulary and live
with the rules (:data:`simulator.rules.FLAGS`, :data:`simulator.rules.HAND_TYPES`).
"""

from __future__ import annotations

WIN_KINDS = ("discard", "self_draw", "rob_kong")

# Meld kinds by engine value (shape.MELD_PUNG = 1, MELD_KONG = 2, MELD_CKONG = 3; 0 = no meld)
MELD_NAMES = ("", "pung", "kong", "ckong")
MELD_API_NAMES = ("", "pung", "kong", "concealed_kong")
MELD_ZH = {"pung": "碰", "kong": "明杠", "ckong": "暗杠"}
MELD_EN = {"pung": "pung", "kong": "kong", "ckong": "concealed kong"}

HAND_TYPE_ZH = {
    "tianhu": "天胡", "dihu": "地胡", "qingshibaluohan": "清十八罗汉", "shibaluohan": "十八罗汉",
    "qinglongqidui": "清龙七对", "qingjingou": "清金钩钓", "qingqidui": "清七对", "qingyaojiu": "清幺九",
    "qingdui": "清对", "jiangqidui": "将七对", "longqidui": "龙七对", "jiangdui": "将对", "jingou": "金钩钓",
    "qidui": "七对", "daiyaojiu": "带幺九", "qingyise": "清一色", "duiduihu": "对对胡", "pinghu": "平胡",
}
FLAG_ZH = {
    "pinghu": "平胡", "duiduihu": "对对胡", "qingyise": "清一色", "qidui": "七对", "longqidui": "龙七对",
    "daiyaojiu": "带幺九", "jiangdui": "将对", "jingou": "金钩钓", "shibaluohan": "十八罗汉", "menqing": "门清",
    "zhongzhang": "中张", "tianhu": "天胡", "dihu": "地胡", "gangshanghua": "杠上花", "gangshangpao": "杠上炮",
    "qiangganghu": "抢杠胡", "haidilaoyue": "海底捞月", "haidipao": "海底炮", "zimo": "自摸",
    "sing": "唱歌", "dance": "跳舞",
}
