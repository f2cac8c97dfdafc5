"""Every exception the library raises on purpose, in one place.

Each class derives from :class:`HydrangeaError` and, where a builtin says the same thing, from
that builtin too, so ``except ValueError`` (or ``TypeError``, ``KeyError``) clauses written
before this library keep working. Subpackages re-export the names that concern them
(``hydrangea.asof.errors``, ``hydrangea.coop.errors`` ...), but the classes live here.

The tree::

    HydrangeaError
    ├── InvalidItemError (ValueError)            a native item the gateway cannot accept
    │   ├── CompactionPlacementError             a compacted window pushed after a conversation
    │   ├── GatewayMismatchError                 ... because it belongs to another gateway
    │   ├── StreamEventError                     ... because it is one event of a stream
    │   ├── IncompleteStreamError                a stream that is partial or out of order
    │   └── InputTooDeepError                    input nested deeper than the library reads
    ├── UnsupportedContentError (ValueError)     a Message the gateway cannot express
    ├── InvalidMessageError (TypeError)          something that is not a Message where one belongs
    │   └── MessageValidationError (ValueError)  a Message or part whose fields fail validation
    ├── RequestOptionError (TypeError)           a caller's request keyword that cannot be merged
    │   └── UnsupportedOptionError (ValueError)  a provider option the gateway or model lacks
    ├── UnencodableTextError (ValueError)        text that cannot be stored (a lone surrogate)
    ├── CachingError (ValueError)                prompt-caching settings or markers that conflict
    ├── SerializationError (ValueError)          a saved file that cannot be read back
    │   └── NonFiniteNumberError                 JSON holding NaN, Infinity or a float overflow
    ├── MissingExtraError (ImportError)          an optional dependency; names the extra
    ├── TokenCountError (ValueError)             a token-count endpoint's answer is no count
    ├── LiveUnavailableError, LiveCallError      the demo's --live mode
    ├── ContextStateError (RuntimeError)         not allowed in the current state
    │   ├── PrefixBindingError                   a request that would change a bound prefix
    │   └── CompactionError                      a provider compaction that cannot be applied
    ├── SelectorError (ValueError)               a depth selector that is malformed or absent
    ├── AreaContractError (TypeError)            an object that is not a Context Area
    ├── DuplicateAreaError (ValueError)          the same area registered twice
    ├── InvalidEffectRangeError (ValueError)     bounds that are not 0 <= earliest <= latest
    ├── GcPrologueError (ExceptionGroup)         gc_prologue() callbacks that raised
    ├── LifecycleError
    │   ├── InvalidComponentError (ValueError)   a schedule, key or tags that make no sense
    │   ├── InvalidTargetError (TypeError)       neither a CoopContext nor a Context
    │   ├── DuplicateKeyError (ValueError)       a key another live component holds
    │   ├── ComponentNotFoundError (KeyError)    no live component holds that key
    │   ├── PermanentComponentError (RuntimeError)  a committed permanent component
    │   └── UnknownSnapshotError (KeyError)      no snapshot has that id
    ├── ContextError                             as-of assembly (keelgate.context's names)
    │   ├── AsOfViolationError (ValueError)      published after as_of
    │   ├── UndatedItemError (ValueError)        an outside item with no publication time
    │   ├── DuplicateItemError (ValueError)      two items or records under one id
    │   ├── ContextBudgetError (ValueError)      trusted content alone does not fit
    │   ├── RecordNotFoundError (KeyError)       no record under that id
    │   ├── NaiveDatetimeError (ValueError)      a datetime without a timezone
    │   │   └── AsOfTypeError (TypeError)        as_of that is not a datetime at all
    │   ├── InvalidContextItemError (ValueError) fields that contradict each other
    │   ├── FenceFormatError (ValueError)        fenced text that is not well formed
    │   ├── SummaryPointerError (ValueError)     a summary pointing at records it did not replace
    │   ├── SummarizerMismatchError (TypeError)  a summarizer that cannot be used this way
    │   ├── ModelReplyError (ValueError)         a summarizing model's reply that is not valid
    │   ├── UnknownEncodingError (ValueError)    an encoding the exact counter cannot count
    │   ├── VocabularyIntegrityError             a vocabulary file whose SHA-256 is wrong
    │   └── RecordStoreError (also StoreError)   a record database that fails
    ├── AreaUsageError (ValueError)              a ready-made area handed what it cannot take
    ├── ToolError                                raised by a tool to report a failure
    ├── ToolDefinitionError (TypeError)          a function that cannot be declared as a tool
    ├── DuplicateToolError (ValueError)          two tools under one name
    ├── ToolResultError (TypeError)              a tool's return value that is not JSON
    └── StoreError                               session and record stores
        ├── SessionNotFoundError (KeyError)      no session under that id
        ├── SessionConflictError                 the session changed since it was loaded
        ├── StoreUnavailableError (ConnectionError)  the server cannot be reached
        ├── StorePermissionError (PermissionError)   the store refuses to write (read-only)
        ├── RecordStoreError (also ContextError) a record database that fails
        └── SchemaVersionError                   the store's schema is not one this version reads
"""

