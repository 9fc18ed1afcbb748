"""mx.test_utils, which MXNet users' own tests import: the same calls under MXNet 1.9.1 and under
mxplug give the same tolerances, verdicts, exceptions and messages (parity.py)."""
import os

import numpy as np
import pytest

from parity import assert_parity

FC = """
x = mx.sym.var('x')
net = mx.sym.tanh(mx.sym.FullyConnected(x, num_hidden=3, name='fc'))
rng = np.random.RandomState(0)
loc = {'x': rng.randn(2, 4), 'fc_weight': rng.randn(3, 4) * 0.5, 'fc_bias': rng.randn(3)}
"""


def test_tolerances_and_comparisons():
    assert_parity({
        "default tolerances": "tu = mx.test_utils; r = [{str(k): v for k, v in d.items()} for d in "
                              "(tu.default_rtols(), tu.default_atols(), tu.default_numeric_eps())]",
        "get_tols": "tu = mx.test_utils; r = [tu.get_tols(np.ones(2, t1), mx.nd.ones(2, dtype=t2), None, None) "
                    "for t1, t2 in (('float16', 'float32'), ('float64', 'float64'), ('int32', 'float32'))] + "
                    "[tu.get_tols(1.0, np.ones(2, 'float32'), 0.5, {np.dtype('float32'): 0.25})]",
        "get_rtol, get_atol, get_etol": "tu = mx.test_utils; r = (tu.get_rtol(), tu.get_atol(), tu.get_etol(), "
                                        "tu.get_rtol(0.3), tu.get_atol(dtype=np.dtype(np.float16)), tu.get_etol(0.1))",
        "a dtype given as a type is not a key": "r = mx.test_utils.get_atol(dtype=np.float16)",
        "almost equal": "tu = mx.test_utils; r = (tu.almost_equal(np.ones(3), np.ones(3) + 1e-6), "
                        "tu.almost_equal(np.ones(3), np.ones(3) + 1e-3))",
        "assert_almost_equal passes": "mx.test_utils.assert_almost_equal(mx.nd.ones((2, 3)), np.ones((2, 3)) + 1e-5); r = 1",
        "assert_almost_equal fails": "a = np.arange(6, dtype='float32').reshape(2, 3); b = a.copy(); b[1, 2] += 1; b[0, 1] += 0.5\n"
                                     "mx.test_utils.assert_almost_equal(a, b, names=('A', 'B'))",
        "with a share allowed to miss": "a = np.zeros(10); b = a.copy(); b[3] = 1\n"
                                        "mx.test_utils.assert_almost_equal_with_err(a, b, etol=0.2); r = 1",
        "NaN ignored": "a = np.array([1.0, np.nan]); mx.test_utils.assert_almost_equal_ignore_nan(a, np.array([1.0, 5.0])); r = 1",
        "same and same_array": "a = mx.nd.ones((4, 2)); tu = mx.test_utils; r = (tu.same(a.asnumpy(), np.ones((4, 2))), "
                               "tu.same_array(a, a[1:3]), tu.same_array(a, a.copy()), tu.same_array(a, a.reshape((8,))))",
        "assert_exception": "mx.test_utils.assert_exception(mx.nd.ones((2, 3)).reshape, mx.base.MXNetError, (4, 4)); r = 1",
        "assert_exception fails": "mx.test_utils.assert_exception(lambda: 1, ValueError)",
    }, messages={"assert_almost_equal fails": ["exceeds tolerance rtol=1.000000e-04, atol=1.000000e-03 (mismatch 33.333333%)",
                                               "Location of maximum error: (1, 2), A=5.00000000, B=6.00000000"]})


