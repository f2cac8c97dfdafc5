"""The demo agent session behind ``python -m hydrangea demo``.

An offline session driven by a deterministic scripted model (no network, no key) that shows the
library's guarantees at work: areas registering and retiring, a retrieved document with a
prompt-injection attempt arriving fenced as untrusted data, a document published after ``as_of``
refused, a compaction checkpoint with its summary and pointers, lifecycle reminders appearing and
expiring, and for every request its size and the share a provider's prefix cache could reuse.
With ``--live`` the same session runs against the provider through its official SDK.

The pieces live in submodules: :mod:`hydrangea.demo.session` (``run_session``),
:mod:`hydrangea.demo.scripted` (the scripted model), :mod:`hydrangea.demo.report` (the facts and
their JSON), :mod:`hydrangea.demo.display` (the rich view) and :mod:`hydrangea.demo.live`.
"""
