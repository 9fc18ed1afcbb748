"""The oneDNN kernels (float32; Note [oneDNN]) and the plain loops they stand in for, against
PyTorch. Each case runs forward and backward in a fresh process twice: as shipped, with oneDNN's
verbose log on, which must show the case's primitive executing (or, for a configuration left to
the loops, not executing; pooling's forward and BatchNorm also leave to the plugin's loops a
primitive that oneDNN made without generated code, as it does for the plain layout without
AVX-512); and with MXPLUG_ONEDNN=0, which must show no primitive at all. Both runs must match
torch.autograd in float64 on the same float32 inputs."""
import json
import re

import numpy as np
import pytest

import torch  # Debian's python3-torch, installed by tools/install-deps.sh
from conftest import built_with, run_python

torch.set_num_threads(2)
F = torch.nn.functional
rng = np.random.default_rng(11)

# (op, kwargs, input shapes, torch function, the oneDNN primitives expected to run (FullyConnected:
# a matmul forward, inner product backward) or None)
CASES = [
    ("Convolution", dict(kernel=(3, 3), num_filter=8, pad=(1, 1)), [(2, 16, 9, 10), (8, 16, 3, 3), (8,)],
     lambda x, w, b: F.conv2d(x, w, b, padding=1), "convolution"),
    ("Convolution", dict(kernel=(3, 2), num_filter=4, stride=(2, 1), dilate=(1, 2), pad=(1, 0), num_group=2),
     [(2, 4, 7, 6), (4, 2, 3, 2), (4,)],
     lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), dilation=(1, 2), padding=(1, 0), groups=2), "convolution"),
    ("Convolution", dict(kernel=(3, 3), num_filter=4, stride=(2, 2)), [(2, 3, 8, 8), (4, 3, 3, 3), (4,)],
     lambda x, w, b: F.conv2d(x, w, b, stride=2), "convolution"),  # the floor drops a row: pad_r < 0
    ("Convolution", dict(kernel=(3,), num_filter=2, no_bias=True), [(2, 3, 8), (2, 3, 3)],
     lambda x, w: F.conv1d(x, w), "convolution"),
    ("Convolution", dict(kernel=(2, 2, 2), num_filter=2, pad=(1, 0, 1)), [(1, 2, 3, 4, 3), (2, 2, 2, 2, 2), (2,)],
     lambda x, w, b: F.conv3d(x, w, b, padding=(1, 0, 1)), "convolution"),
    ("FullyConnected", dict(num_hidden=5), [(4, 3, 2), (5, 6), (5,)],
     lambda x, w, b: F.linear(x.flatten(1), w, b), "matmul inner_product"),
    ("FullyConnected", dict(num_hidden=3, no_bias=True), [(7, 4), (3, 4)],
     lambda x, w: F.linear(x, w), "matmul inner_product"),
    ("FullyConnected", dict(num_hidden=4, flatten=False), [(2, 3, 5), (4, 5), (4,)],
     lambda x, w, b: F.linear(x, w, b), "matmul inner_product"),
    # 8.4 MFLOP, above kSerialFlops: made and run on the whole OpenMP team (Note [Serial primitives])
    ("FullyConnected", dict(num_hidden=256), [(64, 256), (256, 256), (256,)],
     lambda x, w, b: F.linear(x, w, b), "matmul inner_product"),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1)), [(2, 3, 7, 6)],
     lambda x: F.max_pool2d(x, 3, 2, 1), "pooling"),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg"), [(2, 3, 7, 7)],
     lambda x: F.avg_pool2d(x, 3, 2, 1), "pooling"),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", count_include_pad=False),
     [(2, 3, 7, 6)], lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), "pooling"),
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pooling_convention="full"), [(2, 3, 8, 8)],
     lambda x: F.max_pool2d(x, 3, 2, ceil_mode=True), "pooling"),
    ("Pooling", dict(global_pool=True, pool_type="avg"), [(2, 3, 5, 4)],
     lambda x: x.mean(dim=(2, 3), keepdim=True), "pooling"),
    ("Pooling", dict(kernel=(2, 2, 2), stride=(2, 2, 2)), [(1, 2, 4, 4, 4)], lambda x: F.max_pool3d(x, 2), "pooling"),
    # The last window of the full convention runs past the padding: MXNet divides it by its
    # clipped size, oneDNN would not, so the loops take it.
    ("Pooling", dict(kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="avg", pooling_convention="full"),
     [(1, 2, 6, 6)], lambda x: F.avg_pool2d(F.pad(x, (1, 1, 1, 1)), 3, 2, ceil_mode=True) *
     (9 / F.avg_pool2d(F.pad(torch.ones_like(x), (1, 1, 1, 1), value=1.0), 3, 2, ceil_mode=True) / 9), None),
    ("Pooling", dict(kernel=(2,), pool_type="sum"), [(2, 3, 8)], lambda x: F.avg_pool1d(x, 2, 1) * 2, None),
    ("LRN", dict(nsize=3, alpha=0.001, beta=0.75, knorm=2), [(2, 5, 3, 3)],
     lambda x: F.local_response_norm(x, 3, 0.001, 0.75, 2), "lrn"),
    ("softmax", dict(axis=1), [(2, 5, 3)], lambda x: torch.softmax(x, 1), "softmax"),
    ("log_softmax", dict(), [(4, 6)], lambda x: torch.log_softmax(x, -1), "softmax"),
    ("softmax", dict(temperature=3.0), [(4, 6)], lambda x: torch.softmax(x / 3.0, -1), None),
    # Activation's backward reads its output only (oneDNN's *_use_dst_for_bwd algorithms); softrelu
    # and softsign have no such algorithm and run the loops.
    ("Activation", dict(act_type="relu"), [(3, 4, 5)], torch.relu, "eltwise"),
    ("Activation", dict(act_type="relu"), [(4, 128, 130)], torch.relu, "eltwise"),  # above kSerialElements
    ("Activation", dict(act_type="sigmoid"), [(2, 7)], torch.sigmoid, "eltwise"),
    ("Activation", dict(act_type="tanh"), [(2, 3, 2, 2)], torch.tanh, "eltwise"),
    ("Activation", dict(act_type="softrelu"), [(4, 5)], F.softplus, None),
    ("BatchNorm", dict(fix_gamma=False, eps=1e-3), [(4, 3, 5, 2), (3,), (3,), (3,), (3,)],
     lambda x, g, b, m, v: F.batch_norm(x, None, None, g, b, training=True, eps=1e-3), "batch_normalization"),
    ("BatchNorm", dict(fix_gamma=True), [(6, 4), (4,), (4,), (4,), (4,)],
     lambda x, g, b, m, v: F.batch_norm(x, None, None, torch.ones_like(g), b, training=True, eps=1e-3),
     "batch_normalization"),
]

