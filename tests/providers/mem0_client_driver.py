"""Runs in the mem0ai 2.2.1 virtualenv (not Cortex's): drives the real ``MemoryClient`` against a mem0 stand-in and
prints what it got back as JSON, so tests/providers/test_mem0.py can check the real client still speaks the API
Cortex's provider and the stand-in speak. Arguments: one JSON object ``{"url", "key", "agent", "user", "text",
"cortex_id"}``."""

import json
import sys

from mem0 import MemoryClient

args = json.loads(sys.argv[1])
client = MemoryClient(api_key=args["key"], host=args["url"])  # GET /v1/ping/
identity = {"AND": [{"user_id": args["user"]}, {"agent_id": args["agent"]}]}
out = {"org_id": getattr(client, "org_id", None)}
out["add"] = client.add([{"role": "user", "content": args["text"]}], user_id=args["user"], agent_id=args["agent"],
                        metadata={"cortex_id": "from-client"}, infer=False)
out["search"] = client.search("wheel colour", filters=identity, top_k=5)
out["get_all"] = client.get_all(filters={"AND": [*identity["AND"], {"metadata": {"cortex_id": args["cortex_id"]}}]})
mine = out["add"]["results"][0]["id"]
out["get"] = client.get(mine)
out["update"] = client.update(mine, text=args["text"] + " (updated)")
out["after_update"] = client.get(mine)["memory"]
out["delete"] = client.delete(mine)
try:
    client.get(mine)
    out["get_deleted"] = "found"
except Exception as exc:  # the client maps a 404 to its MemoryNotFoundError
    out["get_deleted"] = type(exc).__name__
try:
    client.search("anything", user_id=args["user"])
    out["top_level_identity"] = "accepted"
except ValueError:
    out["top_level_identity"] = "refused"
try:
    MemoryClient(api_key="wrong-key", host=args["url"])
    out["wrong_key"] = "accepted"
except ValueError as exc:
    out["wrong_key"] = str(exc)
print(json.dumps(out))
