"""MXNet custom-op libraries load unchanged (issue 25 item 6): a library built against MXNet 1.9's
lib_api.h interface (tests/mxnet_lib, from the project's own minimal lib_api) is loaded by
``mx.library.load`` into MXNet 1.9.1 and into mxplug (through the adapter plugin mxnet_lib), and
the same snippets give the same values, shapes, dtypes and errors on both."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import BUILD, PYTHON_PACKAGES
from parity import assert_parity

LIBS = BUILD / "tests" / "mxnet_lib"
LIB = str(LIBS / "libmxnet_test_ops.so")

# The first case loads the library (a second load in MXNet would register its ops again).
SETUP = """
mx.library.load(%r, verbose=False)
r = None
""" % LIB
PRELUDE = """
a = mx.nd.array(np.arange(6).reshape(2, 3) / 7.0)
b = mx.nd.array(np.arange(12).reshape(3, 4) / 5.0 - 1)
"""


def cases(**snippets):
    out = {"load": SETUP}
    out.update({k: PRELUDE + v for k, v in snippets.items()})
    return out


def test_stateless_op_forward_backward_and_kwargs_match_mxnet():
    assert_parity(cases(
        forward="r = mx.nd.scaled_gemm(a, b, alpha=2.5)",
        forward_default_alpha="r = mx.nd.scaled_gemm(a, b)",
        forward_float64="r = mx.nd.scaled_gemm(a.astype('float64'), b.astype('float64'), alpha=0.5)",
        symbol_lists="""
s = mx.sym.scaled_gemm(mx.sym.var('a'), mx.sym.var('b'), alpha=0.5, name='g')
r = [s.list_arguments(), s.list_outputs(), s.list_auxiliary_states()]""",
        infer_shape="""
s = mx.sym.scaled_gemm(mx.sym.var('a'), mx.sym.var('b'), name='g')
r = s.infer_shape(a=(2, 3), b=(3, 4))""",
        infer_type_partial="""
s = mx.sym.scaled_gemm(mx.sym.var('a'), mx.sym.var('b'), name='g')
r = s.infer_type(a=np.float64)""",
        executor="""
s = mx.sym.scaled_gemm(mx.sym.var('a'), mx.sym.var('b'), alpha=1.5, name='g')
ex = s.simple_bind(mx.cpu(), a=(2, 3), b=(3, 4))
ex.forward(is_train=True, a=a, b=b)
ex.backward(mx.nd.array(np.arange(8).reshape(2, 4) - 3.0))
r = [ex.outputs[0], ex.grad_dict['a'], ex.grad_dict['b']]""",
        autograd="""
a.attach_grad(); b.attach_grad()
with mx.autograd.record():
    y = mx.nd.scaled_gemm(a, b, alpha=2)
y.backward(mx.nd.ones((2, 4)))
r = [y, a.grad, b.grad]""",
        composed="""
x = mx.sym.var('x')
s = mx.sym.sum(mx.sym.scaled_gemm(mx.sym.tanh(x), mx.sym.var('w'), alpha=3))
ex = s.bind(mx.cpu(), {'x': a, 'w': b}, args_grad={'x': mx.nd.zeros((2, 3)), 'w': mx.nd.zeros((3, 4))})
ex.forward(is_train=True)
ex.backward()
r = [ex.outputs[0], ex.grad_dict['x'], ex.grad_dict['w']]""",
    ))


def test_stateful_op_and_mutated_inputs_match_mxnet():
    assert_parity(cases(
        stateful_nd="r = mx.nd.stateful_gemm(a, b, alpha=3)",
        stateful_executor="""
s = mx.sym.stateful_gemm(mx.sym.var('a'), mx.sym.var('b'), alpha=3)
ex = s.simple_bind(mx.cpu(), a=(2, 3), b=(3, 4))
out = []
for step in range(2):
    ex.forward(is_train=True, a=a * (step + 1), b=b)
    ex.backward(mx.nd.ones((2, 4)))
    out += [ex.outputs[0].copy(), ex.grad_dict['a'].copy(), ex.grad_dict['b'].copy()]
r = out""",
        mutated_nd="""
d = mx.nd.array([1., 2., 3.]); avg = mx.nd.array([4., 0., -2.])
y = mx.nd.running_average(d, avg, momentum=0.25)
r = [y, avg]""",
        mutated_symbol="""
s = mx.sym.running_average(mx.sym.var('d'), mx.sym.var('m'), name='r')
r = [s.list_arguments(), s.list_auxiliary_states(), s.list_outputs(), s.infer_shape(d=(3,), m=(3,))]""",
        mutated_executor="""
s = mx.sym.running_average(mx.sym.var('d'), mx.sym.var('m'), momentum=0.5, name='r')
# bind, not simple_bind, whose auxiliary states of a library op crash MXNet 1.9.1; no gradients,
# since the op has no backward.
ex = s.bind(mx.cpu(), {'d': mx.nd.array([0., 4., 8.])}, aux_states={'m': mx.nd.full((3,), 2.0)},
            grad_req='null')
