"""Ready-made Context Areas that join as-of assembly (:mod:`hydrangea.asof`) and cooperative
scheduling (:mod:`hydrangea.coop`).

* :class:`OneShotNoticeArea`: one message, once; retires and promotes nothing.
* :class:`AsOfArea`: the fenced, budgeted messages of a ``BuiltContext`` for one turn.
* :class:`ConversationArea`: the user turns and routed model replies, as one retained range.
* :class:`CompactionArea`: a conversation segment that, at a size checkpoint, retires and
  promotes a structured summary whose pointers lead to the full records;
  :class:`CompactingConversation` chains such segments over a CoopContext; with
  ``rollup_tokens`` it carries its summaries in a :class:`SummaryRegionArea` and merges them into
  one at a rollup (see :mod:`hydrangea.areas.rollup`).
* :class:`ToolLoopArea`: exclusive while the model keeps calling tools, yields when it answers;
  its tools are typed functions (:mod:`hydrangea.tools`), sync or async.
* :class:`RecallTool` and :func:`recall_tool`: a tool with which the model reads the record
  behind a summary pointer (see :mod:`hydrangea.areas.recall`).
"""

from hydrangea.areas.asof_area import AsOfArea
from hydrangea.areas.compacting import (
    CompactingConversation,
    CompactionMode,
    ProviderCompaction,
)
from hydrangea.areas.compaction import CompactionArea
from hydrangea.areas.conversation import ConversationArea, message_record_text
from hydrangea.areas.errors import AreaUsageError, ToolError
from hydrangea.areas.notice import OneShotNoticeArea
from hydrangea.areas.recall import (
    RECALL_TOOL_NAME,
    TOOL_OUTPUT_PREFIX,
    HeadlineSummarizer,
    RecallTool,
    latest_tool_output,
    recall_tool,
    tool_output_id,
)
from hydrangea.areas.rollup import CarriedSummary, SummaryRegionArea
from hydrangea.areas.tool_loop import RawTool, Tool, ToolLoopArea, ToolRun

__all__ = [
    "RECALL_TOOL_NAME",
    "TOOL_OUTPUT_PREFIX",
    "AreaUsageError",
    "AsOfArea",
    "CarriedSummary",
    "CompactingConversation",
    "CompactionArea",
    "CompactionMode",
    "ConversationArea",
    "HeadlineSummarizer",
    "OneShotNoticeArea",
    "ProviderCompaction",
    "RawTool",
    "RecallTool",
    "SummaryRegionArea",
    "Tool",
    "ToolError",
    "ToolLoopArea",
    "ToolRun",
    "latest_tool_output",
    "message_record_text",
    "recall_tool",
    "tool_output_id",
]
