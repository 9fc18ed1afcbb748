"""MXNet 1.x scripts run unchanged: the same snippets under MXNet 1.9.1 and under mxplug give the
same values, shapes, dtypes and exception classes (parity.py). Each test is one family of what
MXNet users' scripts do."""
import numpy as np

from parity import assert_parity

CSV = """
import os, tempfile
d = tempfile.mkdtemp()
path = os.path.join(d, "data.csv")
with open(path, "w") as f:
    f.write("1,2,3\\n4,5,16777217\\n7,8,9\\n10,11,12\\n")
"""


def test_random_functions_at_the_top_level_and_on_symbols():
    assert_parity({
        "mx.random.uniform": "a = mx.random.uniform(-1, 1, shape=(2, 3)); r = (a.shape, np.dtype(a.dtype).name, "
                             "bool(((a.asnumpy() >= -1) & (a.asnumpy() < 1)).all()))",
        "mx.random.normal": "a = mx.random.normal(0, 1, shape=(4,), dtype='float64'); r = (a.shape, np.dtype(a.dtype).name)",
        "mx.random.randint": "a = mx.random.randint(0, 5, shape=(20,)); r = (np.dtype(a.dtype).name, "
                             "bool(((a.asnumpy() >= 0) & (a.asnumpy() < 5)).all()))",
        "mx.sym.random.uniform": "s = mx.sym.random.uniform(low=0, high=2, shape=(2, 5)); "
                                 "r = (s.list_arguments(), s.infer_shape()[1])",
        "mx.random.randn": "r = mx.random.randn(2, 3, loc=1).shape",
        "mx.nd.random.shuffle": "a = mx.nd.random.shuffle(mx.nd.arange(6)); r = sorted(a.asnumpy().tolist())",
        "the samplers' other names": "r = [(a.shape, np.dtype(a.dtype).name) for a in (mx.nd.uniform(shape=(2, 3)), "
                                     "mx.nd.random_uniform(low=2, high=3, shape=(4,)), mx.nd.normal(shape=(1, 2)), "
                                     "mx.nd.random_normal(loc=1, shape=(3,), dtype='float64'), "
                                     "mx.nd.random_randint(low=0, high=4, shape=(5,)), "
                                     "mx.nd.sample_multinomial(mx.nd.array([[0.5, 0.5], [0.1, 0.9]]), shape=3))]",
        "their ranges": "r = (bool((mx.nd.random_uniform(low=2, high=3, shape=(100,)).asnumpy() >= 2).all()), "
                        "sorted(mx.nd.shuffle(mx.nd.arange(5)).asnumpy().tolist()), "
                        "sorted(mx.sym.shuffle(mx.sym.var('x')).eval(x=mx.nd.arange(4))[0].asnumpy().tolist()))",
        "on symbols": "r = [s.infer_shape()[1] for s in (mx.sym.uniform(shape=(2, 2)), mx.sym.random_normal(shape=(3,)), "
                      "mx.sym.normal(shape=(1,)), mx.sym.random_randint(low=0, high=3, shape=(2,)))]",
    })


def test_ndarray_storage_copies_and_reshape_errors():
    assert_parity({
        "stype": "r = mx.nd.ones((2, 2)).stype",
        "tostype": "r = mx.nd.ones((2, 2)).tostype('default')",
        "flatten copies": "a = mx.nd.ones((2, 3, 4)); b = a.flatten(); b[:] = 5; r = (a, b)",
        "reshape to a wrong size": "r = mx.nd.ones((2, 3)).reshape((4, 4))",
        "numpy scalars": "a = mx.nd.ones((2,)); r = (a * np.float32(2), a + np.int64(1), np.float64(3) - a, "
                         "mx.nd.full((2,), np.float64(3)))",
        "slice_axis to the end": "r = mx.nd.slice_axis(mx.nd.arange(6).reshape((2, 3)), axis=1, begin=1, end=None)",
        "broadcast_axis": "r = mx.nd.broadcast_axis(mx.nd.ones((1, 3)), axis=0, size=2)",
    })


def test_ndarray_arithmetic_functions_and_fluent_methods():
    assert_parity({
        "add": "a = mx.nd.array([1, 2]); b = mx.nd.array([[3], [4]]); r = (mx.nd.add(a, b), mx.nd.add(a, 2), mx.nd.add(3, a))",
        "the others": "a = mx.nd.array([1, 5]); b = mx.nd.array([4, 2]); r = [f(a, b) for f in (mx.nd.subtract, "
                      "mx.nd.multiply, mx.nd.divide, mx.nd.modulo, mx.nd.power, mx.nd.maximum, mx.nd.minimum, "
                      "mx.nd.equal, mx.nd.not_equal, mx.nd.greater, mx.nd.greater_equal, mx.nd.lesser, "
                      "mx.nd.lesser_equal, mx.nd.logical_and, mx.nd.logical_or, mx.nd.logical_xor)]",
        "true_divide": "r = mx.nd.true_divide(mx.nd.array([3, 4]), 2)",
        "fluent": "a = mx.nd.array([[0.5, -0.25, 0.1]]); r = (a.arcsin(), a.arctan(), a.broadcast_axes(axis=0, size=2), "
                  "a.square(), a.sign(), a.expm1(), a.log1p(), a.reciprocal(), a.relu(), a.sigmoid(), a.softmax(), "
                  "a.slice_axis(axis=1, begin=0, end=2), a.split(num_outputs=3, axis=1), a.rint(), a.fix(), "
                  "a.trunc(), a.tanh(), a.flatten(), a.expand_dims(axis=0), a.squeeze(), a.reshape((3, 1)))",
    })


def test_symbol_functions_fluent_methods_pickling_and_errors():
    assert_parity({
        "maximum": "x = mx.sym.var('x'); y = mx.sym.var('y'); r = [s.eval(x=mx.nd.array([1, 5]), y=mx.nd.array([4, 2]))[0] "
                   "for s in (mx.sym.maximum(x, y), mx.sym.minimum(x, 3), mx.sym.pow(x, 2), mx.sym.power(2, x), "
                   "mx.sym.hypot(x, y))]",
        "reshape": "s = mx.sym.var('x').reshape((2, 3)); r = s.infer_shape(x=(3, 2))[1]",
        "fluent": "x = mx.sym.var('x'); r = [s.eval(x=mx.nd.array([[0.5, -0.25]]))[0] for s in (x.abs(), x.exp(), "
                  "x.sum(axis=1), x.transpose(), x.expand_dims(axis=0), x.flatten(), x.clip(0, 0.3), x.sqrt(), "
                  "x.square(), x.arcsin(), x.slice_axis(axis=1, begin=0, end=1), x.softmax(), x.max(), x.argmax(axis=1))]",
        "pickle": "s = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=3, name='fc'); t = pickle.loads(pickle.dumps(s)); "
                  "r = (t.tojson() == s.tojson(), t.list_arguments())",
        "deepcopy": "s = mx.sym.var('x') * 2; t = copy.deepcopy(s); r = (t.tojson() == s.tojson(), t.list_arguments())",
        "bool": "r = bool(mx.sym.var('x'))",
        "positional values fill the inputs first": "r = mx.sym.FullyConnected(mx.sym.var('a'), 3, num_hidden=2)",
        "then the parameters": "x = mx.sym.var('x'); r = mx.sym.clip(x, 0, 0.3).eval(x=mx.nd.array([-1, 0.2, 1]))[0]",
        "get_children of a variable used twice": "x = mx.sym.var('x'); r = (x + x).get_children().list_outputs()",
    })


def test_legacy_partial_shape_and_type_inference():
    assert_parity({
        "0 is unknown both ways": "x = mx.sym.var('x'); y = mx.sym.var('y'); r = (x + y).infer_shape_partial(x=(0, 10), y=(5, 0))",
        "full inference from partial": "x = mx.sym.var('x'); y = mx.sym.var('y'); r = (x + y).infer_shape(x=(0, 10), y=(5, 0))",
        "infer_type_partial": "x = mx.sym.var('x'); y = mx.sym.var('y'); r = mx.sym.Group([x * 2, y]).infer_type_partial(x='float64')",
    })


def test_engine_operator_registry_and_gradient_blocking():
    assert_parity({
        "engine.bulk": "with mx.engine.bulk(10):\n    r = mx.nd.ones((2,)) + 1",
        "operator arguments": "a = mx.operator.get_operator_arguments('FullyConnected'); r = (a.narg, a.names)",
        "bulk size": "r = (mx.engine.set_bulk_size(4), mx.engine.set_bulk_size(0))",
        "registered operators": "ops = mx.operator.get_all_registered_operators(); "
                                "r = all(n in ops for n in ('FullyConnected', 'Convolution', 'broadcast_add', 'softmax'))",
        "BlockGrad needs no head gradient": "x = mx.sym.var('x'); e = mx.sym.Group([mx.sym.BlockGrad(x * 2), mx.sym.MakeLoss(x * 3)])"
                                            ".simple_bind(mx.cpu(), x=(2,)); e.forward(is_train=True, x=mx.nd.ones((2,))); "
                                            "e.backward(); r = e.grad_dict['x']",
        "lr_mult on an op": "s = mx.sym.FullyConnected(mx.sym.var('x'), num_hidden=2, lr_mult=2.0, name='fc'); "
                            "r = s.attr_dict()",
    })


def test_pooling_same_convention():
    """'same' pooling: ceil(x / stride) windows from the first element, the last ones clipped to the
    data; 1-d only and without pad, as in MXNet. MXNet 1.9.1's oneDNN cannot make a primitive for
    it, and its check of pad reads three values, so MXNet's side runs its own kernels
    (MXNET_MKLDNN_ENABLED=0) with pad=(0, 0, 0)."""
    x = "x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 10)); "
    pool = "mx.nd.Pooling(x, pad=(0, 0, 0), pooling_convention='same', "
    grad = ("x.attach_grad()\nwith mx.autograd.record():\n    y = " + pool + "kernel=(3,), stride=(2,), pool_type='%s')\n"
            "y.backward(mx.nd.arange(y.size).reshape(y.shape)); r = x.grad")
    assert_parity({
        "max 3/3": x + "r = " + pool + "kernel=(3,), stride=(3,))",
        "max 4/3": x + "r = " + pool + "kernel=(4,), stride=(3,))",
        "max 2/1": x + "r = " + pool + "kernel=(2,), stride=(1,))",
        "avg 3/3": x + "r = " + pool + "kernel=(3,), stride=(3,), pool_type='avg')",
        "sum 5/2": x + "r = " + pool + "kernel=(5,), stride=(2,), pool_type='sum')",
        "lp 3/2": x + "r = " + pool + "kernel=(3,), stride=(2,), pool_type='lp', p_value=2)",
        "max backward": x + grad % "max",
        "avg backward": x + grad % "avg",
        "shape": "r = mx.sym.Pooling(mx.sym.var('x'), kernel=(3,), stride=(2,), pad=(0, 0, 0), "
                 "pooling_convention='same').infer_shape(x=(2, 2, 11))",
        "2-d": "r = mx.nd.Pooling(mx.nd.ones((1, 1, 5, 5)), kernel=(2, 2), stride=(2, 2), pooling_convention='same')",
        "pad": x + "r = mx.nd.Pooling(x, kernel=(3,), pad=(1, 0, 0), pooling_convention='same')",
    }, messages={"2-d": "Currently 'same' supports Max Pooling 1-D",
                 "pad": "Same pooling convention disables the use of pad parameter."},
       rtol=1e-5, mxnet_env={"MXNET_MKLDNN_ENABLED": "0", "MXNET_STORAGE_FALLBACK_LOG_VERBOSE": "0"})


def test_csv_iterator_integers_and_unknown_keywords():
    assert_parity({
        "int32": CSV + "it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=2, dtype='int32'); r = next(iter(it)).data[0]",
        "int64": CSV + "it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=2, dtype='int64'); r = next(iter(it)).data[0]",
        "unknown keywords": CSV + "it = mx.io.CSVIter(data_csv=path, data_shape=(3,), batch_size=4, no_such_argument=3); "
                                  "r = next(iter(it)).data[0]",
    })


