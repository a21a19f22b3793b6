"""Runs: variants in chunks over worker processes (``runner``, ``open``, ``worker``, ``progress``, ``plan``,
``pool_watch``), studies (``study``), tuning (``tune``, ``tuned``), designs (``design*``) and
``verify``."""
