"""CSV files a spreadsheet opens safely: formula-like cells escaped, any text written.

    write_csv(frame, "configs.csv")   # cells that start like a formula get a leading '
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

__all__ = ["csv_safe", "write_csv"]
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs such a cell as a formula


def _cell(value: Any) -> Any:
    return "'" + value if isinstance(value, str) and value.startswith(_FORMULA_START) else value


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy whose text cells (and headers) starting with ``= + - @`` (tab, CR) get a leading ``'``."""
    out = frame.copy()
    for column in out.columns:
        if not (pd.api.types.is_numeric_dtype(out[column]) or pd.api.types.is_bool_dtype(out[column])):
            out[column] = out[column].map(_cell)
    out.columns = [_cell(c) for c in out.columns]
    return out


def write_csv(frame: pd.DataFrame, path: Path | str) -> None:
    """CSV with formula-like cells escaped; text a UTF-8 file cannot hold (lone surrogates) as ``\\udxxx``."""
    csv_safe(frame).to_csv(path, index=False, errors="backslashreplace")
