"""xuezhan analysis: reads the Parquet logs (never the engine) and computes frequencies, EV, risk, comparisons."""