# Runs every case in one process: forward in training mode and backward, printing a marker
# before each case so oneDNN's verbose lines can be told apart.
SCRIPT = r"""
import json, os, sys
import numpy as np
import mxplug as mx
cases = json.load(open(os.environ["CASES"]))
for i, (op, kw, arrays, og) in enumerate(cases):
    os.write(1, b"CASE %d\n" % i)
    inputs = [mx.nd.array(np.array(a, dtype=np.float32)) for a in arrays]
    outs = mx._core.invoke_train(op, inputs, kw)
    grads = mx._core.invoke_backward(op, kw, inputs, outs, [mx.nd.array(np.array(og, dtype=np.float32))])
    result = {"out": outs[0].asnumpy().tolist(), "grads": [g.asnumpy().tolist() for g in grads]}
    os.write(1, ("RESULT %d %s\n" % (i, json.dumps(result))).encode())
"""


def run_cases(env, tmp_path):
    data = []
    for op, kw, shapes, fn, _ in CASES:
        arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        if op == "BatchNorm":
            arrays[1] = (arrays[1] + 2).astype(np.float32)  # gamma away from zero
            arrays[4] = np.abs(arrays[4]) + 1  # a valid moving variance
        ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
        ref = fn(*ts)
        og = rng.standard_normal(tuple(ref.shape)).astype(np.float32)
        ref.backward(torch.tensor(og, dtype=torch.float64))
        data.append((arrays, og, ref.detach().numpy(), [t.grad for t in ts]))
    payload = json.dumps([[c[0], c[1], [a.tolist() for a in d[0]], d[1].tolist()] for c, d in zip(CASES, data)])
    (tmp_path / "cases.json").write_text(payload)
    p = run_python(SCRIPT, extra_env=dict(env, CASES=str(tmp_path / "cases.json")))
    assert p.returncode == 0, p.stderr
    primitives, unvectorised, results, case = {}, {}, {}, None
    for line in p.stdout.splitlines():
        if line.startswith("CASE "):
            case = int(line.split()[1])
            primitives[case], unvectorised[case] = set(), set()
        elif line.startswith("RESULT "):
            _, i, body = line.split(" ", 2)
            results[int(i)] = json.loads(body)
        elif m := re.match(r"(?:onednn|dnnl)_verbose,exec,cpu,(\w+?)(?:_v2)?,", line):
            if m.group(1) != "reorder":
                primitives[case].add(m.group(1))
        elif m := re.match(r"(?:onednn|dnnl)_verbose,create:\w+,cpu,(\w+?)(?:_v2)?,([\w:]+),", line):
            if "jit" not in m.group(2) and not m.group(2).startswith("brg"):  # as Primitive::IsJit
                unvectorised[case].add(m.group(1))
    return data, primitives, unvectorised, results


