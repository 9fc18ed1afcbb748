"""Writes the fuzzers' seeds that are too large to keep in git, into the corpus folders given:
inputs nested or sized where shallow, small seeds never lead the fuzzer (tools/test.sh runs the
fuzzers with no input cap below 8 MiB, so such inputs can also be mutated)."""
import json
import os
import struct
import sys

symbol_json, ndarray_file, recordio = sys.argv[1:4]


def write(folder, name, data):
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


depth = 200_000
write(symbol_json, "deep_top.json", "[" * depth + "]" * depth)
write(symbol_json, "deep_inputs.json",
      '{"nodes": [{"op": "null", "name": "x", "inputs": ' + "[" * depth + "]" * depth + '}], "heads": [[0, 0, 0]]}')
write(symbol_json, "deep_attrs.json",
      '{"nodes": [{"op": "null", "name": "x", "attrs": {"a": ' + "{\"b\": " * depth + "1" + "}" * depth +
      '}}], "heads": [[0, 0, 0]]}')
chain = [{"op": "null", "name": "x", "inputs": []}]
chain += [{"op": "relu", "name": "r%d" % i, "inputs": [[i - 1, 0, 0]]} for i in range(1, 20_000)]
write(symbol_json, "long_chain.json", json.dumps({"nodes": chain, "arg_nodes": [0], "heads": [[19_999, 0, 0]]}))

# .params: shapes whose element counts overflow, and many dimensions.
def params(dims, data=b""):
    array = struct.pack("<IiI", 0xF993FAC9, 0, len(dims)) + b"".join(struct.pack("<q", d) for d in dims)
    array += struct.pack("<iii", 1, 0, 0) + data
    return struct.pack("<QQQ", 0x112, 0, 1) + array + struct.pack("<QQ", 1, 1) + b"w"


write(ndarray_file, "overflow.params", params([2 ** 62, 4], b"\0" * 16))
write(ndarray_file, "zero_huge.params", params([0, 2 ** 62, 2 ** 62]))
write(ndarray_file, "big.params", params([1024, 1024], b"\0" * (4 << 20)))

# RecordIO: one record of 4 MiB, and a header claiming the largest length.
magic = struct.pack("<I", 0xCED7230A)
write(recordio, "large.rec", magic + struct.pack("<I", 4 << 20) + b"\x01" * (4 << 20))
write(recordio, "longest_claim.rec", magic + struct.pack("<I", (1 << 29) - 1) + b"\0" * 64)
