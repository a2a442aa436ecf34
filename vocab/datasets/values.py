"""A field's value as text, the one way every importer, the blind sheet and the Label Studio export read it."""

from __future__ import annotations

import json
import math
from typing import Any


def as_text(value: Any) -> str:
    """Text as it is; nothing (None, NaN) as ""; anything else (a number, a list, an object) as its JSON."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
