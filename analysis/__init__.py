"""xuezhan analysis: reads the Parquet logs (never the engine) and computes frequencies, EV, risk, comparisons.

Modules (each function takes a run directory or an opened :class:`analysis.load.Run` and returns a polars
DataFrame; money in base units; every estimate with its ``n`` and an SE or 95% interval; the independent unit
is the hand, the wall under duplicate seating, or the session in a run with sessions — ``Run.cluster``,
counted in ``n_units``):

- :mod:`analysis.load` — ``open_run(dir) -> Run``: variants, manifests, lazy scans of ``hands/players/wins``.
- :mod:`analysis.stats` — the statistical building blocks in one namespace: :mod:`analysis.inference` (Wilson,
  p-values, Holm/BH, sample sizes under the alternative), :mod:`analysis.clustered` (clustered means and shares,
  effective-n Wilson), :mod:`analysis.bootstrap` (tail statistics with a cluster bootstrap, sessions);
  :mod:`analysis.rare` — intervals on few differing units (Student,
  gamma); :mod:`analysis.power` — hands needed as the power of the test actually run.
- :mod:`analysis.fans` — hand-type / flag frequencies per win and per hand, fan / capped fan / 根.
- :mod:`analysis.ev` — mean score per hand by seat, bot or dealer position, split by score component.
- :mod:`analysis.risk` — SD, quantiles, P(loss > x), CVaR, per hand and per session of K hands.
- :mod:`analysis.shape` — 流局, winners, turns, 花猪, 查大叫, kongs, deal-ins, cap binding, declined wins.
- :mod:`analysis.compare` — paired (common random numbers) comparison of a variant with the baseline;
  :mod:`analysis.family` — one Holm family per comparison (report and ``xuezhan compare``), stable ids;
  :mod:`analysis.play` — paired hands whose play (not payments) differs; :mod:`analysis.sweep` — ordered sweeps.
- :mod:`analysis.economy` — platform coins from room factor and rake.
- :mod:`analysis.sessions` — runs with sessions: per-session results, P(ruin), house take, dealer-rule effect.
- :mod:`analysis.plots` — matplotlib figures of those tables; :mod:`analysis.report` — HTML + Markdown report
  and CSV tables (writes the files), its sections from :mod:`analysis.report_build`, rendered by
  :mod:`analysis.report_render`, its first screen from :mod:`analysis.summary`;
  :mod:`analysis.fmt` — cell formatting shared by all.
"""