def test_ndarray_methods_on_symbols_and_in_place_slices():
    assert_parity({
        "asnumpy": "mx.sym.var('x').asnumpy()",
        "asscalar": "mx.sym.var('x').asscalar()",
        "copy": "mx.sym.var('x').copy()",
        "wait_to_read": "mx.sym.var('x').wait_to_read()",
        "as_in_context": "mx.sym.var('x').as_in_context()",
        "backward": "mx.sym.var('x').backward()",
        "detach": "mx.sym.var('x').detach()",
        "gradient": "mx.sym.var('x').gradient(['x'])",
        "astype": "s = mx.sym.var('x').astype('float16'); r = (s.infer_type(x='float32')[1], "
                  "s.eval(x=mx.nd.array([1.5, 2]))[0])",
        "slice_assign": "a = mx.nd.zeros((3, 4)); b = a.slice_assign(mx.nd.ones((2, 2)), (0, 1), (2, 3), (None, None)); "
                        "r = (a, b is a)",
        "slice_assign_scalar": "a = mx.nd.zeros((3, 4)); a.slice_assign_scalar(7, (1, None), (3, None), (1, 2)); r = a",
        "kvstore broadcast": "kv = mx.kv.create('local'); out = [mx.nd.zeros((2,)), mx.nd.zeros((2,))]\n"
                             "kv.broadcast('w', mx.nd.array([1, 2]), out=out); r = out",
    }, messages={"asnumpy": "Function asnumpy is not implemented for Symbol and only available in NDArray.",
                 "gradient": "not implemented"})


METRIC_DATA = """
rng = np.random.RandomState(4)
batches = []
for n in (6, 9, 5):
    p = rng.rand(n, 2); p /= p.sum(axis=1, keepdims=True)
    batches.append(([mx.nd.array(rng.randint(0, 2, n))], [mx.nd.array(p)]))
multi = []
for n in (7, 8):
    p = rng.rand(n, 4)
    multi.append(([mx.nd.array(rng.randint(0, 4, n))], [mx.nd.array(p)]))
reg = [([mx.nd.array(rng.rand(5))], [mx.nd.array(rng.rand(5))]) for _ in range(3)]
def run(metric, data):
    values = []
    for labels, preds in data:
        metric.update(labels, preds)
        values.append((metric.get(), metric.get_global()))
    metric.reset_local()
    values.append(metric.get_global())
    return values
"""


def test_classification_and_correlation_metrics():
    assert_parity({
        "F1": METRIC_DATA + "r = [run(mx.metric.F1(average=a), batches) for a in ('macro', 'micro')]",
        "MCC": METRIC_DATA + "r = [run(mx.metric.MCC(average=a), batches) for a in ('macro', 'micro')]",
        "PCC": METRIC_DATA + "r = (run(mx.metric.PCC(), batches), run(mx.metric.create('pcc'), multi))",
        "PearsonCorrelation": METRIC_DATA + "r = [run(mx.metric.PearsonCorrelation(average=a), reg) for a in "
                                            "('macro', 'micro')] + [run(mx.metric.create('pearsonr'), reg)]",
        "NegativeLogLikelihood": METRIC_DATA + "r = (run(mx.metric.NegativeLogLikelihood(), batches), "
                                               "run(mx.metric.create('nll_loss'), multi))",
        "binary only": METRIC_DATA + "mx.metric.MCC().update(*multi[0])",
    }, messages={"binary only": "currently only supports binary classification."})


OPTIMIZER_STEPS = """
rng = np.random.RandomState(5)
w0 = rng.randn(3, 4).astype('float32')
grads = [rng.randn(3, 4).astype('float32') for _ in range(3)]
def steps(name, **kw):
    opt = mx.optimizer.create(name, **kw)
    w = mx.nd.array(w0)
    state = opt.create_state(0, w)
    for g in grads:
        opt.update(0, w, mx.nd.array(g), state)
    return w
"""


def test_optimizers_written_in_array_arithmetic():
    assert_parity({
        "adadelta": OPTIMIZER_STEPS + "r = (steps('adadelta'), steps('adadelta', rho=0.5, epsilon=1e-3, wd=0.1, "
                                      "rescale_grad=0.5, clip_gradient=0.8))",
        "adamax": OPTIMIZER_STEPS + "r = (steps('adamax'), steps('adamax', learning_rate=0.1, beta1=0.5, wd=0.01, "
                                    "clip_gradient=1.0))",
        "nadam": OPTIMIZER_STEPS + "r = (steps('nadam'), steps('nadam', learning_rate=0.05, schedule_decay=0.1, wd=0.01))",
        "dcasgd": OPTIMIZER_STEPS + "r = (steps('dcasgd', learning_rate=0.1), steps('dcasgd', learning_rate=0.1, wd=0.1, "
                                    "lamda=0.5))",
        "sgld noise": "opt = mx.optimizer.SGLD(learning_rate=0.01, wd=0.1); w0 = np.linspace(-1, 1, 20000).astype('float32')\n"
                      "g = np.cos(w0); w = mx.nd.array(w0); opt.update(0, w, mx.nd.array(g), opt.create_state(0, w))\n"
                      "noise = w.asnumpy() - (w0 - 0.01 / 2 * (g + 0.1 * w0)); r = (round(float(noise.std()), 2), "
                      "abs(float(noise.mean())) < 0.01)",
    }, rtol=1e-5)


def test_inverse_hyperbolic_angle_and_logical_unary_ops_with_their_gradients():
    grad = ("a = mx.nd.array(%s); a.attach_grad()\n"
            "with mx.autograd.record():\n    y = mx.nd.%s(a)\ny.backward()\nr = (y, a.grad, a.%s())")
    cases = {op: grad % (values, op, op) for op, values in [
        ("arcsinh", "[0.5, -1.5, 0, 2]"), ("arccosh", "[1.5, 2, 3]"), ("arctanh", "[0.5, -0.2, 0]"),
        ("degrees", "[0.5, -1.5, 0, 2]"), ("radians", "[30, -90, 0]"), ("rcbrt", "[0.5, -1.5, 0, 8]")]}
    cases["logical_not"] = ("a = mx.nd.array([0.5, 0, -2]); a.attach_grad()\n"
                            "with mx.autograd.record():\n    y = mx.nd.logical_not(a)\ny.backward()\n"
                            "r = (y, a.grad, mx.nd.logical_not(mx.nd.array([0, 3, -1], dtype='int32')))")
    cases["on symbols"] = ("x = mx.sym.var('x'); r = [getattr(mx.sym, op)(x + 1 if op == 'arccosh' else x).eval(x=mx.nd.array([0.25, 0.5]))[0] "
                           "for op in ('arcsinh', 'arccosh', 'arctanh', 'degrees', 'radians', 'rcbrt', 'logical_not')]")
    assert_parity(cases)


def test_swapaxes_and_the_axis_reductions_names():
    assert_parity({
        "SwapAxis": "a = mx.nd.arange(24).reshape((2, 3, 4)); r = (mx.nd.SwapAxis(a, dim1=0, dim2=2), "
                    "mx.nd.swapaxes(a, dim1=-1, dim2=1), a.swapaxes(0, 1), mx.nd.swapaxes(a))",
        "on a symbol": "r = mx.sym.SwapAxis(mx.sym.var('x'), dim1=1).infer_shape(x=(2, 3, 4))[1]",
        "out of bounds": "r = mx.nd.swapaxes(mx.nd.ones((2, 3, 4)), dim1=3).asnumpy()",
        "gradient": "a = mx.nd.arange(6).reshape((2, 3)); a.attach_grad()\n"
                    "with mx.autograd.record():\n    y = mx.nd.swapaxes(a, dim1=0, dim2=1) * mx.nd.array([[1, 2], [3, 4], [5, 6]])\n"
                    "y.backward()\nr = a.grad",
        "max_axis and min_axis": "a = mx.nd.array([[1, 5, 2], [7, 0, 3]]); r = (mx.nd.max_axis(a, axis=1), "
                                 "mx.nd.min_axis(a, axis=0, keepdims=True), mx.nd.max_axis(a))",
    }, messages={"out of bounds": ["axis 3 is out of bounds for"]})


def test_runtime_features_and_the_rnd_alias():
    # The values are each build's own (MXNet's wheel has no CUDA; this build may); what must match
    # is the names, their order, the classes and the errors. mxplug's values are checked against
    # its components.json below.
    assert_parity({
        "names": "f = mx.runtime.Features(); r = [list(f.keys()), type(f).__name__, f is mx.runtime.Features()]",
        "items": "r = [(type(x).__name__, x.name, type(x.enabled).__name__, repr(x)[2:]) for x in mx.runtime.feature_list()]",
        "known": "r = [mx.runtime.Features().is_enabled(n) in (True, False) for n in ('cuda', 'CPU_SSE', 'Dist_KVStore')]",
        "unknown": "mx.runtime.Features().is_enabled('WARP_DRIVE')",
        "rnd": "mx.rnd.seed(3); a = mx.rnd.uniform(shape=(3,)); mx.random.seed(3); r = [mx.rnd is mx.random, (a - mx.random.uniform(shape=(3,))).asnumpy()]",
    }, messages={"unknown": "Feature 'WARP_DRIVE' is unknown, known features are: ['CUDA', 'CUDNN'"})


def test_runtime_features_follow_the_build(mx):
    import json
    from conftest import BUILD
    built = json.loads((BUILD / "components.json").read_text())
    f = mx.runtime.Features()
    assert f.is_enabled("CUDA") == built["cuda"]
    assert f.is_enabled("CUDNN") == (built["cuda"] and built["cudnn"])
    assert f.is_enabled("NCCL") == (built["cuda"] and built["nccl"])
    assert f.is_enabled("MKLDNN") == built["onednn"]
    assert f.is_enabled("DIST_KVSTORE") == built["mpi"]
    assert f.is_enabled("BLAS_OPEN") and not f.is_enabled("OPENCV") and not f.is_enabled("TVM_OP")


def test_from_numpy_shares_memory_and_locks_the_numpy_array():
    assert_parity({
        "zero_copy": """
a = np.arange(6, dtype='float32').reshape(2, 3)
x = mx.nd.from_numpy(a)
r = [x, x.dtype, a.flags['WRITEABLE'], x.context == mx.cpu()]""",
        "shares": """
a = np.arange(6, dtype='float64')
x = mx.nd.from_numpy(a)
x[1] = 40.0
r = [x, a]""",
        "copy": """
a = np.arange(4, dtype='int32')
x = mx.nd.from_numpy(a, zero_copy=False)
a[0] = 9
r = [x, a.flags['WRITEABLE']]""",
        "not_contiguous": "mx.nd.from_numpy(np.arange(12.0).reshape(3, 4)[:, 1])",
    }, messages={"not_contiguous": "Only c-contiguous arrays are supported for zero-copy"})


def test_smooth_l1_softmin_and_hard_sigmoid_with_their_gradients():
    grads = """
x = mx.nd.array(%s); x.attach_grad()
with mx.autograd.record():
    y = %s
y.backward(mx.nd.array(np.linspace(-1, 2, y.size).reshape(y.shape)))
r = [y, x.grad]"""
    data = "np.linspace(-3, 3, 24).reshape(4, 6)"
    assert_parity({
        "smooth_l1": grads % (data, "mx.nd.smooth_l1(x, scalar=1.5)"),
        "smooth_l1_small_sigma": grads % (data, "mx.nd.smooth_l1(x, 0.5)"),
        "softmin": grads % (data, "mx.nd.softmin(x)"),
        "softmin_axis_temperature": grads % (data, "mx.nd.softmin(x, axis=0, temperature=2.0)"),
        "hard_sigmoid": grads % (data, "mx.nd.hard_sigmoid(x)"),
        "hard_sigmoid_params": grads % (data, "mx.nd.hard_sigmoid(x, alpha=0.7, beta=0.2)"),
        "symbols": "r = [mx.sym.smooth_l1(mx.sym.var('x'), scalar=2).list_arguments(), "
                   "mx.sym.softmin(mx.sym.var('x'), axis=0).infer_shape(x=(3, 4))]",
    }, rtol=1e-5)


def test_reshape_like_with_and_without_ranges():
    assert_parity({
        "whole": """
x = mx.nd.array(np.arange(6.0).reshape(2, 3)); x.attach_grad(); y = mx.nd.ones((3, 2)); y.attach_grad()
with mx.autograd.record():
    z = mx.nd.reshape_like(x, y) * mx.nd.array(np.arange(6.0).reshape(3, 2))
z.backward()
r = [z, x.grad, y.grad]""",
        "ranges": "r = [mx.nd.reshape_like(mx.nd.ones((30, 7)), mx.nd.ones((15, 2, 4)), lhs_begin=0, lhs_end=1, "
                  "rhs_begin=0, rhs_end=2).shape, mx.nd.reshape_like(mx.nd.ones((30, 7)), mx.nd.ones((15, 2, 4)), "
                  "lhs_begin=-2, lhs_end=-1, rhs_begin=0, rhs_end=-1).shape]",
        "symbol": "s = mx.sym.reshape_like(mx.sym.var('a'), mx.sym.var('b')); "
                  "r = [s.list_arguments(), s.infer_shape(a=(4, 6), b=(2, 12))]",
        "size_mismatch": "mx.nd.reshape_like(mx.nd.ones((2, 3)), mx.nd.ones((3, 3))).wait_to_read()",
    }, messages={"size_mismatch": "Cannot reshape lhs with shape"})


