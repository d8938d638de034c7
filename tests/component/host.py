"""The component in wasmtime (the `wasmtime` Python package): a host-side
key-value store (a dict), the model forwarded to the local OpenAI-compatible
server, and the scenario tests/component/scenario.json describes. Prints one
JSON object of what it saw; tests/node/component.test.mjs checks it.

    python host.py <component.wasm> <o200k pack> <chat/completions URL>
"""
import json
import sys
import urllib.request

from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker, Record, Variant

API = "agent-memory:core/api@0.1.0"
wasm, pack, endpoint = sys.argv[1:4]
scenario = json.load(open(__file__.replace("host.py", "scenario.json")))


def record(**fields):
    """A WIT record: Python names with `_` for WIT's `-`."""
    r = Record()
    for name, value in fields.items():
        setattr(r, name.replace("_", "-"), value)
    return r


def field(r, name):
    return getattr(r, name.replace("_", "-"))


# The host's store: one dict for every namespace, kept across restarts.
kv = {}


# wasmtime-py gives a `result` as a `Variant` only where its two cases could
# be told apart by value alone otherwise (`result<option<string>, string>`);
# elsewhere the value itself is the case.
def store_get(_, key):
    return Variant("ok", kv.get(key))


def store_put_many(_, items):
    kv.update(dict(items))


def store_delete_many(_, keys):
    for k in keys:
        kv.pop(k, None)


def store_list_prefix(_, prefix):
    return [(k, v) for k, v in kv.items() if k.startswith(prefix)]


# The host's locks: one instance at a time here, so a name asked for while
# held would be a second holder (a bug); acquires and releases are counted.
held, lock_counts = set(), {"acquired": 0, "released": 0}


def lock_acquire(_, name):
    if name in held:
        return f"{name} is already held"
    held.add(name)
    lock_counts["acquired"] += 1


def lock_release(_, name):
    held.discard(name)
    lock_counts["released"] += 1


model_calls = []


# The model's first answer is a 503: the core, not the host, decides that
# it is worth retrying, from the status alone, and sends that request again.
failed_calls = []


