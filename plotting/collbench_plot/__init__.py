"""collbench_plot: plots from collbench result files (JSONL, schema collbench.result/1).

Reads the records `collbench run` / `sweep` write (never console text) and the weak-scaling
report JSON of `collbench report weak-scaling`, and writes PNG and SVG with matplotlib's Agg
backend, so it runs on machines without a display. See plotting/README.md.
"""

__version__ = "0.1.0"

from .records import (
    SCHEMA,
    WEAK_SCALING_SCHEMA,
    CollbenchPlotWarning,
    InputError,
    ResultFile,
    SchemaError,
    read_jsonl,
    read_many,
)

__all__ = [
    "SCHEMA",
    "WEAK_SCALING_SCHEMA",
    "CollbenchPlotWarning",
    "InputError",
    "ResultFile",
    "SchemaError",
    "read_jsonl",
    "read_many",
]