def test_gradient_and_forward_checks():
    assert_parity({
        "numeric gradient": FC + "mx.test_utils.check_numeric_gradient(net, loc, numeric_eps=1e-3, rtol=1e-2, atol=1e-3); r = 1",
        "numeric gradient of a list, in float64": FC + "mx.test_utils.check_numeric_gradient(net, [loc['x'], "
                                                  "loc['fc_weight'], loc['fc_bias']], grad_nodes=['x'], dtype=np.float64); r = 1",
        "a wrong gradient is caught": "x = mx.sym.var('x')\n"
                                      "mx.test_utils.check_numeric_gradient(mx.sym.BlockGrad(x) * x, {'x': np.array([1.0, 2.0])})",
        "forward": FC + "w, b = loc['fc_weight'], loc['fc_bias']; want = np.tanh(loc['x'].dot(w.T) + b)\n"
                        "r = mx.test_utils.check_symbolic_forward(net, loc, [want], rtol=1e-4)[0]",
        "forward fails": FC + "mx.test_utils.check_symbolic_forward(net, loc, [np.zeros((2, 3))])",
        "backward": "x = mx.sym.var('x'); y = mx.sym.var('y'); s = x * y\n"
                    "r = mx.test_utils.check_symbolic_backward(s, {'x': np.array([1., 2.]), 'y': np.array([3., 4.])}, "
                    "[np.array([1., 1.])], {'x': np.array([3., 4.]), 'y': np.array([1., 2.])})",
        "backward with add and null": "x = mx.sym.var('x'); y = mx.sym.var('y'); s = x * y\n"
                                      "g = mx.test_utils.check_symbolic_backward(s, [np.array([1., 2.]), np.array([3., 4.])], "
                                      "[np.array([2., 2.])], [np.array([6., 8.]), np.array([2., 4.])], grad_req=['add', 'null'])\n"
                                      "r = sorted(g)",
        "backward fails": "x = mx.sym.var('x')\n"
                          "mx.test_utils.check_symbolic_backward(x * 2, {'x': np.ones(2)}, [np.ones(2)], {'x': np.ones(2)})",
        "simple_forward": "x = mx.sym.var('x'); r = mx.test_utils.simple_forward(x * 3, x=np.arange(3.0))",
    }, messages={"forward fails": "Error", "backward fails": "EXPECTED_x"})