def test_depth_to_space_and_space_to_depth():
    grads = """
x = mx.nd.array(np.arange(%d.0).reshape(%s)); x.attach_grad()
with mx.autograd.record():
    y = mx.nd.%s(x, %d)
y.backward(mx.nd.array(np.linspace(-1, 1, y.size).reshape(y.shape)))
r = [y, x.grad]"""
    assert_parity({
        "depth_to_space": grads % (96, "(2, 12, 2, 2)", "depth_to_space", 2),
        "space_to_depth": grads % (72, "(1, 2, 6, 6)", "space_to_depth", 3),
        "round_trip": "x = mx.nd.array(np.arange(48.0).reshape(1, 3, 4, 4)); "
                      "r = mx.nd.depth_to_space(mx.nd.space_to_depth(x, 2), 2) - x",
        "not_4d": "mx.nd.depth_to_space(mx.nd.ones((6, 2, 2)), 2).wait_to_read()",
        "depth": "mx.nd.depth_to_space(mx.nd.ones((1, 6, 2, 2)), 2).wait_to_read()",
        "space": "mx.nd.space_to_depth(mx.nd.ones((1, 3, 5, 4)), 2).wait_to_read()",
    }, messages={"not_4d": "requires exactly 4D tensor",
                 "depth": "Dimension:1(depth dimension) should be a multiple of 'block^2'",
                 "space": "Dimension:2(1st Space dimension) should be a multiple of 'block'"})


def test_shape_array_and_size_array():
    assert_parity({
        "values": "a = mx.nd.ones((2, 3, 4), dtype='float16'); r = [mx.nd.shape_array(a), mx.nd.size_array(a)]",
        "types": "x = mx.sym.var('x'); r = [mx.sym.shape_array(x).infer_type(x='float16'), "
                 "mx.sym.size_array(x).infer_shape(x=(2, 3)), mx.sym.shape_array(x).infer_shape(x=(2, 3))]",
        "in_a_graph": "x = mx.sym.var('x'); s = mx.sym.broadcast_mul(mx.sym.sum(x), mx.sym.cast(mx.sym.size_array(x), 'float32')); "
                      "ex = s.bind(mx.cpu(), {'x': mx.nd.ones((3, 5))}, args_grad={'x': mx.nd.zeros((3, 5))}); "
                      "ex.forward(is_train=True); ex.backward(mx.nd.ones(1)); r = [ex.outputs[0], ex.grad_dict['x']]",
    })


def test_argmax_channel():
    assert_parity({
        "matrix": "r = mx.nd.argmax_channel(mx.nd.array([[0, 1, 2], [3, 4, 5]]))",
        "channels": "r = mx.nd.argmax_channel(mx.nd.array(np.random.RandomState(1).randn(2, 3, 4)))",
        "symbol": "r = mx.sym.argmax_channel(mx.sym.var('x')).infer_shape(x=(2, 3, 4))",
    })


def test_topk_sort_and_argsort():
    """Runs of 5 (which the CPU ranks by counting, as the GPUs do) and of 40 (which it sorts).
    Ties keep index order here; MXNet's std::sort keeps it in runs of up to 16 only (its insertion
    sort), so the long runs hold distinct values."""
    short = "x = mx.nd.array([[3, 1, 2, 1, 3], [0, 5, 5, -1, 2]]); "
    long = "x = mx.nd.array(np.random.RandomState(0).permutation(120).reshape(3, 40).astype('float32')); "
    grad = ("x.attach_grad()\nwith mx.autograd.record():\n    y = mx.nd.topk(x, %s)\n"
            "y = y[0] if isinstance(y, list) else y\ny.backward(mx.nd.arange(y.size).reshape(y.shape)); r = x.grad")
    cases = {}
    for name, x in (("short", short), ("long", long)):
        cases.update({
            name + " indices": x + "r = mx.nd.topk(x, k=2)",
            name + " value": x + "r = mx.nd.topk(x, k=3, ret_typ='value')",
            name + " both ascending": x + "r = mx.nd.topk(x, k=3, ret_typ='both', is_ascend=True)",
            name + " mask": x + "r = mx.nd.topk(x, k=2, ret_typ='mask')",
            name + " axis 0": x + "r = mx.nd.topk(x, k=2, axis=0, ret_typ='both')",
            name + " axis None": x + "r = mx.nd.topk(x, k=3, axis=None, ret_typ='both', dtype='int64')",
            name + " k 0": x + "r = mx.nd.topk(x, k=0, ret_typ='value')",
            name + " sort": x + "r = (mx.nd.sort(x), mx.nd.sort(x, is_ascend=False), mx.nd.sort(x, axis=None))",
            name + " argsort": x + "r = (mx.nd.argsort(x), mx.nd.argsort(x, is_ascend=False, dtype='int32'), "
                                   "mx.nd.argsort(x, axis=0))",
            name + " value gradient": x + grad % "k=3, ret_typ='value'",
            name + " both gradient": x + grad % "k=2, ret_typ='both', is_ascend=True",
            name + " whole-axis gradient": x + grad % "k=0, ret_typ='value', is_ascend=True",
        })
    cases.update({
        "k too large": short + "r = mx.nd.topk(x, k=6)",
        "ints": "r = mx.nd.topk(mx.nd.array([[1, 2], [4, 3]], dtype='int32'), k=1, ret_typ='both')",
        "fluent": short + "r = (x.topk(k=1), x.sort(), x.argsort(is_ascend=False))",
        "symbol": "s = mx.sym.topk(mx.sym.var('x'), k=2, ret_typ='both'); "
                  "r = (s.list_outputs(), s.infer_shape(x=(2, 5)), s.infer_type(x='float64'), "
                  "mx.sym.topk(mx.sym.var('x'), ret_typ='mask').infer_type(x='float16')[1], "
                  "mx.sym.argsort(mx.sym.var('x'), axis=None).infer_shape(x=(2, 3)))",
    })
    assert_parity(cases)


def test_sort_gradient_is_topk_of_every_element(mx):
    """MXNet 1.9.1 cannot run sort's backward (its _backward_topk refuses the axis sort gives it);
    sort's gradient here is that of topk(k=0, ret_typ='value'), which test_topk_sort_and_argsort
    holds to MXNet's."""
    x = mx.nd.array(np.random.RandomState(1).randint(0, 9, (4, 30)).astype("float32"))
    for kwargs in ({}, {"is_ascend": False}, {"axis": 0}, {"axis": None}):
        head = mx.nd.array(np.random.RandomState(2).randn(*mx.nd.sort(x, **kwargs).shape))
        grads = []
        for op, extra in ((mx.nd.sort, {}), (mx.nd.topk, {"k": 0, "ret_typ": "value",
                                                          "is_ascend": kwargs.get("is_ascend", True)})):
            x.attach_grad()
            with mx.autograd.record():
                y = op(x, **dict({k: v for k, v in kwargs.items() if k == "axis"}, **extra)) if op is mx.nd.topk \
                    else op(x, **kwargs)
            y.backward(head)
            grads.append(x.grad.asnumpy())
        np.testing.assert_array_equal(grads[0], grads[1])
        assert np.abs(grads[0]).sum() > 0


def test_layer_instance_group_and_l2_normalization_with_their_gradients():
    data = ("rs = np.random.RandomState(0); x = mx.nd.array(rs.randn(2, 4, 3, 3)); "
            "g4 = mx.nd.array(rs.rand(4) + 0.5); b4 = mx.nd.array(rs.randn(4)); "
            "g3 = mx.nd.array(rs.rand(3) + 0.5); b3 = mx.nd.array(rs.randn(3)); "
            "g2 = mx.nd.array([0.7, 1.3]); b2 = mx.nd.array([0.1, -0.2])\n")
    grads = ("args = %s\nfor a in args:\n    a.attach_grad()\nwith mx.autograd.record():\n    y = %s\n"
             "ys = y if isinstance(y, list) else [y]\n"
             "ys[0].backward(mx.nd.array(np.random.RandomState(1).randn(*ys[0].shape)))\n"
             "r = (ys, [a.grad for a in args])")
    assert_parity({
        "LayerNorm": data + grads % ("[x, g3, b3]", "mx.nd.LayerNorm(x, g3, b3)"),
        "LayerNorm axis 1": data + grads % ("[x, g4, b4]", "mx.nd.LayerNorm(x, g4, b4, axis=1, output_mean_var=True)"),
        "InstanceNorm": data + grads % ("[x, g4, b4]", "mx.nd.InstanceNorm(x, g4, b4, eps=0.01)"),
        "GroupNorm": data + grads % ("[x, g2, b2]", "mx.nd.GroupNorm(x, g2, b2, num_groups=2, output_mean_var=True)"),
        "L2Normalization instance": data + grads % ("[x]", "mx.nd.L2Normalization(x)"),
        "L2Normalization channel": data + grads % ("[x]", "mx.nd.L2Normalization(x, mode='channel')"),
        "L2Normalization spatial": data + grads % ("[x]", "mx.nd.L2Normalization(x, mode='spatial', eps=0.5)"),
        "shapes": "r = [(s.list_arguments(), s.list_outputs(), s.infer_shape(x=(2, 4, 3, 3))) for s in ("
                  "mx.sym.LayerNorm(mx.sym.var('x'), name='ln'), "
                  "mx.sym.LayerNorm(mx.sym.var('x'), axis=1, output_mean_var=True, name='ln'), "
                  "mx.sym.InstanceNorm(mx.sym.var('x'), name='in'), "
                  "mx.sym.GroupNorm(mx.sym.var('x'), num_groups=2, output_mean_var=True, name='gn'), "
                  "mx.sym.L2Normalization(mx.sym.var('x'), mode='channel', name='l2'))]",
        "groups that do not divide": data + "r = mx.nd.GroupNorm(x, g2, b2, num_groups=3)",
        "gamma of another length": data + "r = mx.nd.LayerNorm(x, g4, b4)",
    }, rtol=1e-5)


def test_sequence_mask_last_and_reverse_with_their_gradients():
    data = "x = mx.nd.arange(24).reshape((4, 3, 2)); y = mx.nd.arange(24).reshape((3, 4, 2)); L = mx.nd.array([1, 4, 2])\n"
    grads = ("x.attach_grad()\nwith mx.autograd.record():\n    z = %s\n"
             "z.backward(mx.nd.arange(z.size).reshape(z.shape) + 1); r = (z, x.grad)")
    assert_parity({
        "mask": data + "r = mx.nd.SequenceMask(x, L, use_sequence_length=True, value=-1)",
        "mask axis 1": data + "r = mx.nd.SequenceMask(y, L, use_sequence_length=True, axis=1)",
        "mask without lengths": data + "r = mx.nd.SequenceMask(x)",
        "mask lengths 0 and past the end": data + "r = mx.nd.SequenceMask(x, mx.nd.array([0, 5, 2]), use_sequence_length=True)",
        "mask of 2-d data": "r = mx.nd.SequenceMask(mx.nd.arange(6).reshape((3, 2)), mx.nd.array([1, 2]), use_sequence_length=True)",
        "last": data + "r = (mx.nd.SequenceLast(x, L, use_sequence_length=True), mx.nd.SequenceLast(x))",
        "last axis 1": data + "r = mx.nd.SequenceLast(y, L, use_sequence_length=True, axis=1)",
        "last of fractional lengths": "r = mx.nd.SequenceLast(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([1.7, 2.2]), "
                                      "use_sequence_length=True)",
        "reverse": data + "r = (mx.nd.SequenceReverse(x, L, use_sequence_length=True), mx.nd.SequenceReverse(x))",
        "reverse axis 1": data + "r = mx.nd.SequenceReverse(y, L, use_sequence_length=True, axis=1)",
        "mask gradient": data + grads % "mx.nd.SequenceMask(x, L, use_sequence_length=True, value=3)",
        "last gradient": data + grads % "mx.nd.SequenceLast(x, L, use_sequence_length=True)",
        "reverse gradient": data + grads % "mx.nd.SequenceReverse(x, L, use_sequence_length=True)",
        "integer lengths": data + "r = mx.nd.SequenceMask(x, mx.nd.array([2, 1, 3], dtype='int32'), use_sequence_length=True)",
        "symbols": "s = mx.sym.SequenceMask(mx.sym.var('x'), use_sequence_length=True, name='m'); "
                   "t = mx.sym.SequenceLast(mx.sym.var('x'), axis=1); "
                   "r = (mx.sym.SequenceMask(mx.sym.var('x')).list_arguments(), s.list_arguments(), "
                   "s.infer_shape(x=(5, 3, 2)), t.infer_shape(x=(3, 5, 2)))",
        "lengths of another size": data + "r = mx.nd.SequenceMask(x, mx.nd.array([1, 2]), use_sequence_length=True)",
    }, messages={"reverse axis 1": "Current implementation expects axis to be 0."})


