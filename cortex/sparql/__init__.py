"""The read-only SPARQL surface (docs/sparql.md).

* :mod:`~cortex.sparql.lexer`: a query's tokens, read as the SPARQL recommendation says, with its size, token
  count and nesting bounded, and the one text written back from them;
* :mod:`~cortex.sparql.check`: what a query may do (read-only, no ``SERVICE``, the agent's dataset written in)
  and the text the engine runs: exactly the tokens that were judged;
* :mod:`~cortex.sparql.results`: what a query answers, its row limit and formats;
* :mod:`~cortex.sparql.media`: which format a protocol client asked for (``Accept``, format hints);
* :mod:`~cortex.sparql.runner`: running it within its time-out, in a thread;
* :mod:`~cortex.sparql.workers`: running it in a worker process on a checkpoint of an embedded store, killed
  at its time-out.
"""

from cortex.sparql.check import Prepared, engine_error, prepare
from cortex.sparql.lexer import MAX_DEPTH, MAX_QUERY_BYTES, MAX_TOKENS
from cortex.sparql.results import (
    DEFAULT_ROW_LIMIT,
    DEFAULT_TIMEOUT,
    FORMATS,
    SparqlResult,
    check_format,
    check_substitutions,
    collect,
    configured_limit,
    configured_timeout,
    from_json,
    graphs_clause,
    media_type,
)
from cortex.sparql.runner import check_timeout, guarded, run

__all__ = ["DEFAULT_ROW_LIMIT", "DEFAULT_TIMEOUT", "FORMATS", "MAX_DEPTH", "MAX_QUERY_BYTES", "MAX_TOKENS", "Prepared",
           "SparqlResult", "check_format", "check_timeout", "check_substitutions", "collect", "configured_limit", "configured_timeout",
           "engine_error", "from_json", "graphs_clause", "guarded", "media_type", "prepare", "run"]
