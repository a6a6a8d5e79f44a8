#!/usr/bin/python3
"""Instructions per request by layer, from two callgrind dumps of `Benchmarks/request-cost.sh`.

`KEEP=DIR Benchmarks/request-cost.sh LYCEUM SCENARIO N1 N2` leaves DIR/callgrind.N1 and
DIR/callgrind.N2. This script subtracts the first from the second, per function, and divides by
N2 − N1, so that a run's one-off costs cancel as they do in request-cost.sh's total. It prints:

- `self`: each function's own instructions (callees excluded), summed by layer, where a layer is
  chosen by the first pattern below that the demangled name or its object file matches. The layers
  add up to the total.
- `inclusive`: the instructions of chosen Lyceum steps together with everything they call (these
  overlap: a parse is inside a handler), to say what one step of the request path costs in all.
- `top`: the functions with the most instructions of their own.

Usage: Benchmarks/callgrind-layers.py DIR N1 N2 [--top K]
Needs `swift demangle` on PATH.
"""
import argparse
import re
import subprocess
from collections import defaultdict

# (layer, pattern) in order; the first match wins. Matched against "demangled name [object]".
SELF_LAYERS = [
    ("libzmq", r"libzmq"),
    ("kernel entry (libc system call wrappers)", r"^(__libc_send|__libc_recv|__send|__recv|sendto|recvfrom|__poll|poll|epoll_wait|fdatasync|__libc_pwrite|pwrite\w*|__libc_write|write|__libc_read|read|eventfd_\w+|getpid|__GI___\w+|syscall)\b.*libc"),
    ("malloc / free", r"^(malloc|free|_int_malloc|_int_free|realloc|calloc|cfree|malloc_consolidate|unlink_chunk|tcache\w*|_int_realloc|__libc_malloc|__libc_free|_int_free_merge_chunk|_int_free_create_chunk|_int_free_maybe_consolidate)\b"),
    ("memcpy / memmove / memset / memcmp", r"^__mem\w+|^mem(cpy|move|set|cmp)\b|^__strlen"),
    ("Swift retain / release", r"swift_(retain|release|bridgeObjectRetain|bridgeObjectRelease|unknownObject\w*|tryRetain|nonatomic\w*|isUniquelyReferenced\w*)|_swift_release_dealloc|swift_arrayDestroy|swift_arrayInitWithCopy|RefCounts|initializeWithCopy|destroy for|outlined (copy|destroy|retain|release)|assignWithCopy|assignWithTake"),
    ("Swift allocation (objects, boxes)", r"swift_(allocObject|deallocObject|deallocClassInstance|slowAlloc|slowDealloc|allocBox|deallocUninitializedObject|deallocBox)|_ContiguousArrayBuffer\.init|_allocateUninitializedArray|_consumeAndCreateNew"),
    ("Swift exclusivity checks", r"swift_(beginAccess|endAccess)|swift::\w*[Aa]ccess"),
    ("Swift metadata / generics / dynamic casts", r"swift_(getGenericMetadata|getWitnessTable|dynamicCast\w*|conformsToProtocol\w*|getTypeByMangled\w*|checkMetadataState|instantiate\w*|getAssociated\w*)|__swift_instantiateConcreteTypeFromMangledName|swift::|type metadata"),
    ("locks (Mutex, pthread, futex)", r"pthread_mutex|pthread_cond|__lll_lock|futex|_MutexHandle|SleepingLock|Synchronization"),
    ("CRC-32C", r"CRC32C"),
    ("JSON parse (request and record: Scanner, JSONParser, JSONRecordReader)", r"JSON\.Scanner|JSONParser|ScannerValidation|JSONRecordReader|JSONParseError"),
    ("JSON members read (JSONObjectReader, JSONObject, JSONValue)", r"JSONObjectReader|JSONMemberLookup|JSON\.JSONObject|JSON\.JSONValue\b(?!\.write)|JSONReadError"),
    ("JSON write (string escaping, numbers, dates)", r"JSONString|JSONValue\.write|JSONSerializer|writeJSON|journalValue|JSONObjectWriter|serialized|resultJSON|writeSharedMembers|RFC3339"),
    ("Swift String / Array / Dictionary / Hasher (stdlib)", r"libswiftCore|(^|\W)Swift\.|specialized (Array|Dictionary|Set|String|_NativeDictionary|_NativeSet|__RawDictionaryStorage|UnsafeMutablePointer|_ContiguousArrayBuffer|Hasher|Substring)"),
    ("Foundation / dispatch", r"libFoundation|libdispatch|libBlocksRuntime"),
    ("journal (append, record, acknowledger)", r"Journal\."),
    ("books, progress, catalog domain", r"^(.*\W)?(Books|Progress|Catalog|Partitions)\."),
    ("services (request, write path, ledger)", r"LearningServices\."),
    ("broker, ZeroMQ wrapper", r"Majordomo\.|ZeroMQ\.|LyceumLifecycle\.|Access\."),
    ("metrics, events, server wiring", r"Telemetry\.|Events\.|LyceumServer\.|LyceumSupport\.|LyceumLogging\."),
    ("libc other", r"libc\.so|ld-linux"),
]

