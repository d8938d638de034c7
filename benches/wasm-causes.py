"""What the wasm holds, by cause (docs/benchmarks.md, "What the wasm holds").

    python3 benches/wasm-causes.py target/wasm32-unknown-unknown/release/agent_memory.wasm [PATTERN]

Reads cargo's output before wasm-bindgen, which keeps the function names
(the package strips them): the size of every function body, classed by its
name, and the data segments. wasm-bindgen's `__wbindgen_describe_*`
functions are left out, as wasm-bindgen removes them from the package.
A function inlined into another counts where it was inlined: an async
method's state machine holds the core code LLVM inlined into it. With a
PATTERN (a regular expression), it also prints the bytes of the functions
whose names match, to compare a part across two builds.
"""

import re
import sys
from collections import Counter


def uleb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def sections(data):
    i = 8
    while i < len(data):
        sid = data[i]
        n, i = uleb(data, i + 1)
        yield sid, data[i : i + n]
        i += n


def imported_functions(body):
    count, j = uleb(body, 0)
    funcs = 0
    for _ in range(count):
        for _ in range(2):  # module and field names
            n, j = uleb(body, j)
            j += n
        kind = body[j]
        j += 1
        if kind == 0:  # function: type index
            _, j = uleb(body, j)
            funcs += 1
        elif kind == 1:  # table: reftype, limits
            flags = body[j + 1]
            _, j = uleb(body, j + 2)
            if flags & 1:
                _, j = uleb(body, j)
        elif kind == 2:  # memory: limits
            flags = body[j]
            _, j = uleb(body, j + 1)
            if flags & 1:
                _, j = uleb(body, j)
        elif kind == 3:  # global: type, mutability
            j += 2
        elif kind == 4:  # tag
            _, j = uleb(body, j + 1)
    return funcs


def function_names(body):
    n, j = uleb(body, 0)
    if body[j : j + n] != b"name":
        return {}
    j += n
    names = {}
    while j < len(body):
        kind = body[j]
        size, j = uleb(body, j + 1)
        sub, j = body[j : j + size], j + size
        if kind == 1:
            count, k = uleb(sub, 0)
            for _ in range(count):
                index, k = uleb(sub, k)
                length, k = uleb(sub, k)
                names[index] = sub[k : k + length].decode("utf8", "replace")
                k += length
    return names


ASYNC = re.compile(r"closure|future|Future|poll")
CAUSES = [
    ("formatting and float conversion", re.compile(r"flt2dec|fmt..float|dec2flt|zmij|fmt3num|fmt..num")),
    ("English stemmer", re.compile(r"rust_stemmers|snowball")),
    ("sorts", re.compile(r"slice4sort|slice..sort|sort..stable|sort..unstable|smallsort|quicksort|driftsort")),
]
GLUE = re.compile(r"js_sys|wasm_bindgen|web_sys|serde_wasm_bindgen|externref|__wbg|^[a-z]+[A-Z_]\w*$")
COLLECTIONS = re.compile(r"hashbrown|btree|collections|raw_vec|dlmalloc|alloc..vec|alloc3vec|alloc..rc|alloc..sync|__rust_alloc|__rdl")


def cause(name):
    for label, pattern in CAUSES:
        if pattern.search(name):
            return label
    ours = "agent_memory" in name
    asynchronous = bool(ASYNC.search(name))
    if "serde" in name and not asynchronous:
        return "serde and serde_json"
    if GLUE.search(name) and not ours:
        return "JS glue: wasm-bindgen, js-sys, web-sys, exports"
    if asynchronous:
        return "async: state machines of async methods and futures"
    if "drop_in_place" in name:
        return "drop glue"
    if COLLECTIONS.search(name):
        return "collections and allocator"
    if ours:
        return "the library's own synchronous code"
    return "other core and std"


def main(path, pattern=None):
    data = open(path, "rb").read()
    imports, bodies, names, data_bytes = 0, [], {}, 0
    for sid, body in sections(data):
        if sid == 2:
            imports = imported_functions(body)
        elif sid == 10:
            count, j = uleb(body, 0)
            for _ in range(count):
                size, j = uleb(body, j)
                bodies.append(size)
                j += size
        elif sid == 11:
            data_bytes = len(body)
        elif sid == 0:
            names.update(function_names(body))
    totals = Counter()
    matching = 0
    for index, size in enumerate(bodies):
        name = names.get(imports + index, "")
        if "wbindgen_describe" not in name:
            totals[cause(name)] += size
            if pattern and re.search(pattern, name):
                matching += size
    totals["data: tables and strings"] = data_bytes
    whole = sum(totals.values())
    print("| cause | raw bytes | share |\n|---|---|---|")
    for label, size in totals.most_common():
        print(f"| {label} | {size:,} | {100 * size / whole:.1f}% |")
    print(f"| all code and data | {whole:,} | |")
    if pattern:
        print(f"functions matching {pattern!r}: {matching:,} bytes")


if __name__ == "__main__":
    main(*sys.argv[1:3])
