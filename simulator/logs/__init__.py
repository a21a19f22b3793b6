"""The logs: the columns (``schema``), a batch's rows (``records``) and their Parquet encoding (``encode``),
the run directory's layout, manifests, locks and checks (``layout``, ``manifest``, ``dirlock``,
``rundir``). ``schema``, ``layout``, ``manifest`` and ``rundir`` are numba-free: analysis reads them."""
