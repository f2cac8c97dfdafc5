"""Adapters to agent frameworks, each behind its own extra and imported only when used.

* `hydrangea.integrations.pydantic_ai`: a pydantic-ai history processor (extra ``pydantic-ai``).
* `hydrangea.integrations.openai_agents`: an OpenAI Agents SDK ``Session`` backed by a
  hydrangea Context (extra ``openai-agents``).
"""
