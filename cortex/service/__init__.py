"""Cortex as a service: the HTTP API and MCP server (``cortex serve``, ``cortex mcp``), the client the CLI and
hooks use while a server owns the store, tokens, the discovery file and the coding-agent hooks.

Only :mod:`cortex.service.http` and :mod:`cortex.service.mcp` import FastAPI and the MCP SDK; the hook path
(:mod:`cortex.service.hooks`, :mod:`cortex.api.client`, :mod:`cortex.discovery`) never does.
"""