def check(data, results):
    for i, (case, (arrays, og, ref, ref_grads)) in enumerate(zip(CASES, data)):
        name = "case %d (%s %s)" % (i, case[0], case[1])
        out = np.array(results[i]["out"])
        scale = max(1.0, np.abs(ref).max())
        np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5 * scale, err_msg=name)
        for j, (g, r) in enumerate(zip(results[i]["grads"], ref_grads)):
            if case[0] == "BatchNorm" and j >= 3:
                continue  # moving statistics have no gradient
            r = np.zeros_like(arrays[j]) if r is None else r.numpy()  # fix_gamma: gamma's gradient is 0
            scale = max(1.0, np.abs(r).max())
            np.testing.assert_allclose(np.array(g), r, rtol=1e-4, atol=1e-4 * scale,
                                       err_msg="%s, gradient of input %d" % (name, j))


def test_onednn_kernels_run_where_expected_and_match_torch(tmp_path):
    if not built_with("onednn"):
        pytest.skip("built without oneDNN: CMake found no libdnnl-dev (tools/install-deps.sh installs it)")
    data, primitives, unvectorised, results = run_cases({"DNNL_VERBOSE": "2", "ONEDNN_VERBOSE": "2"}, tmp_path)
    check(data, results)
    for i, case in enumerate(CASES):
        expected = set(case[4].split()) if case[4] else set()
        # Where oneDNN has only a C++ loop for the plain layout, the plugin's own loops run.
        declinable = {"pooling", "batch_normalization"} & unvectorised[i]
        assert primitives[i] <= expected and expected - primitives[i] <= declinable, (
            "case %d (%s %s): oneDNN ran %s, expected %s (made without generated code: %s)" % (
                i, case[0], case[1], sorted(primitives[i]), sorted(expected), sorted(unvectorised[i])))


def test_plain_kernels_match_torch_with_onednn_off(tmp_path):
    data, primitives, _, results = run_cases({"DNNL_VERBOSE": "1", "ONEDNN_VERBOSE": "1", "MXPLUG_ONEDNN": "0"},
                                             tmp_path)
    check(data, results)
    assert all(not p for p in primitives.values()), primitives


# An LSTM on oneDNN (Note [RNN on oneDNN]): mx.nd.RNN in inference; under
# record(train_mode=False) with a backward, which must recompute the trace the inference primitive
# did not keep; and in training, forward and backward on oneDNN's primitives. Markers tell the
# verbose lines of the three apart.
LSTM_SCRIPT = r"""
import json, os
import numpy as np
import mxplug as mx
c = json.load(open(os.environ["LSTM"]))
args = [mx.nd.array(np.array(a, dtype=np.float32)) for a in c["arrays"]]
os.write(1, b"INFER\n")
result = {"infer": [o.asnumpy().tolist() for o in mx.nd.RNN(*args, **c["kw"])]}
for a in args:
    a.attach_grad()
for phase, train_mode in ((b"RECORD", False), (b"TRAIN", True)):
    os.write(1, phase + b"\n")
    with mx.autograd.record(train_mode=train_mode):
        y = mx.nd.RNN(*args, **c["kw"])[0]
    y.backward(mx.nd.array(np.array(c["og"], dtype=np.float32)))
    result[phase.decode()] = [a.grad.asnumpy().tolist() for a in args]
os.write(1, ("RESULT " + json.dumps(result) + "\n").encode())
"""


