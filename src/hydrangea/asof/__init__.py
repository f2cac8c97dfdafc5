"""As-of context assembly: nothing published after ``as_of`` may enter.

Outside text is untrusted by type and fenced; a token budget is honoured by compacting the least
important untrusted items into structured summaries whose pointers lead back to full records.
"""

from hydrangea.asof.builder import ContextBuilder
from hydrangea.asof.counting import ApproxTokenCounter, TokenCounter
from hydrangea.asof.errors import (
    AsOfTypeError,
    AsOfViolationError,
    ContextBudgetError,
    ContextError,
    DuplicateItemError,
    FenceFormatError,
    InvalidContextItemError,
    NaiveDatetimeError,
    RecordNotFoundError,
    SummarizerMismatchError,
    SummaryPointerError,
    UndatedItemError,
)
from hydrangea.asof.fence import FENCE_TOKENS, UNTRUSTED_NOTICE, FencedBlock, unfence
from hydrangea.asof.items import HARNESS_KINDS, ContextItem, ItemKind, Provenance, Trust

# Extras (llm, sqlite_store, tokenizers) sit in sorted order; none imports an SDK or tokenizer.
from hydrangea.asof.llm import (
    AsyncChatModel,
    ChatModel,
    LLMSummarizer,
    ModelReplyError,
    anthropic_chat_model,
    gemini_chat_model,
    openai_chat_model,
)
from hydrangea.asof.records import InMemoryRecordStore, RecordStore
from hydrangea.asof.result import BuiltContext, Compaction, Rejection, RejectionReason
from hydrangea.asof.sqlite_store import RecordStoreError, SqliteRecordStore
from hydrangea.asof.summarizers import AsyncSummarizer, ExtractiveSummarizer, Summarizer
from hydrangea.asof.summary import StructuredSummary
from hydrangea.asof.tokenizers import (
    MissingExtraError,
    OpenAITokenCounter,
    UnknownEncodingError,
    VocabularyIntegrityError,
)

__all__ = [
    "FENCE_TOKENS",
    "HARNESS_KINDS",
    "UNTRUSTED_NOTICE",
    "ApproxTokenCounter",
    "AsOfTypeError",
    "AsOfViolationError",
    "AsyncChatModel",
    "AsyncSummarizer",
    "BuiltContext",
    "ChatModel",
    "Compaction",
    "ContextBudgetError",
    "ContextBuilder",
    "ContextError",
    "ContextItem",
    "DuplicateItemError",
    "ExtractiveSummarizer",
    "FenceFormatError",
    "FencedBlock",
    "InMemoryRecordStore",
    "InvalidContextItemError",
    "ItemKind",
    "LLMSummarizer",
    "MissingExtraError",
    "ModelReplyError",
    "NaiveDatetimeError",
    "OpenAITokenCounter",
    "Provenance",
    "RecordNotFoundError",
    "RecordStore",
    "RecordStoreError",
    "Rejection",
    "RejectionReason",
    "SqliteRecordStore",
    "StructuredSummary",
    "Summarizer",
    "SummarizerMismatchError",
    "SummaryPointerError",
    "TokenCounter",
    "Trust",
    "UndatedItemError",
    "UnknownEncodingError",
    "VocabularyIntegrityError",
    "anthropic_chat_model",
    "gemini_chat_model",
    "openai_chat_model",
    "unfence",
]