def llm_complete(_, request):
    body = {
        "model": "scripted",
        "messages": [{"role": m.role, "content": m.content} for m in request.messages],
    }
    if not failed_calls:
        failed_calls.append(body["messages"])
        return Variant("err", record(message="overloaded", status=503, retry_after_ms=0))
    if body["messages"] == failed_calls[0]:
        failed_calls.append(body["messages"])
    req = urllib.request.Request(endpoint, json.dumps(body).encode(), {"content-type": "application/json"})
    with urllib.request.urlopen(req) as res:
        answer = json.load(res)
    model_calls.append(len(body["messages"]))
    usage = answer.get("usage")
    return Variant("ok", record(
        content=answer["choices"][0]["message"]["content"],
        usage=usage and record(prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"]),
    ))


def embed(_, texts):
    return "no embedder in this host"


engine = Engine()
component = Component.from_file(engine, wasm)
linker = Linker(engine)
linker.add_wasip2()
with linker.root() as root:
    with root.add_instance("agent-memory:core/store@0.1.0") as i:
        i.add_func("get", store_get)
        i.add_func("put-many", store_put_many)
        i.add_func("delete-many", store_delete_many)
        i.add_func("list-prefix", store_list_prefix)
    with root.add_instance("agent-memory:core/locks@0.1.0") as i:
        i.add_func("acquire", lock_acquire)
        i.add_func("release", lock_release)
    with root.add_instance("agent-memory:core/llm@0.1.0") as i:
        i.add_func("complete", llm_complete)
    with root.add_instance("agent-memory:core/embedder@0.1.0") as i:
        i.add_func("embed", embed)


class Instance:
    """One instance of the component: a process of the host, restarted by making another."""

    def __init__(self):
        self.store = Store(engine)
        wasi = WasiConfig()
        wasi.inherit_stderr()
        self.store.set_wasi(wasi)
        self.instance = linker.instantiate(self.store, component)
        self.api = self.instance.get_export_index(self.store, API)

    def call(self, name, *args):
        func = self.instance.get_func(self.store, self.instance.get_export_index(self.store, name, self.api))
        out = func(self.store, *args)
        func.post_return(self.store)
        if isinstance(out, Variant):
            if out.tag == "err":
                raise RuntimeError(f"{out.payload.code}: {out.payload.message}")
            return out.payload
        if isinstance(out, Record) and set(vars(out)) == {"code", "message"}:
            # An `error` where the ok case is not a record (a resource): untagged.
            raise RuntimeError(f"{out.code}: {out.message}")
        return out


def open_memory(instance, session_id):
    options = record(
        namespace=scenario["namespace"], session_id=session_id, use_llm=True, embed_model=None,
        context_window=None, reserved_for_response=None, max_tokens=scenario["maxTokens"],
    )
    memory = instance.call("[static]memory.open", options)
    tokenizer = instance.call("[static]tokenizer.from-pack", open(pack, "rb").read())
    instance.call("[method]memory.set-tokenizer", memory, tokenizer)
    return memory, tokenizer


def message(role, content):
    return record(role=role, content=content, tool_calls=[], tool_call_id=None, metadata=[], timestamp=None)


first = Instance()
memory, tokenizer = open_memory(first, "monday")
for user, assistant in scenario["turns"]:
    first.call("[method]memory.add", memory, message("user", user))
    first.call("[method]memory.add", memory, message("assistant", assistant))
usage = first.call("[method]memory.usage", memory)
built = first.call("[method]memory.build-context", memory, record(query=None, recall=None, system="Be brief.", tools_json=None))
ended = first.call("[method]memory.end-session", memory)
history = first.call("[method]memory.session-history", memory)

# A record damaged while no instance ran; then a restart: a new instance of
# the component on the same store.
kv[scenario["namespace"] + "/lt/entry/damaged"] = "{not json"
second = Instance()
memory2, tokenizer2 = open_memory(second, "tuesday")
asked = second.call("[method]memory.build-context", memory2, record(query=scenario["question"], recall=None, system="Be brief.", tools_json=None))
hits = second.call("[method]memory.search", memory2, "Lisbon", 3)
try:
    second.call("[static]memory.open", record(namespace="../escape", session_id="s", use_llm=False, embed_model=None, context_window=None, reserved_for_response=None, max_tokens=None))
    bad = None
except RuntimeError as e:
    bad = str(e)

# Import detects a sealed document as the npm package does: this world
# takes no key, so it is a typed `decryption` error, not a malformed plain
# document; a plain export imports back unchanged.
try:
    second.call("[method]memory.import-memories", memory2, json.dumps(scenario["sealedExport"]))
    sealed_import = None
except RuntimeError as e:
    sealed_import = str(e)
reimported = second.call("[method]memory.import-memories", memory2, second.call("[method]memory.export-memories", memory2))

print(json.dumps({
    "tokenizer": second.call("[method]tokenizer.id", tokenizer2),
    "count": second.call("[method]tokenizer.count", tokenizer2, scenario["countText"]),
    "historyLength": len(history),
    "tokensBeforeEnd": usage.tokens,
    "summarySent": field(built.report, "summary"),
    "messagesSent": field(built.report, "messages_sent"),
    "judge": ended.judge,
    "added": ended.added,
    "modelCalls": len(model_calls),
    "retriedAfter503": len(failed_calls) == 2,
    "system": asked.messages[0].content,
    "last": asked.messages[-1].content,
    "hits": [h.text for h in hits],
    "badNamespace": bad,
    "keys": len(kv),
    "damaged": [d["key"] for d in json.loads(second.call("[method]memory.stats", memory2))["damaged"]],
    "locks": {**lock_counts, "heldAtEnd": len(held)},
    "sealedImport": sealed_import,
    "reimported": {name: field(reimported, name) for name in ("added", "updated", "unchanged")},
}))