from __future__ import annotations

__all__ = [
    "AreaContractError",
    "AreaUsageError",
    "AsOfTypeError",
    "AsOfViolationError",
    "CachingError",
    "CompactionError",
    "CompactionPlacementError",
    "ComponentNotFoundError",
    "ContextBudgetError",
    "ContextError",
    "ContextStateError",
    "DuplicateAreaError",
    "DuplicateItemError",
    "DuplicateKeyError",
    "DuplicateToolError",
    "FenceFormatError",
    "GatewayMismatchError",
    "GcPrologueError",
    "HydrangeaError",
    "IncompleteStreamError",
    "InputTooDeepError",
    "InvalidComponentError",
    "InvalidContextItemError",
    "InvalidEffectRangeError",
    "InvalidItemError",
    "InvalidMessageError",
    "InvalidTargetError",
    "LifecycleError",
    "LiveCallError",
    "LiveUnavailableError",
    "MessageValidationError",
    "MissingExtraError",
    "ModelReplyError",
    "NaiveDatetimeError",
    "NonFiniteNumberError",
    "PermanentComponentError",
    "PrefixBindingError",
    "RecordNotFoundError",
    "RecordStoreError",
    "RequestOptionError",
    "SchemaVersionError",
    "SelectorError",
    "SerializationError",
    "SessionConflictError",
    "SessionNotFoundError",
    "StoreError",
    "StorePermissionError",
    "StoreUnavailableError",
    "StreamEventError",
    "SummarizerMismatchError",
    "SummaryPointerError",
    "TokenCountError",
    "ToolDefinitionError",
    "ToolError",
    "ToolResultError",
    "UndatedItemError",
    "UnencodableTextError",
    "UnknownEncodingError",
    "UnknownSnapshotError",
    "UnsupportedContentError",
    "UnsupportedOptionError",
    "VocabularyIntegrityError",
]


class HydrangeaError(Exception):
    """Base class of every error the library raises on purpose."""


class _KeyMessage(KeyError):
    """A KeyError whose ``str()`` is its message rather than the message's ``repr()``."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


# -- items and messages -----------------------------------------------------------------------


class InvalidItemError(HydrangeaError, ValueError):
    """A provider-native item that the Context's gateway cannot accept. Nothing was appended."""


class CompactionPlacementError(InvalidItemError):
    """A ``/responses/compact`` result pushed into a Context that already holds a conversation.

    The compacted window replaces the conversation it compacted, and a Context is append-only:
    push it into a new Context (only system or developer messages may come before it) and
    continue there. Nothing was appended.
    """


class GatewayMismatchError(InvalidItemError):
    """An item or SDK object that belongs to another gateway than the Context's."""


class StreamEventError(InvalidItemError):
    """One event or chunk of a streamed response was pushed as if it were a whole response.

    Push the complete stream instead (see the providers guide, "Streams").
    """


class IncompleteStreamError(InvalidItemError):
    """A stream whose events are partial, out of order or from another gateway. Nothing was
    appended."""


class InputTooDeepError(InvalidItemError):
    """Input nested deeper than the library reads (a bound that keeps recursion safe)."""


class UnsupportedContentError(HydrangeaError, ValueError):
    """A Message whose content the gateway cannot express. Nothing was appended."""


class InvalidMessageError(HydrangeaError, TypeError):
    """Something that is not a :class:`~hydrangea.message.Message` (or a part) where one belongs,
    or a Message whose fields fail validation."""


class MessageValidationError(InvalidMessageError, ValueError):
    """A Message or part whose fields fail validation (pydantic's ``ValidationError``, wrapped).

    Also a ``ValueError``, as pydantic's error was, so older ``except ValueError`` clauses keep
    working; the original ``ValidationError`` is the ``__cause__``.
    """
class RequestOptionError(HydrangeaError, TypeError):
    """A keyword argument given to ``Context.request()`` that cannot be merged with what the
    Context builds (the history itself, or a value of the wrong type)."""


