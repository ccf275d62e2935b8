"""Cortex as a memory for other agent frameworks: a Hermes Agent memory provider (:mod:`.hermes`) and a LangGraph
store (:mod:`.langgraph`)."""
