"""Claude Code's own JSON files, read leniently: claude-print only looks at them."""

from __future__ import annotations

import json
from typing import Any, Dict, Optional


def read_object(path: str) -> Optional[Dict[str, Any]]:
    """The file's JSON object; None when it is missing, unreadable or not an object."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