class UnsupportedOptionError(RequestOptionError, ValueError):
    """A typed provider option (context editing, compaction, explicit caching ...) asked of a
    gateway or model that does not offer it, refused before anything is sent.

    ``option`` names the option, ``gateway`` the Context's gateway and ``model`` the model the
    request was checked for (``None``: none was named; pass ``model=`` to ``request()``).
    """

    def __init__(self, message: str, *, option: str, gateway: str, model: str | None) -> None:
        super().__init__(message)
        self.option = option
        self.gateway = gateway
        self.model = model


class UnencodableTextError(HydrangeaError, ValueError):
    """Text that cannot be encoded as UTF-8 (a lone surrogate), refused where it enters."""


class MissingExtraError(HydrangeaError, ImportError):
    """An optional dependency is not installed; the message names the extra that provides it."""


class TokenCountError(HydrangeaError, ValueError):
    """A provider's token-count endpoint answered with something that is not a count of
    tokens, or a counter was given a client of the wrong kind (an async client to a sync
    method, or the other way round)."""


class LiveUnavailableError(HydrangeaError):
    """A live demo run cannot start: no API key in the environment, or the SDK is not installed."""


class LiveCallError(HydrangeaError):
    """A live provider call failed (network, authentication, a refused request)."""


class CachingError(HydrangeaError, ValueError):
    """Prompt-caching settings that make no sense, or cache markers that contradict them
    (an unknown TTL, a longer TTL after a shorter one, an explicit cache without content)."""


class SerializationError(HydrangeaError, ValueError):
    """A saved Context (or session) that cannot be read back."""


class NonFiniteNumberError(SerializationError):
    """A JSON text holds ``NaN``, ``Infinity`` or a number too large for a float (the library's
    JSON reader refuses what no provider sends and JSON itself does not allow)."""


class SelectorError(HydrangeaError, ValueError):
    """A depth selector (``"d0, 1"``) that is not well formed, or coordinates the request lacks."""


class ContextStateError(HydrangeaError, RuntimeError):
    """An operation that is not allowed in the current state (for example a re-entrant render)."""


# -- cooperative areas ------------------------------------------------------------------------



class PrefixBindingError(ContextStateError):
    """A request that would change the prefix a reply's reasoning is bound to.

    Anthropic's preserved-thinking models reject such a request (HTTP 400) and OpenAI's
    reasoning models silently drop the reasoning; the Context refuses to build it instead.
    :attr:`position` is the first item index where the request differs from what the
    reasoning was produced under, :attr:`item` the index of the bound item. Keep what was sent
    (append updates at the end), or choose ``Context(..., broken_reasoning="drop")`` to leave
    the unusable reasoning out consistently.
    """

    def __init__(self, message: str, *, position: int, item: int) -> None:
        super().__init__(message)
        self.position = position
        self.item = item


class CompactionError(ContextStateError):
    """A provider compaction the Context cannot apply as the provider documents it: a second
    compaction request while one is pending, a compaction reply with no pending request, or a
    compaction request that came back without a summary (the history is kept whole; send a
    new compaction request or go on without one). Nothing was changed."""


class AreaContractError(HydrangeaError, TypeError):
    """An object that does not fulfil the Context Area contract.

    Raised by ``register()`` for a missing or non-callable member or an unhashable object, and
    during ``render()`` for a state that is not an :class:`AreaLifeState` /
    :class:`AreaFlowState` or a callback result of the wrong type.
    """


class DuplicateAreaError(HydrangeaError, ValueError):
    """The same area instance was registered while it is still registered."""


class InvalidEffectRangeError(HydrangeaError, ValueError):
    """An EffectRange whose bounds are not ``0 <= earliest <= latest``."""


class GcPrologueError(ExceptionGroup[Exception], HydrangeaError):
    """One or more ``gc_prologue()`` callbacks raised during a collection.

    The collection was completed all the same (tail detached, promoted messages appended, areas
    removed); the exceptions are carried in :attr:`exceptions`, in the order the callbacks ran,
    each with a note naming its area. Catch it as ``GcPrologueError`` or with ``except*`` (a partial
    ``except*`` match hands on a plain ``ExceptionGroup``).
    """


# -- lifecycles -------------------------------------------------------------------------------


class LifecycleError(HydrangeaError):
    """Base class of the lifecycle layer's errors."""


class InvalidComponentError(LifecycleError, ValueError):
    """A component whose schedule, key or tags make no sense (the message says which)."""


class InvalidTargetError(LifecycleError, TypeError):
    """A Lifecycle was given something that is neither a CoopContext (renderer) nor a Context."""


