"""The prompts Cortex sends a language model, one module per task, each with its text, its ``VERSION`` (raised
when the text changes; ``tests/golden/prompts/`` pins both) and the function building its messages (or asking
the client): :mod:`.extract` and :mod:`.summary` (capture's LLM extractor), :mod:`.contradictions`,
:mod:`.distil` and :mod:`.team` (consolidation).
"""


def transcript(text: str) -> str:
    """The user message of a prompt about a session's transcript: the transcript, marked as material."""
    return f"The transcript:\n<transcript>\n{text}\n</transcript>"
