"""Reading collbench result files (JSONL, docs/interfaces.md section 3).

Each file: a run header line (``"kind": "run_header"``), then one line per case
(``"kind": "case"``), every line one complete JSON object carrying ``"schema"``.
This reader accepts only ``collbench.result/1``: another version is refused with a message
saying which versions it reads, so a plot never silently misreads a changed record.
A truncated last line (a run killed while writing) is skipped with a warning naming the
file and line; a bad line anywhere else is an error.
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable

SCHEMA = "collbench.result/1"
SCHEMA_FAMILY = "collbench.result/"
WEAK_SCALING_SCHEMA = "collbench.weak_scaling/1"


class InputError(Exception):
    """Bad input file (the CLI exits with code 2, as collbench does)."""


class SchemaError(InputError):
    """A record of another schema version than this reader understands."""


class CollbenchPlotWarning(UserWarning):
    """Something was skipped but plotting could go on."""


@dataclass
class ResultFile:
    path: str
    header: dict[str, Any] | None = None
    cases: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        """Short name for legends: the run id when there is one, else the file name."""
        if self.header and self.header.get("run_id"):
            return str(self.header["run_id"])
        return os.path.basename(self.path)


def _warn(result: ResultFile, message: str) -> None:
    result.warnings.append(message)
    warnings.warn(message, CollbenchPlotWarning, stacklevel=3)


def check_schema(obj: dict[str, Any], where: str) -> None:
    schema = obj.get("schema")
    if schema is None:
        raise SchemaError(f"{where}: no 'schema' key; expected \"schema\": \"{SCHEMA}\"")
    if schema == SCHEMA:
        return
    if isinstance(schema, str) and schema.startswith(SCHEMA_FAMILY):
        raise SchemaError(
            f"{where}: record schema '{schema}' is not supported: this collbench_plot reads "
            f"'{SCHEMA}' only; use the plotting/ package of the collbench version that wrote the file"
        )
    raise SchemaError(f"{where}: unknown schema {schema!r}; expected '{SCHEMA}' (is this a collbench result file?)")


def read_jsonl(path: str | os.PathLike[str]) -> ResultFile:
    """Reads one result file; raises InputError / SchemaError on bad content."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not a text file ({e})") from e

    result = ResultFile(path=path)
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    if not numbered:
        raise InputError(f"{path}: empty file; expected a run header line and case lines")
    last_line_no = numbered[-1][0]
    for line_no, line in numbered:
        where = f"{path}:{line_no}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            if line_no == last_line_no:
                _warn(result, f"{where}: truncated last line skipped ({e.msg} at column {e.colno})")
                continue
            raise InputError(f"{where}: not valid JSON ({e.msg} at column {e.colno})") from e
        if not isinstance(obj, dict):
            raise InputError(f"{where}: expected a JSON object, got {type(obj).__name__}")
        check_schema(obj, where)
        kind = obj.get("kind")
        if kind == "run_header":
            if result.header is not None:
                raise InputError(f"{where}: a second run header (one run per file)")
            if result.cases:
                _warn(result, f"{where}: the run header comes after case lines")
            result.header = obj
        elif kind == "case":
            if result.header is None and not result.cases:
                _warn(result, f"{where}: no run header before the first case")
            obj.setdefault("_source", result.label)
            obj["_path"] = path
            obj["_line"] = line_no
            result.cases.append(obj)
        else:
            _warn(result, f"{where}: unknown record kind {kind!r} skipped (expected 'run_header' or 'case')")
    if result.header is not None:
        for case in result.cases:
            case["_source"] = result.label
    return result


def read_many(paths: Iterable[str | os.PathLike[str]]) -> list[ResultFile]:
    files = [read_jsonl(p) for p in paths]
    # Two files with the same run id (a resumed run split in two) keep apart in legends.
    labels = [f.label for f in files]
    if len(set(labels)) != len(labels):
        for f in files:
            for case in f.cases:
                case["_source"] = os.path.basename(f.path)
    return files


def all_cases(files: Iterable[ResultFile]) -> list[dict[str, Any]]:
    return [c for f in files for c in f.cases]


def get(obj: Any, *keys: str, default: Any = None) -> Any:
    """Nested lookup that tolerates nulls: get(case, "model", "bound_busbw_gbps")."""
    for k in keys:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(k)
        if obj is None:
            return default
    return obj


def number(value: Any) -> float | None:
    """A finite float, or None (null, missing, strings, NaN/inf)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    v = float(value)
    if v != v or v in (float("inf"), float("-inf")):
        return None
    return v


def read_json_file(path: str) -> Any:
    """One JSON document (a report), or InputError naming the file (and line and column)."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from e
    except json.JSONDecodeError as e:
        raise InputError(f"{path}:{e.lineno}:{e.colno}: not valid JSON ({e.msg})") from e