class DuplicateKeyError(LifecycleError, ValueError):
    """A component was added with a key that another live component already holds."""


class ComponentNotFoundError(LifecycleError, _KeyMessage):
    """No live component holds the key that was asked for."""


class PermanentComponentError(LifecycleError, RuntimeError):
    """A permanent component already in the append-only history cannot be deleted or replaced."""


class UnknownSnapshotError(LifecycleError, _KeyMessage):
    """No snapshot has the id that was asked for; there is never a fallback to the current state."""


# -- as-of assembly ---------------------------------------------------------------------------


class ContextError(HydrangeaError):
    """Base class for as-of context assembly failures (keelgate.context's name)."""


class AsOfViolationError(ContextError, ValueError):
    """An item was published after ``as_of``."""


class UndatedItemError(ContextError, ValueError):
    """An outside item carries no publication time, so it cannot be shown to be earlier."""


class DuplicateItemError(ContextError, ValueError):
    """Two items share an id (or a record store already holds a different record under it)."""


class ContextBudgetError(ContextError, ValueError):
    """Trusted content alone does not fit the token budget (or the budget is not positive)."""


class RecordNotFoundError(ContextError, _KeyMessage):
    """A record store holds no record under the requested id."""


class NaiveDatetimeError(ContextError, ValueError):
    """A datetime without a timezone was given where an aware one is required."""


class AsOfTypeError(NaiveDatetimeError, TypeError):
    """``as_of`` given as something other than a datetime (an ISO string, a date)."""


class InvalidContextItemError(ContextError, ValueError):
    """A context item whose fields contradict each other (for example a trusted document)."""


class FenceFormatError(ContextError, ValueError):
    """Text handed to :func:`hydrangea.asof.fence.unfence` or ``unescape`` is not well formed."""


class SummaryPointerError(ContextError, ValueError):
    """A summary item given to a build points at a stored record it did not replace: a
    summary's pointers lead only to the records it stands for (or those the stored summaries
    it merged stand for)."""


class SummarizerMismatchError(ContextError, TypeError):
    """The summarizer cannot be used this way (an async-only summarizer in a sync build)."""


class ModelReplyError(ContextError, ValueError):
    """A model reply that is not a valid summary. :class:`LLMSummarizer` catches it, logs a
    warning and falls back; it reaches callers only of :func:`parse_reply` and the adapters."""


class UnknownEncodingError(ContextError, ValueError):
    """An encoding name the exact counter cannot count (only o200k_base and cl100k_base)."""


class VocabularyIntegrityError(ContextError):
    """A vocabulary file is missing or its SHA-256 differs from OpenAI's published digest."""


# -- ready-made areas -------------------------------------------------------------------------


class AreaUsageError(HydrangeaError, ValueError):
    """An area was handed something it cannot take (a reply of the wrong role, an empty turn,
    a non-positive threshold). The area is unchanged."""


class ToolError(HydrangeaError):
    """Raised by a tool given to :class:`~hydrangea.areas.ToolLoopArea` to report a failure.

    The loop turns it into an error tool result for the model; any other exception escapes.
    """


class ToolDefinitionError(HydrangeaError, TypeError):
    """A function that cannot be declared as a tool: a parameter without a type annotation,
    ``*args`` or ``**kwargs``, positional-only parameters, or a type with no JSON schema."""


class DuplicateToolError(HydrangeaError, ValueError):
    """Two tools given under the same name (to a tool loop or a request)."""


class ToolResultError(HydrangeaError, TypeError):
    """A tool returned a value that cannot be sent to the model as JSON. This is a defect of the
    tool, not of the model's call, so it is raised rather than returned as an error result."""


# -- stores -----------------------------------------------------------------------------------


class StoreError(HydrangeaError):
    """Base class of session and record store failures."""


class SessionNotFoundError(StoreError, _KeyMessage):
    """No session is stored under the requested id."""


class SessionConflictError(StoreError):
    """The session was saved by someone else since it was loaded (optimistic concurrency).

    Nothing of this save was written; reload the session, re-apply the turn and save again.
    """


class StoreUnavailableError(StoreError, ConnectionError):
    """The store's server cannot be reached, or the connection dropped; nothing was written."""


class StorePermissionError(StoreError, PermissionError):
    """The store refuses to write: a read-only role, transaction or file. Nothing was written."""


class RecordStoreError(StoreError, ContextError):
    """A record database cannot be opened, read or written, or holds an unreadable record."""


class SchemaVersionError(StoreError):
    """The store's schema was written by a version of the library this one cannot read."""
