# agent-memory's component in wasmtime from Python: a dict as the store, no model.
#   pip install wasmtime==50.0.1; python host.py agent_memory_component.wasm
import sys
from wasmtime import Engine, Store, WasiConfig
from wasmtime.component import Component, Linker, Record, Variant

kv, engine = {}, Engine()
linker = Linker(engine)
linker.add_wasip2()
with linker.root() as root:
    with root.add_instance("agent-memory:core/store@0.1.0") as s:
        s.add_func("get", lambda _, k: Variant("ok", kv.get(k)))
        s.add_func("put-many", lambda _, items: kv.update(dict(items)))
        s.add_func("delete-many", lambda _, keys: [kv.pop(k, None) for k in keys] and None)
        s.add_func("list-prefix", lambda _, p: [(k, v) for k, v in kv.items() if k.startswith(p)])
    with root.add_instance("agent-memory:core/locks@0.1.0") as l:  # one instance on this store: grant at once
        l.add_func("acquire", lambda _, name: None)
        l.add_func("release", lambda _, name: None)
    with root.add_instance("agent-memory:core/llm@0.1.0") as m:
        m.add_func("complete", lambda _, req: Variant("err", rec(message="no model", status=404, retry_after_ms=None)))
    with root.add_instance("agent-memory:core/embedder@0.1.0") as e:
        e.add_func("embed", lambda _, texts: "no embedder")

def rec(**fields):  # a WIT record; `_` in a name stands for WIT's `-`
    r = Record()
    for k, v in fields.items(): setattr(r, k.replace("_", "-"), v)
    return r

store = Store(engine)
store.set_wasi(WasiConfig())
instance = linker.instantiate(store, Component.from_file(engine, sys.argv[1]))
api = instance.get_export_index(store, "agent-memory:core/api@0.1.0")
def call(name, *args):
    f = instance.get_func(store, instance.get_export_index(store, name, api))
    out = f(store, *args); f.post_return(store)
    return out.payload if isinstance(out, Variant) else out

memory = call("[static]memory.open", rec(namespace="user-42", session_id="chat", use_llm=False, embed_model=None,
                                         context_window=None, reserved_for_response=None, max_tokens=None))
call("[method]memory.remember", memory, rec(content="Prefers Rust for systems code", scope=None, importance=None, metadata=[]))
call("[method]memory.add", memory, rec(role="user", content="Which language for firmware?", tool_calls=[], tool_call_id=None, metadata=[], timestamp=None))
ctx = call("[method]memory.build-context", memory, rec(query=None, recall="language for firmware", system="Be brief.", tools_json=None))
print(ctx.messages[0].content)
