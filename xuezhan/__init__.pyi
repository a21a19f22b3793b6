# ruff: noqa: I001  (grouped by topic, not sorted: this is the API's table of contents)
# The public API of ``import xuezhan``, for type checkers and IDEs (PEP 561: this package ships ``py.typed``).
# It is also the one list of names: xuezhan/__init__.py reads these imports at run time and imports each
# module on first use, so ``import xuezhan`` stays cheap. Add a name here and it is public, typed and lazy.
from simulator import __version__ as __version__

# rules and scoring
from simulator.rules import BotSpec as BotSpec, RuleSet as RuleSet, load_rules as load_rules
from simulator.hands.score import score_hand as score_hand
from simulator.errors import UserError as UserError

# simulation
from simulator.hands.warmup import play_hands as play_hands
from simulator.run.runner import RunSpec as RunSpec, Variant as Variant, run_variants as run_variants
from simulator.run.runner import simulate as simulate
from simulator.run.study import StudyFile as StudyFile, StudyResult as StudyResult
from simulator.run.study import load_study as load_study, simulate_study as simulate_study
from xuezhan.studies import run_study as run_study
from simulator.run.design import design as design, DesignResult as DesignResult
from simulator.run.design_file import load_design as load_design
from simulator.replay import record_hand as record_hand, record_logged_hand as record_logged_hand

# bots written in Python (docs/bots.md)
from simulator.agents import Bot as Bot, GreedyBot as GreedyBot, Observation as Observation, RandomBot as RandomBot
from simulator.agents import PASS as PASS  # the action "pass" (no claim, no win)
from simulator.search import SearchBot as SearchBot  # the search player (seated by name as `search`)
from simulator.agents import DANCE as DANCE, DECLARE as DECLARE, KONG as KONG, PUNG as PUNG, WIN as WIN  # actions

# reinforcement learning (the rl extra: pip install 'xuezhan[rl]')
from simulator.agents.env import XuezhanEnv as XuezhanEnv
from simulator.agents.gym import XuezhanGymEnv as XuezhanGymEnv

# analysis (reads the logs only)
from analysis.load import Run as Run, open_run as open_run
from analysis.fans import fan_distribution as fan_distribution, flag_frequencies as flag_frequencies
from analysis.fans import hand_type_frequencies as hand_type_frequencies
from analysis.ev import By as By, expected_value as expected_value
from analysis.risk import risk_table as risk_table, session_risk_table as session_risk_table
from analysis.shape import game_shape as game_shape
from analysis.compare import paired_comparison as paired_comparison, paired_hand_metrics as paired_hand_metrics
from analysis.economy import economy_table as economy_table
from analysis.diagnostics import diagnose as diagnose
from analysis.report import write_report as write_report

# the analysis modules themselves, for everything else they hold (xuezhan.plots.ev_errorbars, ...)
from analysis import compare as compare, diagnostics as diagnostics, economy as economy, ev as ev, fans as fans
from analysis import plots as plots, report as report, risk as risk, sessions as sessions, shape as shape
from analysis import stats as stats
from analysis import cells as cells, family as family, populations as populations, screen as screen

__all__: list[str]
API: dict[str, str]
