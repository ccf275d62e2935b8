"""Capture: memories an agent did not store itself (docs/capture.md). One module per channel, and what every
channel applies before it stores anything:

* :mod:`~cortex.capture.markers`: marker lines (``LEARNED:``...) at agent end;
* :mod:`~cortex.capture.session`: session transcripts (readers in :mod:`~cortex.capture.transcripts`), with a
  language model's learnings and summary, incremental by :mod:`~cortex.capture.checkpoints`, captured in steps
  by :mod:`~cortex.capture.pipeline`;
* :mod:`~cortex.capture.tasks`: task outcomes;
* :mod:`~cortex.capture.usage`: the "used" signal (what an output drew on);
* :mod:`~cortex.capture.notes`: Markdown notes (a sync planned, then applied);
* :mod:`~cortex.capture.redact` (what a secret is), :mod:`~cortex.capture.scrub` (the write path's one redaction
  step, over every field of every channel's memories), :mod:`~cortex.capture.scan` (a stored scope's secrets and
  their rewrite) and :mod:`~cortex.capture.gate` (the quality gate).

The package itself imports nothing: a hook imports :mod:`~cortex.capture.tasks` without the engine."""