ex.forward(is_train=True)
ex.forward(is_train=True)
r = [ex.outputs[0], ex.aux_dict['m']]""",
    ))


def test_library_errors_match_mxnet():
    assert_parity(cases(
        forward_fails="mx.nd.refuses_to_run(a).wait_to_read()",
        shape_refused="mx.nd.scaled_gemm(a, a).wait_to_read()",
        unknown_kwarg="mx.nd.scaled_gemm(a, b, beta=1).wait_to_read()",
        missing_inputs="mx.sym.scaled_gemm(name='h')",
        bad_version="mx.library.load(%r, verbose=False)" % str(LIBS / "libmxnet_test_ops_v10.so"),
        init_fails="mx.library.load(%r, verbose=False)" % str(LIBS / "libmxnet_test_ops_init_fails.so"),
        not_a_library="mx.library.load(%r, verbose=False)" % str(LIBS / "CMakeFiles"),
        missing_file="mx.library.load('/no/such/libops.so')",
    ), messages={
        "forward_fails": ["Error calling FCompute for custom operator 'refuses_to_run'",
                          "Extension Traceback:", "refuses_to_run was asked to run, and refuses"],
        "shape_refused": ["Error calling InferShape for custom operator 'scaled_gemm'",
                          "gemm: A has 3 columns but B has 2 rows"],
        "unknown_kwarg": ["Error calling ParseAttrs for custom operator 'scaled_gemm'",
                          "unknown argument 'beta'"],
        "missing_inputs": "Not enough argument to call operator scaled_gemm",
        "bad_version": "Library version (10) does not match MXNet version (11)",
        "init_fails": ["Library failed to initialize", "this build of the library refuses to initialize"],
        "not_a_library": "is NOT a library file",
        "missing_file": "load path /no/such/libops.so does NOT exist",
    })


def _run_mxplug(code):
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=300)


def test_gradient_requests_null_and_add_are_honoured_against_numpy():
    # MXNet hands a library's backward every request unheeded; mxplug accumulates 'add' and
    # leaves 'null' gradients alone (Note [lib_api ops as mxplug ops]). NumPy is the oracle.
    code = """
import numpy as np, mxplug as mx
mx.library.load(%r, verbose=False)
A = np.random.RandomState(0).randn(2, 3).astype('float32')
B = np.random.RandomState(1).randn(3, 4).astype('float32')
G = np.random.RandomState(2).randn(2, 4).astype('float32')
s = mx.sym.scaled_gemm(mx.sym.var('a'), mx.sym.var('b'), alpha=2)
ga, gb = mx.nd.ones((2, 3)), mx.nd.full((3, 4), 7.0)
ex = s.bind(mx.cpu(), {'a': mx.nd.array(A), 'b': mx.nd.array(B)}, args_grad={'a': ga, 'b': gb},
            grad_req={'a': 'add', 'b': 'null'})
for _ in range(2):
    ex.forward(is_train=True)
    ex.backward(mx.nd.array(G))
np.testing.assert_allclose(ex.outputs[0].asnumpy(), 2 * A @ B, rtol=1e-5)
np.testing.assert_allclose(ga.asnumpy(), 1 + 2 * (2 * G @ B.T), rtol=1e-5)
np.testing.assert_array_equal(gb.asnumpy(), np.full((3, 4), 7.0, 'float32'))
print('ok')
""" % LIB
    p = _run_mxplug(code)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr


def test_library_is_a_plugin_record_and_a_refused_one_registers_nothing():
    code = """
import mxplug as mx
ops = lambda: {o['name'] for o in mx.library.operators()}
try:
    mx.library.load(%r, verbose=False)
except mx.MXNetError as e:
    assert 'Library version (10) does not match MXNet version (11)' in str(e), str(e)
else:
    raise AssertionError('a version-10 library loaded')
assert 'scaled_gemm' not in ops()
rec = mx.library.load(%r, verbose=False)
assert rec['name'] == 'mxnet_lib:mxnet_test_ops' and rec['version'] == 'lib_api 11', rec
assert rec['ops'] == ['scaled_gemm', 'stateful_gemm', 'running_average', 'refuses_to_run'], rec
assert {'scaled_gemm', 'stateful_gemm', 'running_average', 'refuses_to_run'} <= ops()
assert [o['devices'] for o in mx.library.operators() if o['name'] == 'scaled_gemm'] == [['cpu']]
assert callable(mx.nd.scaled_gemm) and callable(mx.sym.stateful_gemm)
print('ok')
""" % (str(LIBS / "libmxnet_test_ops_v10.so"), LIB)
    p = _run_mxplug(code)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
