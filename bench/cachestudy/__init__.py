"""The cache-efficiency study: one synthetic agent session, four context strategies.

Modules, one idea each:

* :mod:`.tokens` -- the token counter applied to the rendered text of each request message;
* :mod:`.transcript` -- the deterministic, seeded 300-turn tool-using session with planted facts
  and lifecycle reminders;
* :mod:`.accounting` -- prefix-cache reuse, cache-priced billing and the per-strategy metrics
  (the reminders' own tokens and share of the bill included);
* :mod:`.render` -- turning a strategy's messages into the provider request whose messages are
  counted (OpenAI Chat Completions wire shape, through the library's adapter);
* :mod:`.summaries` -- the extractive digest of the local strategies, and the pointer check;
* :mod:`.strategy` -- what a strategy provides, and how every strategy shows a reminder;
* :mod:`.real_library` -- this library's strategy on its real pieces (CoopContext,
  CompactingConversation, Lifecycle, whose sent reminders are history), one strategy per resend
  policy, and the same pipeline with reminders edited in place;
* :mod:`.binding` -- which requests break the reasoning a provider binds to its prefix (rejected
  on Anthropic, reasoning dropped on OpenAI, no prefix check on Gemini);
* :mod:`.baselines` -- sliding window, summarize-and-replace, and a local in-place strategy;
* :mod:`.checkpoints`, :mod:`.library` -- the library's policy modelled locally (a cross-check,
  and the fallback when the library's coop/areas/lifecycle packages are missing);
* :mod:`.study` -- runs every strategy on the same session, sweeps the knobs, gathers results;
* :mod:`.machine` -- the machine description written with every result.

``bench/cache.py`` is the command-line entry point; ``tests/test_cache_study.py`` checks the
generator and the accounting.
"""