def test_erfinv_slice_like_diag_and_moments_with_their_gradients():
    grads = ("for v in args:\n    v.attach_grad()\nwith mx.autograd.record():\n    y = %s\n"
             "ys = y if isinstance(y, list) else [y]\n"
             "mx.autograd.backward(ys, [mx.nd.arange(z.size).reshape(z.shape) + 1 for z in ys])\n"
             "r = (ys, [v.grad for v in args])")
    x = "x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 4)); "
    assert_parity({
        "erfinv": "r = (mx.nd.erfinv(mx.nd.array([-1, -0.999, -0.5, 0, 0.3, 0.9, 0.99999, 1, 1.5, np.nan])), "
                  "mx.nd.erfinv(mx.nd.array([-0.7, 0.2, 0.999], dtype='float64')))",
        "erfinv gradient": "args = [mx.nd.array([-0.5, 0.2, 0.9])]\n" + grads % "mx.nd.erfinv(args[0])",
        "slice_like": x + "args = [x, mx.nd.zeros((1, 2, 3))]\n" + grads % "mx.nd.slice_like(*args)",
        "slice_like axes": x + "args = [x, mx.nd.zeros((1, 2, 3))]\n" + grads % "mx.nd.slice_like(*args, axes=(0, -1))",
        "slice_like errors": x + "r = mx.nd.slice_like(x, mx.nd.zeros((3, 2, 3)))",
        "slice_like past the axes": x + "r = mx.nd.slice_like(x, mx.nd.zeros((1, 2)), axes=(2,))",
        "diag": "args = [mx.nd.arange(12).reshape((3, 4))]\n" + grads % "[mx.nd.diag(args[0]), mx.nd.diag(args[0], k=1), "
                                                                    "mx.nd.diag(args[0], k=-2)]",
        "diag of a vector": "args = [mx.nd.array([1, 2, 3])]\n" + grads % "[mx.nd.diag(args[0]), mx.nd.diag(args[0], k=-1)]",
        "diag of planes": x + "args = [x]\n" + grads % "[mx.nd.diag(x, axis1=1, axis2=2), mx.nd.diag(x, k=1, axis1=0, axis2=2), "
                                                     "mx.nd.diag(x, k=-1, axis1=2, axis2=1)]",
        "moments": x + "args = [x]\n" + grads % "mx.nd.moments(x, axes=(1,))",
        "moments keepdims": x + "args = [x]\n" + grads % "mx.nd.moments(x, axes=(0, 2), keepdims=True)",
        "moments without axes": x + "r = mx.nd.moments(x)",
        "symbols": "r = (mx.sym.moments(mx.sym.var('a'), axes=(1,)).list_outputs(), "
                   "mx.sym.slice_like(mx.sym.var('a'), mx.sym.var('b')).infer_shape(a=(2, 3, 4), b=(1, 2, 3)), "
                   "mx.sym.diag(mx.sym.var('a'), k=2).infer_shape(a=(3,)))",
    }, messages={"moments without axes": "Empty axes is not supported"}, rtol=1e-5)


def test_cumsum_with_its_gradient():
    """MXNet 1.9.1's cumsum fails on a negative axis (it indexes the shape with it); mxplug counts
    it from the end, as NumPy."""
    grads = ("x.attach_grad()\nwith mx.autograd.record():\n    y = %s\n"
             "y.backward(mx.nd.arange(y.size).reshape(y.shape) + 1); r = (y, x.grad)")
    x = "x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 4)); "
    assert_parity({
        "flattened": x + grads % "mx.nd.cumsum(x)",
        "axis 1": x + grads % "mx.nd.cumsum(x, axis=1)",
        "axis 2 in float64": x + grads % "mx.nd.cumsum(x, axis=2, dtype='float64')",
        "integers": "r = (mx.nd.cumsum(mx.nd.arange(6).astype('int32')), "
                    "mx.nd.cumsum(mx.nd.arange(6).reshape((2, 3)).astype('int8'), axis=0, dtype='int32'))",
        "symbol": "r = (mx.sym.cumsum(mx.sym.var('a')).infer_shape(a=(2, 3)), mx.sym.cumsum(mx.sym.var('a'), axis=1).list_arguments())",
    }, rtol=1e-5)


def test_pad_in_each_mode_with_its_gradient():
    grads = ("x.attach_grad()\nwith mx.autograd.record():\n    y = %s\n"
             "y.backward(mx.nd.arange(y.size).reshape(y.shape)); r = (y, x.grad)")
    four = "x = mx.nd.arange(24).reshape((2, 1, 3, 4)); "
    five = "x = mx.nd.arange(48).reshape((2, 1, 2, 3, 4)); "
    cases = {}
    for mode in ("constant", "edge", "reflect"):
        cases["4-d " + mode] = four + grads % ("mx.nd.Pad(x, mode='%s', pad_width=(0, 0, 0, 0, 1, 2, 2, 1), "
                                               "constant_value=-1)" % mode)
        cases["5-d " + mode] = five + grads % "mx.nd.pad(x, mode='%s', pad_width=(0, 0, 0, 0, 1, 1, 1, 0, 0, 2))" % mode
    cases.update({
        "batch axis": four + "r = mx.nd.Pad(x, mode='constant', pad_width=(1, 0, 0, 0, 1, 1, 1, 1))",
        "too few pads": four + "r = mx.nd.Pad(x, mode='constant', pad_width=(0, 0, 0, 0, 1, 1))",
        "2-d": "r = mx.nd.Pad(mx.nd.ones((2, 3)), mode='constant', pad_width=(0, 0, 1, 1))",
        "reflect too far": four + "r = mx.nd.Pad(x, mode='reflect', pad_width=(0, 0, 0, 0, 3, 3, 1, 1))",
        "symbol": "r = mx.sym.Pad(mx.sym.var('x'), mode='edge', pad_width=(0, 0, 0, 0, 1, 2, 3, 4)).infer_shape(x=(1, 2, 3, 4))",
    })
    assert_parity(cases, messages={
        "batch axis": "Current implementation expects padding on the first two axes to be zero.",
        "too few pads": "Input shape vs padding spec mismatch.",
        "2-d": "Current implementation only supports 4-D or 5-D input.",
        "reflect too far": "only supports padding sizes smaller than the input size."})


def test_reshape_target_shape_and_parameter_orders():
    x = "x = mx.nd.arange(24).reshape((2, 3, 4)); "
    assert_parity({
        "target_shape": x + "r = [mx.nd.Reshape(x, target_shape=t).shape for t in ((0, 4), (6, 4), (2, 3, 4, 1))]",
        "keep_highest": x + "r = mx.nd.Reshape(x, target_shape=(5, 0), keep_highest=True)",
        "shape wins": x + "r = mx.nd.reshape(x, shape=(4, 6), target_shape=(0, 4)).shape",
        "symbol": "r = mx.sym.Reshape(mx.sym.var('x'), target_shape=(0, 2)).infer_shape(x=(3, 4))",
        "stack's axis positionally": "r = mx.nd.stack(mx.nd.ones((2,)), mx.nd.zeros((2,)), axis=1)",
        "slice_assign_scalar's scalar first": "r = mx.nd._internal._slice_assign_scalar(mx.nd.zeros((2, 3)), 5, "
                                              "(0, 1), (2, 3))",
        "arguments": "r = [mx.operator.get_operator_arguments(o).names for o in ('Reshape', '_slice_assign_scalar')]",
        "crop_assign, the older names": "r = (mx.nd._internal._crop_assign(mx.nd.zeros((3, 3)), mx.nd.ones((2, 2)), "
                                        "begin=(0, 1), end=(2, 3)), mx.nd._internal._crop_assign_scalar("
                                        "mx.nd.zeros((3, 3)), scalar=5, begin=(1, 0), end=(3, 2)), "
                                        "mx.operator.get_operator_arguments('_crop_assign_scalar').names)",
    })


def test_softmax_activation_and_softmax_cross_entropy_with_their_gradients():
    """SoftmaxActivation by instance of data of more than 2 axes is left out: MXNet 1.9.1 computes
    its forward over the last axis and its backward over axis 1 (mxplug's backward is that of its
    forward, checked against the CPU by the conformance cases)."""
    grads = ("for v in args:\n    v.attach_grad()\nwith mx.autograd.record():\n    y = %s\n"
             "y.backward(%s); r = (y, args[0].grad)")
    assert_parity({
        "cross entropy": "args = [mx.nd.array(np.random.RandomState(0).randn(3, 4))]; label = mx.nd.array([0, 3, 1])\n"
                         + grads % ("mx.nd.softmax_cross_entropy(args[0], label)", "mx.nd.array([2.0])"),
        "cross entropy of 3-d data": "r = mx.nd.softmax_cross_entropy(mx.nd.ones((2, 3, 4)), mx.nd.ones((2,)))",
        "by channel": "args = [mx.nd.array(np.random.RandomState(1).randn(2, 3, 2))]\n"
                      + grads % ("mx.nd.SoftmaxActivation(args[0], mode='channel')", "mx.nd.arange(12).reshape((2, 3, 2))"),
        "by instance": "args = [mx.nd.array(np.random.RandomState(1).randn(2, 6))]\n"
                       + grads % ("mx.nd.SoftmaxActivation(args[0])", "mx.nd.arange(12).reshape((2, 6))"),
        "by instance, 3-d forward": "r = mx.nd.SoftmaxActivation(mx.nd.array(np.random.RandomState(1).randn(2, 3, 2)))",
        "symbols": "r = (mx.sym.softmax_cross_entropy(mx.sym.var('d'), mx.sym.var('l')).infer_shape(d=(5, 3), l=(5,)), "
                   "mx.sym.SoftmaxActivation(mx.sym.var('d'), mode='channel').list_arguments())",
    }, messages={"cross entropy of 3-d data": "SoftmaxCrossEntropy only accept 2D data"}, rtol=1e-5)


def test_linspace():
    assert_parity({
        "values": "r = [mx.nd.linspace(*a) for a in ((0, 1, 5), (2, -1, 4, False, None, 'int32'), (1, 1, 1), (0, 10, 3), "
                  "(3, 5, 0))]",
        "float64 without the endpoint": "r = mx.nd.linspace(0, 1, 4, endpoint=False, dtype='float64')",
        "symbol": "s = mx.sym.linspace(0, 1, 5); r = (s.infer_shape(), s.eval()[0])",
    })


def test_choose_element_0index_is_pick():
    assert_parity({
        "values": "r = mx.nd.choose_element_0index(mx.nd.arange(12).reshape((3, 4)), mx.nd.array([1, -1, 7]))",
        "gradient": "a = mx.nd.arange(12).reshape((3, 4)); a.attach_grad()\nwith mx.autograd.record():\n"
                    "    y = mx.nd.choose_element_0index(a, mx.nd.array([1, 2, 3]), mode='wrap')\n"
                    "y.backward(mx.nd.array([1, 2, 3])); r = a.grad",
    })


def test_split_v2():
    x = "x = mx.nd.arange(24).reshape((2, 6, 2)); "
    assert_parity({
        "sections": x + "r = mx.nd.split_v2(x, 3, axis=1)",
        "indices": x + "r = (mx.nd.split_v2(x, (1, 4), axis=1), mx.nd.split_v2(x, (1, 4), axis=-2))",
        "empty pieces": x + "r = (mx.nd.split_v2(x, (0, 3), axis=1), mx.nd.split_v2(x, (2, 6), axis=1))",
        "squeeze": x + "r = mx.nd.split_v2(x, (1,), axis=0, squeeze_axis=True)",
        "unequal": x + "r = mx.nd.split_v2(x, 4, axis=1)",
        "past the end": x + "r = mx.nd.split_v2(x, (2, 9), axis=1)",
        "fluent": x + "r = (x.split_v2(2, axis=1), mx.sym.var('y').split_v2(2).infer_shape(y=(4, 3))[1])",
        "symbols": x + "s = mx.sym.split_v2(mx.sym.var('x'), 3, axis=1); t = mx.sym.split_v2(mx.sym.var('x'), (1, 4), axis=1); "
                       "r = (s.list_outputs(), s.infer_shape(x=(2, 6, 2)), t.infer_shape(x=(2, 6, 2)), s.eval(x=x))",
        "gradient": x + "x.attach_grad()\nwith mx.autograd.record():\n    ys = mx.nd.split_v2(x, (1, 4), axis=1)\n"
                        "mx.autograd.backward(ys, [mx.nd.ones_like(y) * (i + 1) for i, y in enumerate(ys)]); r = x.grad",
    }, messages={"past the end": "is no less than the size of the axis"})


