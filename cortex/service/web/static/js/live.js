// Live updates: server-sent events from GET /v1/events (new captures, injections, reviews), announced in the
// page's status region and handed to whatever screen listens ("cortex:event" on document).

let source = null;

/** Start listening for the signed-in caller (the server filters what each token may see). */
export function start(me) {
  stop();
  if (typeof EventSource === "undefined") return;
  source = new EventSource("/v1/events");
  source.addEventListener("message", (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch (_) { return; }
    document.dispatchEvent(new CustomEvent("cortex:event", {detail: event}));
  });
  source.addEventListener("error", () => { /* EventSource reconnects by itself */ });
}

/** Stop listening (signed out). */
export function stop() {
  if (source) source.close();
  source = null;
}
