"""Drives the real ``openviking`` 0.5.2 client (``openviking.SyncHTTPClient``: openviking-sdk's HTTP client) against
a server, for tests/providers/test_openviking.py. Runs in the client's own virtual environment (it needs
``mcp<2``), so it imports nothing from Cortex or its tests.

    python openviking_client_driver.py '<json: url, key, agent, uri, provider_uri, hostile>'

prints one JSON object: each step's answer (or the class and message of what it raised).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def main() -> None:
    args = json.loads(sys.argv[1])
    import openviking  # type: ignore[import-not-found]  # in its own virtualenv
    from openviking import SyncHTTPClient

    out: dict[str, Any] = {"version": openviking.__version__, "client": f"{SyncHTTPClient.__module__}."
                                                                        f"{SyncHTTPClient.__qualname__}"}

    def step(name: str, call: Any) -> None:
        try:
            out[name] = {"ok": call()}
        except Exception as exc:  # noqa: BLE001 - reported to the test
            out[name] = {"error": type(exc).__name__, "message": str(exc)}

    client = SyncHTTPClient(url=args["url"], api_key=args["key"], timeout=10)
    client.initialize()
    prefix, uri = f"viking://~/peers/{args['agent']}/memories/", args["uri"]
    step("write", lambda: client.write(uri, args["hostile"]))
    step("read", lambda: client.read(uri))
    step("find", lambda: client.find("colour blue wheel", target_uri=prefix, limit=5))
    step("find_content", lambda: client.find("colour blue wheel", target_uri=prefix, limit=5,
                                             options={"read_content": True}))
    step("read_provider", lambda: client.read(args["provider_uri"]))
    step("create_session", lambda: client.create_session("drv-1"))
    step("create_again", lambda: client.create_session("drv-1"))
    step("add_user", lambda: client.add_message("drv-1", "user", "I keep my bike in the garage"))
    step("add_assistant", lambda: client.session("drv-1").add_message("assistant", "Noted.",
                                                                      peer_id=args["agent"]))
    # openviking 0.5.2's SyncHTTPClient.commit_session runs on openviking_cli's event loop, every other method on
    # openviking-sdk's: on one client a kept-alive connection made by the other loop fails ("bound to a
    # different event loop"), against the real server as here. A client of its own for the commits avoids it.
    committer = SyncHTTPClient(url=args["url"], api_key=args["key"], timeout=10)
    committer.initialize()
    step("commit", lambda: committer.commit_session("drv-1"))
    step("commit_unknown", lambda: committer.commit_session("no-such-session"))
    step("rm", lambda: client.rm(uri))
    step("read_removed", lambda: client.read(uri))
    step("old_prefix", lambda: client.find("colour", target_uri="viking://user/memories/", limit=5))
    client.close()

    wrong = SyncHTTPClient(url=args["url"], api_key="not-" + args["key"], timeout=10)
    wrong.initialize()
    step("wrong_key", lambda: wrong.find("colour", target_uri=prefix))
    wrong.close()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