# Steps of the request path, inclusive of their callees (they overlap).
INCLUSIVE_STEPS = [
    ("broker: one wake-up's routing (BrokerEngine.route)", r"BrokerEngine\.route$"),
    ("broker: receive frames (Socket.receiveMultipart)", r"Socket\.receiveMultipart$"),
    ("broker: send frames (Socket.send*)", r"ZeroMQ\.Socket\.send"),
    ("broker: hand the request to the local service (handleLocally)", r"BrokerEngine\.handleLocally$"),
    ("service: the whole handler (handleWithCommit)", r"(BooksService|ProgressService)\.handleWithCommit|CatalogService\.handle"),
    ("request: Request.init (parse to a tree + envelope members)", r"LearningServices\.Request\.init$"),
    ("request: JSON parse to a tree (JSONParser.parse)", r"JSONParser\.parse$"),
    ("request: read + validate the operation's members (Request.read)", r"LearningServices\.Request\.read$"),
    ("books: BookDraft / BookPatch validation", r"BookDraft\.init|BookPatch\.init"),
    ("service: write path under the lock (ServiceCore.write)", r"ServiceCore\.write$"),
    ("journal: append (record line, CRC, pwrite)", r"Journal\.\w+\.append"),
    ("journal: CRC-32C", r"CRC32C\.update"),
    ("books: the record's JSON (journalValue)", r"Book\.journalValue"),
    ("books: apply the change (decodes the record's JSON again)", r"BookLibrary\.apply$"),
    ("progress: apply the change", r"Progress\w*\.apply$"),
    ("reply: result JSON (resultJSON / writeJSON)", r"resultJSON\.getter|Book\.writeJSON"),
    ("journal: acknowledger thread (sync + hand back)", r"Acknowledger\.\w*(run|loop|sync)\w*$"),
    ("metrics (Telemetry)", r"^Telemetry\.|RequestMetrics\.record"),
    ("events (EventPublisher, BookEvent)", r"EventPublisher\.|BookEvent"),
    ("catalog: get_course", r"CatalogService\.\w*[cC]ourse"),
    ("books: get", r"BooksService\.get$"),
]


def core(function):
    """The qualified name a demangled symbol is about, without specialization, closure and thunk
    wrappers or its signature: `JSON.Scanner.string` for a closure specialized inside it."""
    text = function
    while True:
        stripped = re.sub(r"^(merged |outlined |reabstraction thunk helper from |partial apply forwarder for |partial apply for |"
                          r"specialized |generic specialization <.*?> of |function signature specialization <.*?> of |"
                          r"closure #\d+ \(.*?\) -> .*? in |implicit closure #\d+ .*? in |thunk for )", "", text)
        if stripped == text:
            break
        text = stripped
    text = re.sub(r"^static ", "", text)
    depth, cut = 0, len(text)
    for index, char in enumerate(text):  # the name ends at the signature's first parenthesis outside <>
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
        elif char == "(" and depth <= 0:
            cut = index
            break
    return re.sub(r"<.*>", "", text[:cut]).strip()


