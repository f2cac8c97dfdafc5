"""A description of the machine a benchmark ran on (cores, CPU model, Python)."""

from __future__ import annotations

import os
import platform
from pathlib import Path

__all__ = ["machine"]


def _cpu_model() -> str:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return platform.processor() or "unknown"
    for line in text.splitlines():
        if line.lower().startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def machine() -> dict[str, str | int]:
    """Cores, CPU model (from /proc/cpuinfo), Python version and platform."""
    return {
        "cores": os.cpu_count() or 0,
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(terse=True),
    }
