"""Pieces of ``bench/report.py``: formatting helpers and one module per group of sections."""