def test_gather_nd_and_scatter_nd():
    d = "d = mx.nd.arange(24).reshape((2, 3, 4)); "
    assert_parity({
        "gather columns": d + "r = mx.nd.gather_nd(d, mx.nd.array([[1, 0, -1], [2, 0, 1]]))",
        "gather blocks": d + "r = (mx.nd.gather_nd(d, mx.nd.array([[1, 0]])), "
                             "mx.nd.gather_nd(d, mx.nd.array([[1, 0], [2, 1], [3, 0]])))",
        "gather int indices": d + "r = mx.nd.gather_nd(d.astype('int32'), mx.nd.array([[1], [0]], dtype='int64'))",
        "gather index grid": d + "r = mx.nd.gather_nd(d, mx.nd.array([[[0, 1], [1, 0]], [[2, 2], [0, 1]]]))",
        "gather out of range": d + "r = mx.nd.gather_nd(d, mx.nd.array([[1], [5]]))",
        "gather not whole": d + "r = mx.nd.gather_nd(d, mx.nd.array([[1.7], [0.2]]))",
        "gather 1-d indices": d + "r = mx.nd.gather_nd(d, mx.nd.array([1, 0]))",
        "gather gradient adds": "x = mx.nd.array([[1, 2], [3, 4]]); x.attach_grad()\n"
                                "with mx.autograd.record():\n"
                                "    y = mx.nd.gather_nd(x, mx.nd.array([[0, 0, 1], [1, 1, 0]]))\n"
                                "y.backward(mx.nd.array([1, 2, 3])); r = x.grad",
        "scatter": "r = (mx.nd.scatter_nd(mx.nd.array([2, 3, 4]), mx.nd.array([[1, 0, 0], [1, 1, 0]]), shape=(2, 2)), "
                   "mx.nd.scatter_nd(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 0]]), shape=(2, 2)))",
        "scatter gradient": "x = mx.nd.array([2, 3, 4]); x.attach_grad()\n"
                            "with mx.autograd.record():\n"
                            "    y = mx.nd.scatter_nd(x, mx.nd.array([[1, 1, 0], [1, 1, 0]]), shape=(2, 2))\n"
                            "y.backward(mx.nd.array([[1, 2], [3, 4]])); r = x.grad",
        "scatter bad shapes": "r = mx.nd.scatter_nd(mx.nd.array([2, 3]), mx.nd.array([[1, 1, 0], [1, 1, 0]]), shape=(2, 2))",
        "symbols": "s = mx.sym.gather_nd(mx.sym.var('a'), mx.sym.var('i')); "
                   "t = mx.sym.scatter_nd(mx.sym.var('a'), mx.sym.var('i'), shape=(4, 5, 6)); "
                   "r = (s.infer_shape(a=(2, 3, 4), i=(2, 5)), s.infer_type(a=np.float16, i=np.int32), "
                   "t.infer_shape(a=(7, 6), i=(2, 7)), s.list_arguments())",
    }, messages={"gather out of range": "index 5 is out of bounds for axis 1 with size 3",
                 "gather not whole": "index 1.7 is out of bounds for axis 0 with size 2",
                 "gather 1-d indices": "gather_nd requires index tensor to have at least 2 dimensions",
                 "scatter bad shapes": "Invalid data, indices, and output shape combination for scatter_nd: "
                                       "[2], [2,3], [2,2]"})


def test_ravel_unravel_and_batch_take():
    assert_parity({
        "ravel": "r = (mx.nd.ravel_multi_index(mx.nd.array([[3, 6, 6], [4, 5, 1]]), shape=(7, 6)), "
                 "mx.nd.ravel_multi_index(mx.nd.array([[3, -1], [4, 9]]), shape=(7, 6)), "
                 "mx.nd._ravel_multi_index(mx.nd.array([[3, 6], [4, 5]], dtype='int32'), shape=(7, 6)))",
        "unravel": "r = (mx.nd.unravel_index(mx.nd.array([22, 41, 37, -1, 50]), shape=(7, 6)), "
                   "mx.nd._unravel_index(mx.nd.array([5, 0], dtype='int64'), shape=(2, 3)))",
        "round trip": "i = mx.nd.array([[1, 0, 2], [3, 1, 0], [0, 4, 3]])\n"
                      "r = mx.nd.unravel_index(mx.nd.ravel_multi_index(i, shape=(3, 5, 4)), shape=(3, 5, 4))",
        "no gradient": "x = mx.nd.array([[3, 6], [4, 5]]); x.attach_grad()\n"
                       "with mx.autograd.record():\n    y = mx.nd.ravel_multi_index(x, shape=(7, 6))\n"
                       "y.backward(); r = x.grad",
        "symbols": "r = (mx.sym.ravel_multi_index(mx.sym.var('a'), shape=(7, 6)).infer_shape(a=(2, 5)), "
                   "mx.sym.unravel_index(mx.sym.var('a'), shape=(7, 6)).infer_shape(a=(5,)))",
        "batch_take": "a = mx.nd.array([[1, 2], [3, 4], [5, 6]])\n"
                      "r = (mx.nd.batch_take(a, mx.nd.array([0, 1, 0], dtype='int32')), "
                      "mx.nd.batch_take(a, mx.nd.array([5, -1, 2], dtype='int32')))",
        "batch_take float indices": "r = mx.nd.batch_take(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([0, 1]))",
        "batch_take shapes": "r = mx.nd.batch_take(mx.nd.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]), "
                             "mx.nd.array([1, 0], dtype='int32'))",
    }, messages={"batch_take float indices": "Type inconsistent, Provided = float32, inferred type = int32",
                 "batch_take shapes": "Index array's size must be the same as data array's size excluding the first"})


def test_autograd_get_symbol():
    """Structure and values; names only within one call's graph, since MXNet numbers the nodes of
    later calls on from a process-wide count (var1, null2, node_3...)."""
    graph = ("import json\n"
             "def nodes(s):\n"
             "    return [(n['op'], sorted(n.get('attrs', {}).items()), n['inputs']) "
             "for n in json.loads(s.tojson())['nodes']]\n"
             "def run(s, *arrays):\n"
             "    return s.eval(**dict(zip(s.list_arguments(), arrays)))[0]\n")
    assert_parity({
        "layers": graph + "x = mx.nd.array([[1, 2, 3], [4, 5, 6]]); x.attach_grad()\n"
                          "w = mx.nd.array(np.arange(12).reshape(4, 3) * 0.1); w.attach_grad()\n"
                          "with mx.autograd.record():\n"
                          "    y = mx.nd.relu(mx.nd.FullyConnected(x, w, num_hidden=4, no_bias=True)) * 2 + 1\n"
                          "s = mx.autograd.get_symbol(y)\n"
                          "r = (s.list_arguments(), s.list_outputs(), nodes(s), run(s, x, w))",
        "outputs of several": graph + "x = mx.nd.arange(12).reshape((2, 6)); x.attach_grad()\n"
                                      "with mx.autograd.record():\n"
                                      "    a, b, c = mx.nd.split(x, num_outputs=3, axis=1)\n"
                                      "    y = mx.nd.relu(a * c - b)\n"
                                      "s = mx.autograd.get_symbol(y)\n"
                                      "r = (len(s.list_arguments()), [n[1:] for n in nodes(s)], run(s, x))",
        "an unattached input": graph + "x = mx.nd.ones((3,)); x.attach_grad(); k = mx.nd.array([1, 2, 3])\n"
                                       "with mx.autograd.record():\n"
                                       "    y = mx.nd.broadcast_mul(x, k).sum()\n"
                                       "s = mx.autograd.get_symbol(y)\n"
                                       "r = (len(s.list_arguments()), nodes(s), run(s, x, k))",
    })


def test_densities_and_their_gradients():
    """_random_pdf_<x>: the density (or its log) of samples under per-element parameters, and its
    gradient to the samples and the parameters (summed over each distribution's samples)."""
    grads = ("xs = [mx.nd.array(v, dtype='float64') for v in values]\n"
             "for x in xs: x.attach_grad()\n"
             "with mx.autograd.record():\n"
             "    y = getattr(mx.nd, 'random_pdf_' + dist)(*xs, is_log=is_log)\n"
             "y.backward(mx.nd.array(np.random.RandomState(0).rand(*y.shape), dtype='float64'))\n"
             "r = [y] + [x.grad for x in xs]")
    cases = {}
    for dist, values in [("uniform", "[[[-1, 0.5, 3]], [0], [2]]"), ("normal", "[[[0.3, 1.5, -2]], [0.2], [1.5]]"),
                         ("gamma", "[[[0.3, 1.5], [2, 4]], [2, 0.5], [1.5, 3]]"),
                         ("exponential", "[[[0.3, 1.5], [0.1, 2]], [2, 0.5]]"),
                         ("poisson", "[[[0, 3, 0.5]], [2]]"),
                         ("negative_binomial", "[[[0, 3], [1, 5]], [2.5, 4], [0.4, 0.7]]"),
                         ("generalized_negative_binomial", "[[[0, 3], [2, 1]], [2, 0.5], [0.4, 1.5]]"),
                         ("dirichlet", "[[[[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]]], [[1.5, 2, 3]]]")]:
        for is_log in (False, True):
            cases["%s log=%s" % (dist, is_log)] = "dist, values, is_log = %r, %s, %s\n%s" % (dist, values, is_log, grads)
    cases.update({
        "float32 and the internal name": "r = mx.nd._internal._random_pdf_normal(mx.nd.array([[1, 2]]), mx.nd.array([0]), "
                                         "mx.nd.array([2]))",
        "float16": "r = mx.nd.random_pdf_exponential(mx.nd.array([[1, 2]], dtype='float16'), mx.nd.array([2], dtype='float16'))",
        "symbol": "s = mx.sym.random_pdf_gamma(mx.sym.var('x'), mx.sym.var('a'), mx.sym.var('b'))\n"
                  "r = [s.list_arguments(), s.infer_shape(x=(2, 5), a=(2,), b=(2,))]",
        "parameters unlike the samples' leading shape": "r = mx.nd.random_pdf_exponential(mx.nd.array([[1, 2]]), "
                                                        "mx.nd.array([1, 2]))",
        "parameters of two shapes": "r = mx.nd.random_pdf_normal(mx.nd.array([1, 2]), mx.nd.array([1, 2]), mx.nd.array([1, 2, 3]))",
        "two dtypes": "r = mx.nd.random_pdf_normal(mx.nd.array([1, 2], dtype='float64'), mx.nd.array([1, 2]), mx.nd.array([1, 2]))",
    })
    assert_parity(cases, rtol=1e-5)


