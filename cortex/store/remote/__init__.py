"""A backend on a remote SPARQL 1.1 server (Oxigraph server, Virtuoso, GraphDB, Fuseki...), shared by any number
of Cortex processes.

Selected by a store location ``sparql+http://[user:password@]host:port/path`` (or ``sparql+https``): ``path`` is
the query endpoint; ``?update=`` and ``?gsp=`` name the update and Graph Store endpoints when they differ (a path
on the same host, or a full URL); ``?auth=digest|basic`` the HTTP authentication (basic by default when there
are credentials); ``?timeout=`` seconds. Credentials may also come from ``CORTEX_STORE_USER`` and
``CORTEX_STORE_PASSWORD``; they are never part of :attr:`RemoteStore.location`, of an error or of a log line.

What the servers do not give, and how this module copes (docs/scale-out.md):

* **No serialised read-modify-write.** Oxigraph server runs concurrent updates on snapshots without conflict
  detection (8 clients x 200 ``usageCount + 1`` updates lost increments, and left several values). So a touch
  never rewrites a count: each use is one triple of its own (:meth:`MemoryCodec.use_literal`) that readers add
  to the stored count; updates replace every triple but those, and check the version before and after.
* **The change log is shared.** Each write appends a record whose number the server computes in the same
  update (``MAX + 1``); two writers racing may draw the same number, so records are told apart by their token
  and readers compare counts over a window of numbers (:mod:`cortex.index.manager`).
* **Batches sized for real servers.** Virtuoso refuses an ``INSERT DATA`` of ~200 memories (SP031), so data
  goes in operations of at most :data:`MEMORIES_PER_OPERATION` memories, several per request.
* **Silent truncation.** Virtuoso caps result sets (``ResultSetMaxRows``); full reads compare what arrived with
  a count and fail loudly instead of returning part of a graph.

No user string is pasted into SPARQL: every term is serialised by pyoxigraph (``str(term)``) and ids are
validated; query substitutions become a ``VALUES`` clause of serialised terms.
"""

from cortex.store.remote.answers import query_form as query_form
from cortex.store.remote.claims import CLAIM_LEASE as CLAIM_LEASE
from cortex.store.remote.changelog import CACHED_TEXTS as CACHED_TEXTS
from cortex.store.remote.endpoint import DEFAULT_MAX_ANSWER as DEFAULT_MAX_ANSWER
from cortex.store.remote.endpoint import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from cortex.store.remote.endpoint import Endpoint
from cortex.store.remote.protocol import ATTEMPTS as ATTEMPTS
from cortex.store.remote.protocol import DEADLOCK_ATTEMPTS as DEADLOCK_ATTEMPTS
from cortex.store.remote.protocol import DELETES_PER_OPERATION as DELETES_PER_OPERATION
from cortex.store.remote.protocol import GSP_MEMORIES as GSP_MEMORIES
from cortex.store.remote.protocol import GSP_TRIPLES as GSP_TRIPLES
from cortex.store.remote.protocol import IDS_PER_READ as IDS_PER_READ
from cortex.store.remote.protocol import JSON_RESULTS as JSON_RESULTS
from cortex.store.remote.protocol import MEMORIES_PER_OPERATION as MEMORIES_PER_OPERATION
from cortex.store.remote.protocol import OPERATIONS_PER_REQUEST as OPERATIONS_PER_REQUEST
from cortex.store.remote.protocol import RETRY_STATUS as RETRY_STATUS
from cortex.store.remote.protocol import PartialAnswerError as PartialAnswerError
from cortex.store.remote.store import RemoteStore

__all__ = ["Endpoint", "RemoteStore"]