@pytest.mark.parametrize("layers,bidirectional", [(1, False), (2, True)])
def test_lstm_runs_on_onednn_and_matches_torch(tmp_path, layers, bidirectional):
    """The packed parameters are read as oneDNN's weights (MXNet's and PyTorch's gate order i, f,
    g, o; the two biases summed) and its weight gradients written back into the packed gradient,
    a layer's input is I wide for the first and D H after; outputs, last states and the gradients
    after record(train_mode=False) and in training match torch.nn.LSTM in float64."""
    if not built_with("onednn"):
        pytest.skip("built without oneDNN: CMake found no libdnnl-dev (tools/install-deps.sh installs it)")
    T, N, I, H = 5, 3, 4, 6
    D = 2 if bidirectional else 1
    lstm = torch.nn.LSTM(I, H, num_layers=layers, bidirectional=bidirectional).double()
    suffixes = [""] + (["_reverse"] if bidirectional else [])
    with torch.no_grad():
        for p in lstm.parameters():
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32), dtype=torch.float64))
    names = [n % (l, s) for l in range(layers) for s in suffixes for n in ("weight_ih_l%d%s", "weight_hh_l%d%s")]
    names += [n % (l, s) for l in range(layers) for s in suffixes for n in ("bias_ih_l%d%s", "bias_hh_l%d%s")]
    params = dict(lstm.named_parameters())
    packed = torch.cat([params[n].reshape(-1) for n in names]).detach()
    x = rng.standard_normal((T, N, I)).astype(np.float32)
    h0, c0 = (rng.standard_normal((layers * D, N, H)).astype(np.float32) for _ in range(2))
    og = rng.standard_normal((T, N, D * H)).astype(np.float32)
    ts = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in (x, h0, c0)]
    y, (hn, cn) = lstm(ts[0], (ts[1], ts[2]))
    y.backward(torch.tensor(og, dtype=torch.float64))
    want_grads = [ts[0].grad, torch.cat([params[n].grad.reshape(-1) for n in names]), ts[1].grad, ts[2].grad]

    kw = dict(state_size=H, num_layers=layers, mode="lstm", bidirectional=bidirectional, state_outputs=True)
    (tmp_path / "lstm.json").write_text(json.dumps(
        {"arrays": [x.tolist(), packed.numpy().astype(np.float32).tolist(), h0.tolist(), c0.tolist()],
         "kw": kw, "og": og.tolist()}))
    p = run_python(LSTM_SCRIPT, extra_env={"LSTM": str(tmp_path / "lstm.json"), "DNNL_VERBOSE": "1",
                                           "ONEDNN_VERBOSE": "1"})
    assert p.returncode == 0, p.stderr
    phase, ran, result = None, {"INFER": set(), "RECORD": set(), "TRAIN": set()}, None
    for line in p.stdout.splitlines():
        if line in ran:
            phase = line
        elif line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
        elif m := re.match(r"(?:onednn|dnnl)_verbose,exec,cpu,(\w+),[^,]*,(\w+),", line):
            ran[phase].add((m.group(1), m.group(2)))
    for phase in ("INFER", "RECORD"):
        assert ("rnn", "forward_inference") in ran[phase], (phase, ran[phase])
    assert {("rnn", "forward_training"), ("rnn", "backward")} <= ran["TRAIN"], ran["TRAIN"]
    for got, want in zip(result["infer"], (y, hn, cn)):
        np.testing.assert_allclose(np.array(got), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    for phase in ("RECORD", "TRAIN"):
        for j, (got, want) in enumerate(zip(result[phase], want_grads)):
            scale = max(1.0, want.abs().max().item())
            np.testing.assert_allclose(np.array(got), want.numpy(), rtol=1e-4, atol=1e-4 * scale,
                                       err_msg="%s: gradient of input %d" % (phase, j))