def test_samplers_with_array_parameters_and_like_an_input():
    """mx.nd.random.<x> with arrays runs _sample_<x> (one distribution per element); <x>_like
    samples with an input's shape and dtype. Their values are random: the shapes, dtypes,
    ranges, gradients and errors are compared."""
    summary = "r = [(a.shape, str(a.dtype)) for a in (x if isinstance(x, (list, tuple)) else [x])]"
    lo, hi = "mx.nd.array([[0, 1], [2, 3]])", "mx.nd.array([[1, 2], [3, 4]])"
    assert_parity({
        "uniform with arrays": "x = mx.nd.random.uniform(%s, %s, shape=(3,))\n%s\n"
                               "r.append(bool(((x.asnumpy() >= [[[0], [1]], [[2], [3]]]) & (x.asnumpy() < [[[1], [2]], [[3], [4]]])).all()))"
                               % (lo, hi, summary),
        "normal, no shape": "x = mx.nd.random.normal(%s, %s)\n%s" % (lo, hi, summary),
        "exponential of arrays": "x = mx.nd.random.exponential(mx.nd.array([1, 2]), shape=(2, 2))\n%s" % summary,
        "gamma float64 parameters": "x = mx.nd.random.gamma(mx.nd.array([1, 2], dtype='float64'), "
                                    "mx.nd.array([1, 2], dtype='float64'), shape=4)\n%s" % summary,
        "poisson float16 out": "x = mx.nd.random.poisson(mx.nd.array([1, 2]), shape=(3,), dtype='float16')\n%s" % summary,
        "negative binomials": "x = [mx.nd.random.negative_binomial(mx.nd.array([2.5]), mx.nd.array([0.5]), shape=(5,)), "
                              "mx.nd.random.generalized_negative_binomial(mx.nd.array([2, 3]), mx.nd.array([0.5, 0]))]\n%s" % summary,
        "by their op names": "x = [mx.nd.sample_uniform(mx.nd.array([0]), mx.nd.array([1]), shape=(2,)), "
                             "mx.nd._internal._sample_normal(mx.nd.array([0]), mx.nd.array([1])), "
                             "mx.nd.sample_poisson(mx.nd.array([3]), shape=2)]\n%s" % summary,
        "a mix of arrays and numbers": "r = mx.nd.random.uniform(mx.nd.array([0, 1]), 2)",
        "neither": "r = mx.nd.random.normal('a', 2)",
        "symbols": "s = mx.sym.random.normal(mx.sym.var('m'), mx.sym.var('s'), shape=(4,))\n"
                   "r = [s.list_arguments(), s.infer_shape(m=(2, 3)), s.infer_type(m='float64')]",
        "partial shapes": "s = mx.sym.sample_uniform(mx.sym.var('b'), mx.sym.var('c'), shape=(3,))\n"
                          "r = [s.infer_shape_partial(), s.infer_shape_partial(b=(2, 0))]",
        "no gradient to the parameters": "lo = mx.nd.array([0, 1]); hi = mx.nd.array([1, 3]); lo.attach_grad(); hi.attach_grad()\n"
                                         "with mx.autograd.record():\n    y = mx.nd.sample_uniform(lo, hi, shape=3)\n"
                                         "y.backward()\nr = [lo.grad, hi.grad]",
        "like": "x = [mx.nd.random.uniform_like(mx.nd.ones((2, 3)), low=5, high=6), "
                "mx.nd.random.normal_like(data=mx.nd.ones((4,), dtype='float64')), "
                "mx.nd.random.poisson_like(mx.nd.array([1, 2], dtype='float16'), lam=4), "
                "mx.nd.random.gamma_like(mx.nd.ones((1, 2)), alpha=2), mx.nd.random.exponential_like(mx.nd.ones(3)), "
                "mx.nd.random.negative_binomial_like(mx.nd.ones(3), k=2, p=0.3), "
                "mx.nd.random.generalized_negative_binomial_like(mx.nd.ones(3), mu=2, alpha=0.3)]\n%s\n"
                "r.append(bool(((x[0].asnumpy() >= 5) & (x[0].asnumpy() < 6)).all()))" % summary,
        "like, no gradient to data": "x = mx.nd.ones((2, 2)); x.attach_grad()\nwith mx.autograd.record():\n"
                                     "    y = mx.nd.random.normal_like(x) + 3 * x\ny.backward()\nr = x.grad",
        "like on symbols": "s = mx.sym.random.uniform_like(mx.sym.var('a'), low=2)\n"
                           "r = [s.list_arguments(), s.infer_shape(a=(2, 3)), s.infer_type(a='float64')]",
        "like, bad bounds": "r = mx.nd.random.uniform_like(mx.nd.ones(2), low=3, high=1).asnumpy()",
        "like, no shape": "r = mx.nd.random.uniform_like(mx.nd.ones(2), shape=(3,))",
        "bad parameters raise at the wait": "r = []\nfor make in (lambda: mx.nd.random.normal(0, -1, shape=(2,)), "
                                            "lambda: mx.nd.random.gamma(-1, shape=(2,)), "
                                            "lambda: mx.nd.random.uniform_like(mx.nd.ones(2), low=3, high=1)):\n"
                                            "    x = make(); r.append('returned')\n"
                                            "    try:\n        x.asnumpy()\n"
                                            "    except mx.base.MXNetError:\n        r.append('raised at the wait')",
        "and on symbols at forward": "s = mx.sym.random.uniform(low=2, high=1, shape=(2,)); e = s.simple_bind(mx.cpu()); "
                                     "r = ['bound']\ntry:\n    e.forward()\n    e.outputs[0].asnumpy()\n"
                                     "except mx.base.MXNetError:\n    r.append('raised')",
        "unique zipfian": "x = mx.nd._internal._sample_unique_zipfian(range_max=10, shape=(3, 4))\n%s\n"
                          "r.append([len(set(row)) for row in x[0].asnumpy().tolist()])" % summary,
        "unique zipfian, too many": "r = mx.nd._internal._sample_unique_zipfian(range_max=3, shape=(3, 4))[0].asnumpy()",
    }, messages={"a mix of arrays and numbers": "Distribution parameters must all have the same type",
                 "neither": "Distribution parameters must be either NDArray or numbers",
                 "unique zipfian, too many": "cannot exceed the number of possible classes"})


def test_histogram_and_the_older_ndarray_functions():
    """mx.nd.histogram (equal bins of a range, or given edges; an integer dtype truncates the
    edges), onehot_encode, fill_element_0index, _copyto, _set_value and khatri_rao."""
    d = "d = mx.nd.array([0, 1, 2, 3, 4, 5, 6, 7, 8])\n"
    assert_parity({
        "equal bins": d + "r = list(mx.nd.histogram(d, bins=3, range=(0, 6)))",
        "NumPy numbers": d + "r = list(mx.nd.histogram(d, bins=np.int64(3), range=(np.float32(0), np.float64(6))))",
        "given edges": d + "r = list(mx.nd.histogram(d, bins=mx.nd.array([0, 2.5, 4, 7])))",
        "the internal op": d + "r = list(mx.nd._internal._histogram(d, bin_cnt=4, range=(1, 7)))",
        "float64 data": "r = list(mx.nd.histogram(mx.nd.array([[0, 1.5], [2, 6]], dtype='float64'), bins=4, range=(0, 6)))",
        "integer data": "r = [list(mx.nd.histogram(mx.nd.array([v], dtype='int32'), bins=4, range=(0, 6))) "
                        "for v in range(7)]",
        "an empty range": "r = list(mx.nd.histogram(mx.nd.array([1., 2]), bins=2, range=(1, 1)))",
        "NaN": "r = list(mx.nd.histogram(mx.nd.array([1., 2, float('nan')]), bins=2, range=(0, 2)))",
        "no range": d + "r = list(mx.nd.histogram(d, bins=4))",
        "bins of another type": d + "r = mx.nd.histogram(d, bins='a')",
        "on symbols": "s = mx.sym.histogram(mx.sym.var('x'), bins=5, range=(0, 1))\n"
                      "r = [s.list_arguments(), s.infer_shape(x=(3, 4)), s.infer_type(x='float64')]",
        "symbols need a range": "r = mx.sym.histogram(mx.sym.var('x'), bins=5)",
        "edges on symbols": "s = mx.sym.histogram(mx.sym.var('x'), bins=mx.sym.var('b'))\n"
                            "r = [s.list_arguments(), s.infer_shape(x=(3, 4), b=(6,))]",
        "onehot_encode": "out = mx.nd.zeros((3, 5)); r = [mx.nd.onehot_encode(mx.nd.array([1, 0, 3]), out), out]",
        "out of range": "r = mx.nd._internal._onehot_encode(mx.nd.array([1, 7]), mx.nd.ones((2, 4)))",
        "fill_element_0index": "lhs = mx.nd.array([[1, 2, 3], [4, 5, 6]])\n"
                               "r = [mx.nd.fill_element_0index(lhs, mx.nd.array([10, 20]), mx.nd.array([2, 0])), lhs, "
                               "mx.nd.fill_element_0index(lhs, mx.nd.array([10, 20]), mx.nd.array([5, -1]))]",
        "_copyto": "x = mx.nd.array([1, 2, 3]); y = mx.nd.zeros(3); r = [mx.nd._internal._copyto(x, out=y), y]",
        "_copyto of another shape": "r = mx.nd._internal._copyto(mx.nd.array([1, 2, 3]), out=mx.nd.zeros(2))",
        "_set_value": "o = mx.nd.zeros((2, 3), dtype='int32'); r = [mx.nd._internal._set_value(src=3.0, out=o), o]",
        "_set_value without out": "r = mx.nd._internal._set_value(src=3.0)",
        "khatri_rao": "r = [mx.nd.khatri_rao(mx.nd.array([[1, 2], [3, 4]]), mx.nd.array([[1, 0], [2, 1], [0, 3]])), "
                      "mx.nd.khatri_rao(mx.nd.array([[1, 2]])), "
                      "mx.nd.khatri_rao(*[mx.nd.array(np.random.RandomState(i).rand(i + 1, 3)) for i in range(3)])]",
        "khatri_rao on symbols": "r = mx.sym.khatri_rao(mx.sym.var('a'), mx.sym.var('b')).infer_shape(a=(2, 3), b=(4, 3))",
        "khatri_rao of other columns": "r = mx.nd.khatri_rao(mx.nd.ones((2, 3)), mx.nd.ones((2, 2)))",
        "khatri_rao of two dtypes": "r = mx.nd.khatri_rao(mx.nd.ones((2, 3)), mx.nd.ones((2, 3), dtype='float64'))",
        "fill_element_0index of two dtypes": "r = mx.nd.fill_element_0index(mx.nd.ones((2, 3)), mx.nd.ones(2, dtype='float64'), "
                                             "mx.nd.array([0, 1]))",
    }, messages={"bins of another type": "bins argument should be either an integer or an NDArray",
                 "symbols need a range": "null range is not supported in symbol mode"})


def test_im2col_and_col2im():
    """The sliding blocks of images as columns and back (summing overlaps), with stride, dilation,
    padding, and each one's gradient (the other one). In 2-D: MXNet 1.9.1's im2col fails on 1-D
    and 3-D images (the conformance suite runs mxplug's 3-D case against the CPU in float64)."""
    grads = ("x.attach_grad()\nwith mx.autograd.record():\n    y = {call}\n"
             "y.backward(mx.nd.array(np.random.RandomState(1).randn(*y.shape)))\nr = [y, x.grad]")
    image = "x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 5, 6))\n"
    assert_parity({
        "im2col": "x = mx.nd.arange(24).reshape((1, 2, 3, 4)); r = mx.nd.im2col(x, kernel=(2, 2))",
        "stride, dilate, pad": image + grads.format(
            call="mx.nd.im2col(x, kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 1))"),
        "col2im": "x = mx.nd.array(np.random.RandomState(0).randn(2, 18, 18))\n" + grads.format(
            call="mx.nd.col2im(x, output_size=(5, 6), kernel=(3, 2), stride=(2, 1), dilate=(1, 2), pad=(1, 1))"),
        "col2im of ones": "r = mx.nd.col2im(mx.nd.ones((1, 8, 6)), output_size=(3, 4), kernel=(2, 2))",
        "float16": "r = mx.nd.im2col(mx.nd.ones((2, 1, 5, 5), dtype='float16'), kernel=(3, 3), stride=(2, 2), pad=(1, 1))",
        "on symbols": "r = [mx.sym.im2col(mx.sym.var('d'), kernel=(2, 2)).infer_shape(d=(2, 3, 4, 5)), "
                      "mx.sym.col2im(mx.sym.var('d'), output_size=(4, 5), kernel=(2, 2)).infer_shape(d=(2, 12, 12))]",
        "a kernel larger than the image": "r = mx.nd.im2col(mx.nd.ones((1, 1, 3, 4)), kernel=(5, 5))",
        "columns that do not fit": "r = mx.nd.col2im(mx.nd.ones((1, 8, 5)), output_size=(3, 4), kernel=(2, 2))",
    }, rtol=1e-5, messages={"a kernel larger than the image": "kernel size exceed input",
                            "columns that do not fit": "output size does not match convolution parameters"})