def test_random_data_samplers_and_scopes():
    assert_parity({
        "rand_ndarray": "a = mx.test_utils.rand_ndarray((3, 4)); b = mx.test_utils.rand_ndarray((2,), dtype='float64')\n"
                        "r = (a.shape, np.dtype(a.dtype).name, b.shape, np.dtype(b.dtype).name)",
        "random shapes": "tu = mx.test_utils; s = [tu.rand_shape_2d(), tu.rand_shape_3d(4, 5, 6), tu.rand_shape_nd(4, 3)]\n"
                         "r = [len(x) for x in s] + [all(1 <= d <= 10 for d in s[0]), all(1 <= d <= 3 for d in s[2])]",
        "random arrays": "tu = mx.test_utils; a = tu.random_arrays((2, 3), (4,)); u = tu.random_uniform_arrays((5,), low=2, high=3)\n"
                         "r = ([x.shape for x in a], a[0].dtype.name, u[0].shape, bool((u[0] >= 2).all() and (u[0] < 3).all()), "
                         "sorted(tu.random_sample(list(range(5)), 5)))",
        "linear-algebra matrices": "tu = mx.test_utils; np.random.seed(0)\n"
                                   "r = (tu.new_orthonormal_matrix_2d(3), tu.new_sym_matrix_with_real_eigvals_2d(3), "
                                   "tu.new_sym_matrix_with_real_eigvals_nd((2, 3, 3)), tu.new_matrix_with_real_eigvals_2d(3), "
                                   "tu.new_matrix_with_real_eigvals_nd((2, 2, 3, 3)), tu.get_identity_mat_batch(3))",
        "helpers": "tu = mx.test_utils; r = (tu.create_vector(4), tu.create_2d_tensor(2, 3), tu.get_identity_mat(3), "
                   "tu.np_reduce(np.arange(24.).reshape(2, 3, 4), (0, 2), True, np.sum), "
                   "tu.collapse_sum_like(np.ones((2, 3, 4)), (3, 1)))",
        "statistics of a sampler": "tu = mx.test_utils; gen = lambda n: mx.nd.random.uniform(0, 1, shape=(n,)).asnumpy()\n"
                                   "buckets, probs = tu.gen_buckets_probs_with_ppf(lambda q: q, 5)\n"
                                   "p = tu.verify_generator(gen, buckets, probs, nsamples=20000, nrepeat=3)\n"
                                   "r = (buckets, probs, len(p), bool(tu.mean_check(gen, 0.5, (1 / 12.) ** 0.5, 20000)), "
                                   "bool(tu.var_check(gen, (1 / 12.) ** 0.5, 20000)))",
        "a wrong sampler is caught": "tu = mx.test_utils; gen = lambda n: mx.nd.random.uniform(0, 0.5, shape=(n,)).asnumpy()\n"
                                     "tu.verify_generator(gen, [(0, 0.5), (0.5, 1)], [0.5, 0.5], nsamples=5000, nrepeat=2)",
        "environment": "import os\nos.environ.pop('MXPLUG_T', None)\n"
                       "with mx.test_utils.environment('MXPLUG_T', '1'):\n    inside = os.environ.get('MXPLUG_T')\n"
                       "with mx.test_utils.environment({'MXPLUG_T': '2', 'HOME': None}):\n    both = (os.environ.get('MXPLUG_T'), "
                       "os.environ.get('HOME'))\nr = (inside, both, os.environ.get('MXPLUG_T'), 'HOME' in os.environ)",
        "default context": "tu = mx.test_utils; before = str(tu.default_context()); tu.set_default_context(mx.cpu(1))\n"
                           "r = (before, str(tu.default_context()), str(mx.nd.ones(1).context), tu.default_dtype().__name__)",
        "symbol structure": "x = mx.sym.var('x'); y = mx.sym.var('y'); tu = mx.test_utils\n"
                            "r = (tu.same_symbol_structure(mx.sym.relu(x), mx.sym.relu(y)), "
                            "tu.same_symbol_structure(mx.sym.relu(x), mx.sym.sigmoid(x)))",
        "retry": "calls = []\n@mx.test_utils.retry(3)\ndef f():\n    calls.append(1)\n    assert len(calls) == 2\n"
                 "f(); r = len(calls)",
        "list_gpus": "r = list(mx.test_utils.list_gpus())",
    }, messages={"a wrong sampler is caught": "Generator test fails, Chi-square p="})


def test_linear_algebra_matrices_have_their_properties(mx):
    np.random.seed(5)
    q = mx.test_utils.new_orthonormal_matrix_2d(4)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-12)
    s = mx.test_utils.new_sym_matrix_with_real_eigvals_nd((3, 4, 4))
    np.testing.assert_allclose(s, np.swapaxes(s, -1, -2), atol=1e-12)
    a = mx.test_utils.new_matrix_with_real_eigvals_nd((2, 5, 5))
    assert a.shape == (2, 5, 5) and not np.allclose(a, np.swapaxes(a, -1, -2))
    eig = np.linalg.eigvals(a)
    assert np.abs(eig.imag).max() < 1e-9 and np.abs(eig.real).max() <= 10


def test_get_im2rec_path(mx, tmp_path, monkeypatch):
    path = mx.test_utils.get_im2rec_path()
    assert os.path.basename(path) == "im2rec.py" and "def parse_args" in open(path).read()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "im2rec.py").write_text("# mine\n")
    monkeypatch.setenv("MY_HOME", str(tmp_path))
    assert mx.test_utils.get_im2rec_path("MY_HOME") == str(tmp_path / "tools" / "im2rec.py")
    monkeypatch.setenv("MY_HOME", str(tmp_path / "tools"))
    with pytest.raises(IOError, match="Could not find path to tools/im2rec.py"):
        mx.test_utils.get_im2rec_path("MY_HOME")