def demangle(names):
    if not names:
        return {}
    result = subprocess.run(["swift", "demangle"], input="\n".join(names), capture_output=True, text=True)
    lines = result.stdout.split("\n")
    return {name: (lines[i] if i < len(lines) and lines[i] else name) for i, name in enumerate(names)}


def costs(path, inclusive):
    """{(function, object): instructions} read from a callgrind dump: each function's own cost,
    or with `inclusive` its own plus the cost of the calls it makes (recursive calls counted
    once per level, which the request path hardly has)."""
    names = {"fn": {}, "ob": {}}
    table = defaultdict(int)
    function = obj = callee = None
    after_calls = False

    def name(kind, text):
        match = re.match(r"\((\d+)\)(?: (.*))?$", text)
        if not match:
            return text
        if match.group(2) is not None:
            names[kind][match.group(1)] = match.group(2)
        return names[kind].get(match.group(1), text)

    with open(path) as dump:
        for line in dump:
            line = line.rstrip("\n")
            if line.startswith("ob="):
                obj = name("ob", line[3:]).rsplit("/", 1)[-1]
            elif line.startswith("fn="):
                function = name("fn", line[3:])
            elif line.startswith("cob="):
                name("ob", line[4:])
            elif line.startswith("cfn="):
                callee = name("fn", line[4:])
            elif line.startswith("calls="):
                after_calls = True
            elif line and (line[0].isdigit() or line[0] in "+-*"):
                fields = line.split()
                cost = int(fields[1]) if len(fields) > 1 else 0
                if after_calls:
                    after_calls = False
                    if inclusive and callee != function:
                        table[(function, obj)] += cost
                elif function is not None:
                    table[(function, obj)] += cost
    return table


def difference(directory, n1, n2, inclusive):
    first, second = costs(f"{directory}/callgrind.{n1}", inclusive), costs(f"{directory}/callgrind.{n2}", inclusive)
    names = demangle(sorted({function for function, _ in set(first) | set(second)}))
    per_request = defaultdict(float)
    for key in set(first) | set(second):
        function, obj = key
        per_request[(names.get(function, function), obj)] += (second.get(key, 0) - first.get(key, 0)) / (n2 - n1)
    return per_request


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("directory")
    parser.add_argument("n1", type=int)
    parser.add_argument("n2", type=int)
    parser.add_argument("--top", type=int, default=25)
    arguments = parser.parse_args()

    own = difference(arguments.directory, arguments.n1, arguments.n2, inclusive=False)
    total = sum(own.values())
    layers = defaultdict(float)
    for (function, obj), cost in own.items():
        label = f"{core(function)} [{obj}]"
        layer = next((name for name, pattern in SELF_LAYERS if re.search(pattern, label)), "other")
        layers[layer] += cost
    print(f"self, by layer (instructions per request; total {total:,.0f})")
    print("| layer | instructions | share |\n|---|---:|---:|")
    for layer, cost in sorted(layers.items(), key=lambda item: -item[1]):
        print(f"| {layer} | {cost:,.0f} | {100 * cost / total:.1f}% |")

    whole = difference(arguments.directory, arguments.n1, arguments.n2, inclusive=True)
    print("\ninclusive, by step (overlapping; the largest matching function of each step)")
    print("| step | instructions | share |\n|---|---:|---:|")
    for step, pattern in INCLUSIVE_STEPS:
        matches = [cost for (function, _), cost in whole.items() if re.search(pattern, core(function))]
        if matches:
            print(f"| {step} | {max(matches):,.0f} | {100 * max(matches) / total:.1f}% |")

    print(f"\ntop {arguments.top} functions by own instructions per request")
    for (function, obj), cost in sorted(own.items(), key=lambda item: -item[1])[: arguments.top]:
        print(f"{cost:9,.0f} {100 * cost / total:5.1f}%  {core(function)[:110]} [{obj}]")


if __name__ == "__main__":
    main()