def test_crop_svm_output_and_kl_sparse_reg():
    """MXNet's legacy layers Crop (by h_w at an offset, centred, or like a second input; the
    gradient into the window), SVMOutput (the L2- and L1-SVM gradients, whatever the head
    gradient) and IdentityAttachKLSparseReg (the moving mean folded in at backward, the penalty's
    gradient added), through executors as their users ran them."""
    bind = ("def run(sym, head=None, **arrays):\n"
            "    e = sym.simple_bind(mx.cpu(), **{k: v.shape for k, v in arrays.items()})\n"
            "    e.forward(is_train=True, **arrays)\n"
            "    e.backward(head)\n"
            "    return e.outputs + [e.grad_dict[k] for k in sorted(arrays)] + list(e.aux_dict.values())\n"
            "rs = np.random.RandomState(0)\n"
            "x = mx.nd.array(rs.randn(2, 3, 5, 6)); like = mx.nd.zeros((1, 1, 3, 4))\n"
            "og = lambda *s: mx.nd.array(rs.randn(*s))\n")
    d = "d = mx.nd.array([[0.5, -0.2, 1.0], [0.1, 0.3, -0.4], [2.0, -3.0, 0.9]]); l = mx.nd.array([2, 0, 1])\n"
    svm = "r = run(mx.sym.SVMOutput(mx.sym.var('d'), mx.sym.var('l'){kw}), d=d, l=l)"
    kl = ("s = mx.sym.IdentityAttachKLSparseReg(mx.sym.var('d'), sparseness_target=0.2, penalty=0.01, momentum=0.8)\n"
          "e = s.simple_bind(mx.cpu(), d=(4, 3))\n"
          "r = []\n"
          "for step in range(2):\n"
          "    e.forward(is_train=True, d=mx.nd.array(rs.rand(4, 3)))\n"
          "    e.backward(og(4, 3))\n"
          # MXNet's backward writes the moving mean without telling its engine, so a copy queued
          # after it may read the old value; waiting makes MXNet's own answer deterministic.
          "    mx.nd.waitall()\n"
          "    r += [e.outputs[0], e.grad_dict['d'], e.aux_dict[s.list_auxiliary_states()[0]].copy()]\n")
    assert_parity({
        "crop h_w at an offset": bind + "r = run(mx.sym.Crop(mx.sym.var('x'), num_args=1, h_w=(2, 3), offset=(1, 2)), "
                                        "og(2, 3, 2, 3), x=x)",
        "crop centred": bind + "r = run(mx.sym.Crop(mx.sym.var('x'), num_args=1, h_w=(2, 3), center_crop=True), "
                               "og(2, 3, 2, 3), x=x)",
        "crop like": bind + "r = run(mx.sym.Crop(mx.sym.var('x'), mx.sym.var('y'), num_args=2), og(2, 3, 3, 4), x=x, y=like)",
        "crop like, centred": bind + "r = run(mx.sym.Crop(mx.sym.var('x'), mx.sym.var('y'), num_args=2, center_crop=True), "
                                     "og(2, 3, 3, 4), x=x, y=like)",
        "crop imperative": bind + "r = [mx.nd.Crop(x, num_args=1, h_w=(2, 2)), mx.nd.Crop(x, like, num_args=2, offset=(2, 1))]",
        "crop shapes": "r = [mx.sym.Crop(mx.sym.var('a'), mx.sym.var('b'), num_args=2).infer_shape(a=(2, 3, 5, 6), b=(1, 1, 3, 4)), "
                       "mx.sym.Crop(mx.sym.var('a'), num_args=1, h_w=(2, 2)).list_arguments()]",
        "crop too large": "r = mx.nd.Crop(mx.nd.ones((1, 1, 4, 4)), num_args=1, h_w=(5, 2))",
        "crop of 3-d data": "r = mx.sym.Crop(mx.sym.var('a'), num_args=1, h_w=(2, 2)).infer_shape(a=(2, 3, 4))",
        "svm": bind + d + svm.format(kw=""),
        "svm margin and coefficient": bind + d + svm.format(kw=", margin=0.5, regularization_coefficient=2.0"),
        "svm linear": bind + d + svm.format(kw=", use_linear=True"),
        "svm rows of a 3-d array": bind + "d = mx.nd.array(np.arange(12).reshape(2, 3, 2) / 10.); "
                                          "l = mx.nd.array([[1, 0, 1], [0, 1, 1]])\n" + svm.format(kw=""),
        "svm shapes": "r = [mx.sym.SVMOutput(mx.sym.var('d')).infer_shape(d=(4, 5)), "
                      "mx.sym.SVMOutput(mx.sym.var('d')).list_arguments()[1].endswith('label')]",
        "kl sparse reg": bind + kl,
        "kl sparse reg names": "s = mx.sym.IdentityAttachKLSparseReg(mx.sym.var('d'))\n"
                               "r = [s.list_arguments(), s.infer_shape(d=(4, 3))]",
    }, rtol=1e-5, messages={"crop too large": "should be less than the input data's height",
                            "crop of 3-d data": "4D"})


def test_casts_to_narrow_and_unsigned_types():
    """Cast and the init ops' dtype: a negative or too large float becomes uint8 by wrapping, as
    on MXNet's CPU and in NumPy (the same on a GPU, where a straight conversion saturates), and a
    cast to bool is 1 wherever the element is not zero. (mxplug stores bool as uint8 and reports
    uint8, docs/python.md: the bool cases compare the values.)"""
    x = "x = mx.nd.array([-1.5, 300.0, -200.0, 0.0, 0.25, 255.9])\n"
    assert_parity({
        "to uint8": x + "r = x.astype('uint8')",
        "to int8 and int32": x + "r = [x.astype('int8'), x.astype('int32')]",
        "from float64 and float16": x + "r = [x.astype('float64').astype('uint8'), x.astype('float16').astype('uint8')]",
        "linspace as uint8": "r = mx.nd.linspace(-1, 2, 4, dtype='uint8')",
        "arange as uint8": "r = mx.nd.arange(-3, 3, dtype='uint8')",
        "to bool": x + "r = x.astype('bool').asnumpy().astype('int64')",
        "int to bool": "r = mx.nd.array([0, 3, -2], dtype='int32').astype('bool').asnumpy().astype('int64')",
    })


def test_softmax_length_and_dtype_with_their_gradients():
    """softmax's length input (use_length: each line's first length elements, the rest 0; the
    lengths get a zero gradient) along the last axis and another, and its output dtype (the
    gradient in the input's); log_softmax and softmin have no length input."""
    grads = ("x.attach_grad(); ln.attach_grad()\nwith mx.autograd.record():\n    y = {call}\n"
             "y.backward(mx.nd.array(np.random.RandomState(1).randn(*y.shape), dtype=y.dtype))\nr = [y, x.grad, ln.grad]")
    rows = "x = mx.nd.array(np.random.RandomState(0).randn(3, 4)); ln = mx.nd.array([2, 4, 0], dtype='int32')\n"
    cube = ("x = mx.nd.array(np.random.RandomState(0).randn(2, 3, 4))\n"
            "ln = mx.nd.array([[1, 2, 3, 0], [3, 3, 1, 2]], dtype='int64')\n")
    assert_parity({
        "rows": rows + grads.format(call="mx.nd.softmax(x, ln, use_length=True)"),
        "axis 1": cube + grads.format(call="mx.nd.softmax(x, ln, axis=1, use_length=True)"),
        "temperature": rows + "r = mx.nd.softmax(x, ln, use_length=True, temperature=2.0)",
        "a negative length": "r = mx.nd.softmax(mx.nd.ones((2, 3)), mx.nd.array([-1, 2], dtype='int32'), use_length=True)",
        "float lengths": rows + "r = mx.nd.softmax(x, ln.astype('float32'), use_length=True)",
        "symbol": "s = mx.sym.softmax(mx.sym.var('d'), mx.sym.var('len'), use_length=True)\n"
                  "r = [s.list_arguments(), s.infer_shape(d=(3, 4)), mx.sym.softmax(mx.sym.var('d')).list_arguments()]",
        "log_softmax": "r = mx.nd.log_softmax(mx.nd.ones((2, 3)), use_length=True)",
        "dtype": "x = mx.nd.array(np.random.RandomState(0).randn(3, 4), dtype='float16')\n"
                 "r = [mx.nd.softmax(x, dtype='float32'), mx.nd.log_softmax(x, dtype='float64'), "
                 "mx.nd.softmax(x.astype('float64'), dtype='float32')]",
        "dtype gradient": "x = mx.nd.array(np.random.RandomState(0).randn(3, 4)); x.attach_grad()\n"
                          "with mx.autograd.record():\n    y = mx.nd.softmax(x, dtype='float64')\n"
                          "y.backward(mx.nd.array(np.random.RandomState(1).randn(3, 4), dtype='float64')); r = [y, x.grad]",
        "integer dtype": "r = mx.nd.softmax(mx.nd.ones((2, 3)), dtype='int32')",
    }, rtol=2e-3, messages={"float lengths": "only support integer types"})


def test_util_gpu_queries_on_a_machine_without_gpus():
    """mx.util's GPU queries where there is no GPU (as on this machine, and MXNet's CPU build);
    the compute capability on a GPU is test_cuda.py's, against PyTorch's."""
    assert_parity({
        "gpu count": "r = mx.util.get_gpu_count()",
        "capability of a cpu context": "r = mx.util.get_cuda_compute_capability(mx.cpu())",
        "environment": "mx.util.setenv('MXPLUG_TEST_VAR', 'x'); r = [mx.util.getenv('MXPLUG_TEST_VAR')]\n"
                       "mx.util.setenv('MXPLUG_TEST_VAR', None); r.append(mx.util.getenv('MXPLUG_TEST_VAR'))",
    }, messages={"capability of a cpu context": "Expecting a gpu context to get cuda compute capability, "
                                                "while received ctx cpu(0)"})


def test_setting_an_element_from_an_array_of_one_element():
    """x[i] = value where value has leading axes of length 1 beyond the target's (ImageIter
    writes each label so); a value that does not broadcast is refused as MXNet refuses it."""
    assert_parity({
        "into a vector": "a = mx.nd.zeros(3); a[1] = mx.nd.array([5]); a[2] = mx.nd.array([[6]]); r = a",
        "a row": "b = mx.nd.zeros((2, 3)); b[0] = mx.nd.array([[1, 2, 3]]); b[1] = np.array([[[4, 5, 6]]]); r = b",
        "too long": "b = mx.nd.zeros((2, 3)); b[1] = mx.nd.array([1, 2]); r = b",
    })


def test_ctc_loss_and_its_gradient():
    """CTCLoss: the loss per sequence and its gradient (scaled by the head gradient), blank first
    or last, with data and label lengths, integer labels, the symbol's names; and its errors.
    (MXNet 1.9.1's CPU kernel fails in float64; mxplug's float64 is test_conformance.py's.)"""
    d = ("rs = np.random.RandomState(0); d = mx.nd.array(rs.randn(5, 2, 4)); l = mx.nd.array([[1, 2, 0], [3, 3, 1]])\n")
    assert_parity({
        "loss and gradient": d + "d.attach_grad()\nwith mx.autograd.record():\n    o = mx.nd.CTCLoss(d, l)\n"
                                 "o.backward(mx.nd.array([1.0, 2.0])); r = [o, d.grad]",
        "blank last": d + "r = mx.nd.CTCLoss(d, mx.nd.array([[0, 1, -1], [2, 2, 0]]), blank_label='last')",
        "lengths": d + "r = mx.nd.CTCLoss(d, l, mx.nd.array([4, 5]), mx.nd.array([1, 3]), use_data_lengths=True, "
                       "use_label_lengths=True)",
        "integer labels, alias": d + "r = mx.nd.ctc_loss(d, l.astype('int32'))",
        "executor": d + "s = mx.sym.CTCLoss(mx.sym.var('d'), mx.sym.var('l'))\n"
                        "e = s.simple_bind(mx.cpu(), d=(5, 2, 4), l=(2, 3)); e.forward(is_train=True, d=d, l=l)\n"
                        "e.backward(mx.nd.ones(2)); r = [e.outputs[0], e.grad_dict['d'], s.list_outputs()]",
        "names": "s = mx.sym.CTCLoss(mx.sym.var('d'), mx.sym.var('l'), use_label_lengths=True)\n"
                 "t = mx.sym.CTCLoss(mx.sym.var('d'), mx.sym.var('l'), label_lengths=mx.sym.var('ll'), use_label_lengths=True)\n"
                 "r = [s.list_arguments(), t.infer_shape(d=(5, 2, 4), l=(2, 3), ll=(2,))]",
        "label longer than the data": "r = mx.nd.CTCLoss(mx.nd.ones((2, 1, 4)), mx.nd.array([[1, 1, 1]]))",
    }, rtol=1e-5, messages={"label longer than the data": "The max number of labels cannot exceed the maximum "
                                                          "sequence length of the data"})


def test_roi_pooling_and_its_gradient():
    """ROIPooling: rois scaled, rounded and clipped, bins of uneven sizes, an roi partly and one
    wholly outside the map, the gradient added where each maximum was (overlapping rois)."""
    d = ("rs = np.random.RandomState(1); x = mx.nd.array(rs.randn(2, 3, 9, 11))\n"
         "rois = mx.nd.array([[0, 0, 0, 20, 16], [1, 3.3, 2.7, 12.2, 9.9], [0, 14, 10, 30, 40], [1, 2, 2, 6, 5],"
         " [0, 40, 40, 50, 50]])\n")
    assert_parity({
        "forward": d + "r = mx.nd.ROIPooling(x, rois, pooled_size=(3, 2), spatial_scale=0.5)",
        "backward": d + "x.attach_grad()\nwith mx.autograd.record():\n"
                        "    y = mx.nd.ROIPooling(x, rois, pooled_size=(2, 4), spatial_scale=0.625)\n"
                        "y.backward(mx.nd.array(rs.randn(*y.shape))); r = [y, x.grad]",
        "executor": d + "s = mx.sym.ROIPooling(mx.sym.var('d'), mx.sym.var('r'), pooled_size=(2, 2), spatial_scale=1.0)\n"
                        "e = s.simple_bind(mx.cpu(), d=x.shape, r=rois.shape, grad_req={'d': 'write', 'r': 'null'})\n"
                        "e.forward(is_train=True, d=x, r=rois); e.backward(mx.nd.ones((5, 3, 2, 2)))\n"
                        "r = [e.outputs[0], e.grad_dict['d'], s.list_outputs(), s.infer_shape(d=(2, 3, 9, 11), r=(5, 5))]",
        "3-d data": "r = mx.sym.ROIPooling(mx.sym.var('d'), mx.sym.var('r'), pooled_size=(2, 2), spatial_scale=1.0)"
                    ".infer_shape(d=(3, 9, 11), r=(5, 5))",
        "missing pooled_size": "r = mx.nd.ROIPooling(mx.nd.ones((1, 1, 4, 4)), mx.nd.array([[0, 0, 0, 3, 3]]), spatial_scale=1.0)",
    }, rtol=1e-5, messages={"3-d data": "4D"})


def test_grid_generator_bilinear_sampler_and_spatial_transformer():
    """The spatial transformer family: affine and warp grids, bilinear sampling with points
    outside the image, the gradients of data, grid, affine parameters and flow. (The grid
    generator and the spatial transformer compute the grid in double, MXNet in float.)"""
    d = ("rs = np.random.RandomState(2); x = mx.nd.array(rs.randn(2, 3, 5, 6))\n"
         # (no grid point on a pixel boundary: the gradient jumps there, and float rounding decides)
         "theta = mx.nd.array([[0.83, 0.21, 0.07, -0.13, 1.07, -0.19], [1.27, -0.41, 0.29, 0.53, 0.71, 0.61]])\n"
         "flow = mx.nd.array(rs.randn(2, 2, 4, 3) * 2)\n"
         "def grads(f, *args):\n"
         "    for a in args:\n"
         "        a.attach_grad()\n"
         "    with mx.autograd.record():\n"
         "        y = f(*args)\n"
         "    y.backward(mx.nd.array(rs.randn(*y.shape)))\n"
         "    return [y] + [a.grad for a in args]\n")
    assert_parity({
        "affine grid": d + "r = grads(lambda t: mx.nd.GridGenerator(t, transform_type='affine', target_shape=(4, 7)), theta)",
        "warp grid": d + "r = grads(lambda f: mx.nd.GridGenerator(f, transform_type='warp'), flow)",
        "sampler": d + "g = mx.nd.array(rs.uniform(-1.3, 1.3, (2, 2, 4, 3)))\n"
                       "r = grads(lambda a, b: mx.nd.BilinearSampler(a, b), x, g)",
        "sampler of an affine grid": d + "r = grads(lambda a, t: mx.nd.BilinearSampler(a, mx.nd.GridGenerator(t, "
                                         "transform_type='affine', target_shape=(3, 4))), x, theta)",
        "spatial transformer": d + "r = grads(lambda a, t: mx.nd.SpatialTransformer(a, t, target_shape=(3, 4), "
                                   "transform_type='affine', sampler_type='bilinear'), x, theta)",
        "executor": d + "s = mx.sym.SpatialTransformer(mx.sym.var('d'), mx.sym.var('l'), target_shape=(4, 4), "
                        "transform_type='affine', sampler_type='bilinear')\n"
                        "e = s.simple_bind(mx.cpu(), d=x.shape, l=theta.shape); e.forward(is_train=True, d=x, l=theta)\n"
                        "e.backward(mx.nd.ones((2, 3, 4, 4)))\n"
                        "r = [e.outputs[0], e.grad_dict['d'], e.grad_dict['l'], s.list_arguments(), "
                        "s.infer_shape(d=(2, 3, 5, 6))]",
        "shapes": "r = [mx.sym.BilinearSampler(mx.sym.var('d'), mx.sym.var('g')).infer_shape(d=(2, 3, 6, 7), g=(2, 2, 4, 5)), "
                  "mx.sym.GridGenerator(mx.sym.var('d'), transform_type='warp').infer_shape(d=(2, 2, 4, 5))]",
        "affine without a target": "r = mx.nd.GridGenerator(mx.nd.ones((1, 6)), transform_type='affine')",
        "grid of another batch": "r = mx.nd.BilinearSampler(mx.nd.ones((2, 1, 4, 4)), mx.nd.ones((3, 2, 4, 4)))",
    }, rtol=1e-4)


def test_norm_out_dtype():
    """norm takes out_dtype: the data's own dtype works on both; MXNet 1.9.1's kernels fail on
    another (at the wait), mxplug refuses it when the call is made (Note [norm out_dtype])."""
    x = "x = mx.nd.array([[1, -2], [3, 4]], dtype='float32')\n"
    assert_parity({
        "same dtype": x + "r = (mx.nd.norm(x, out_dtype='float32'), mx.nd.norm(x, ord=1, axis=1, out_dtype='float32'))",
        "None": x + "r = mx.nd.norm(x, out_dtype=None, keepdims=True)",
        "another dtype": x + "r = mx.nd.norm(x, out_dtype='float64')",
        "float16 to float32": "r = mx.nd.norm(mx.nd.ones((2, 2), dtype='float16'), out_dtype='float32')",
        "symbol same dtype": "r = mx.sym.norm(mx.sym.var('a'), out_dtype='float16').infer_type(a='float16')",
        "unknown dtype name": x + "r = mx.nd.norm(x, out_dtype='bfloat7')",
    })


def test_correlation_and_its_gradient():
    grads = ("rs = np.random.RandomState(3)\n"
             "a = mx.nd.array(rs.randn(*%r)); b = mx.nd.array(rs.randn(*%r)); a.attach_grad(); b.attach_grad()\n"
             "with mx.autograd.record():\n    y = mx.nd.Correlation(a, b, **%r)\n"
             "y.backward(mx.nd.array(rs.randn(*y.shape))); r = (y, a.grad, b.grad)")
    shape = (2, 3, 9, 8)
    assert_parity({
        "default": grads % (shape, shape, {}),
        "patches, strides and pad": grads % (shape, shape, dict(kernel_size=3, max_displacement=2, stride1=2, stride2=1,
                                                                pad_size=2)),
        "stride2 of 2": grads % ((1, 2, 10, 11), (1, 2, 10, 11), dict(max_displacement=4, stride2=2, pad_size=4)),
        "subtraction": grads % (shape, shape, dict(kernel_size=3, max_displacement=1, pad_size=1, is_multiply=False)),
        "symbol": "s = mx.sym.Correlation(mx.sym.var('a'), mx.sym.var('b'), kernel_size=3, max_displacement=2, "
                  "stride1=2, pad_size=2)\nr = (s.list_arguments(), s.list_outputs(), s.infer_shape(a=(2, 3, 9, 8), b=(2, 3, 9, 8)))",
        "too small": "r = mx.nd.Correlation(mx.nd.ones((1, 2, 3, 3)), mx.nd.ones((1, 2, 3, 3)), max_displacement=2)",
        "even kernel": "r = mx.nd.Correlation(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((1, 2, 5, 5)), kernel_size=2)",
    }, rtol=1e-4)


def test_correlation_refuses_what_mxnet_crashes_on(mx):
    # MXNet 1.9.1 aborts the process ("double free or corruption") on inputs of two shapes;
    # mxplug says what is wrong.
    import pytest
    with pytest.raises(mx.base.MXNetError, match="must have the same shape"):
        mx.nd.Correlation(mx.nd.ones((1, 2, 5, 5)), mx.nd.ones((1, 2, 5, 6)))
    # b's shape follows from a's
    s = mx.sym.Correlation(mx.sym.var("a"), mx.sym.var("b"))
    assert s.infer_shape(a=(2, 3, 9, 8))[0] == [(2, 3, 9, 8), (2, 3, 9, 8)]


def test_mxnet_0x_v1_layers_with_their_gradients():
    """Convolution_v1 is Convolution; Pooling_v1 pools zero-padded data (a max reaching into the
    padding is at least 0, an average divides by the whole kernel); BatchNorm_v1's third output
    is the variance. Each through an executor, as MXNet 0.x's models ran."""
    run = ("rs = np.random.RandomState(5)\n"
           "def run(sym, shapes, train=True):\n"
           "    ex = sym.simple_bind(mx.cpu(), **shapes)\n"
           "    for k in sorted(ex.arg_dict): ex.arg_dict[k][:] = rs.uniform(-1, 1, ex.arg_dict[k].shape)\n"
           "    for k in sorted(ex.aux_dict): ex.aux_dict[k][:] = rs.uniform(0.5, 1.5, ex.aux_dict[k].shape)\n"
           "    ex.forward(is_train=train); outs = [o.copy() for o in ex.outputs]\n"
           "    if train: ex.backward([mx.nd.array(rs.uniform(-1, 1, o.shape)) for o in ex.outputs])\n"
           "    return outs, {k: v for k, v in sorted(ex.grad_dict.items())}, {k: v for k, v in sorted(ex.aux_dict.items())}\n"
           "d = mx.sym.var('data')\n")
    pool = run + "s = mx.sym.Pooling_v1(d, %s)\nr = (s.list_arguments(), s.infer_shape(data=(2, 3, 7, 6)), run(s, {'data': (2, 3, 7, 6)}))"
    bn = run + "s = mx.sym.BatchNorm_v1(d, name='bn', %s)\nr = (s.list_arguments(), s.list_auxiliary_states(), s.list_outputs(), run(s, {'data': (4, 3, 5, 2)}, %s))"
    assert_parity({
        "convolution": run + "s = mx.sym.Convolution_v1(d, kernel=(3, 3), num_filter=4, pad=(1, 1), stride=(2, 1), name='c')\n"
                             "r = (s.list_arguments(), run(s, {'data': (2, 3, 7, 6)}))",
        "max with padding": pool % "kernel=(3, 2), pad=(1, 1), stride=(2, 2)",
        "max full, cut windows": pool % "kernel=(3, 3), stride=(2, 2), pooling_convention='full'",
        "avg full with padding": pool % "kernel=(3, 2), pad=(1, 1), stride=(2, 2), pool_type='avg', pooling_convention='full'",
        "avg cut windows": pool % "kernel=(3, 3), stride=(2, 2), pool_type='avg', pooling_convention='full'",
        "sum": pool % "kernel=(2, 2), pad=(1, 0), pool_type='sum'",
        "global": pool % "kernel=(1, 1), global_pool=True, pool_type='avg'",
        "batchnorm train": bn % ("fix_gamma=False", True),
        "batchnorm mean and var": bn % ("fix_gamma=False, output_mean_var=True", True),
        "batchnorm inference mean and var": bn % ("output_mean_var=True, eps=0.01", False),
        "batchnorm global stats": bn % ("use_global_stats=True, fix_gamma=False, output_mean_var=True", True),
    }, rtol=1e-4)


def test_an_index_that_picks_one_element_gives_shape_one():
    """MXNet 1.x has no 0-d arrays: a[i] of a vector and b[i, j] are shape (1,), views where the
    index is on the first axis, and they broadcast as (1,)."""
    a = "a = mx.nd.array([1, 2, 3]); b = mx.nd.array([[1, 2], [3, 4]])\n"
    assert_parity({
        "vector": a + "r = (a[1], a[-1], a[np.int64(2)], a[1:2])",
        "matrix": a + "r = (b[1], b[1, 0], b[1][0], b[-1, -1], b[:, 1], b[1, None])",
        "arithmetic": a + "r = (b[1, 0] + 1, a[1] * b, a[0].asscalar(), float(b[0, 1]))",
        "a view": a + "v = a[1]\nv[:] = 7\nr = a",
        "out of range": a + "r = a[3]",
    }, messages={"out of range": "out of bounds"})
