"""mx.autograd: the same recorded computations under MXNet 1.9.1 and under mxplug give the same
gradients, states and exception classes (parity.py); and gradients against NumPy's finite
differences."""
import numpy as np

from parity import assert_parity

XW = """
x = mx.nd.array([[1., 2.], [3., 4.]]); x.attach_grad()
w = mx.nd.array([[0.5, -1.], [2., 1.]]); w.attach_grad()
"""


def test_gradients_of_recorded_computations():
    assert_parity({
        "ops, arithmetic and reductions": XW + "with mx.autograd.record():\n"
                                               "    y = mx.nd.dot(x, w)\n    z = (mx.nd.tanh(y) * 2 + x / 3 - 1 - y ** 2).sum()\n"
                                               "z.backward(); r = (x.grad, w.grad)",
        "fluent methods and reshape": XW + "with mx.autograd.record():\n"
                                           "    z = (x.exp().reshape((4,)) * w.reshape((4,)).sigmoid()).mean()\n"
                                           "z.backward(); r = (x.grad, w.grad)",
        "broadcasting and scalars on the left": XW + "b = mx.nd.array([1., -2.]); b.attach_grad()\n"
                                                     "with mx.autograd.record():\n    z = (2 - x * b + 1 / (w + 3)).sum()\n"
                                                     "z.backward(); r = (x.grad, w.grad, b.grad)",
        "head gradients": XW + "with mx.autograd.record():\n    y = x * w\n"
                               "y.backward(mx.nd.array([[1., 0.], [2., 3.]])); r = (x.grad, w.grad)",
        "grad_req add accumulates": "x = mx.nd.array([1., 2.]); x.attach_grad(grad_req='add')\n"
                                    "for _ in range(2):\n    with mx.autograd.record():\n        y = (x * x).sum()\n"
                                    "    y.backward()\nr = x.grad",
        "retain_graph": XW + "with mx.autograd.record():\n    y = (x * w).sum()\n"
                             "y.backward(retain_graph=True); first = x.grad.copy(); y.backward(); r = (first, x.grad)",
        "a freed graph": XW + "with mx.autograd.record():\n    y = (x * w).sum()\ny.backward(); y.backward()",
        "nothing recorded": "x = mx.nd.ones(2); x.attach_grad(); y = x * 2; y.backward()",
        "autograd.grad": XW + "with mx.autograd.record():\n    y = (mx.nd.sin(x) * w).sum()\n"
                              "g = mx.autograd.grad(y, [x, w]); r = (g, x.grad)",
        "detach": XW + "with mx.autograd.record():\n    y = (x.detach() * x * w).sum()\ny.backward(); r = x.grad",
        "mark_variables": "x = mx.nd.array([1., 2., 3.]); g = mx.nd.zeros(3)\nmx.autograd.mark_variables([x], [g])\n"
                          "with mx.autograd.record():\n    y = mx.nd.square(x).sum()\ny.backward(); r = g",
        "layers": "rng = np.random.RandomState(3)\n"
                  "data = mx.nd.array(rng.randn(4, 3)); w = mx.nd.array(rng.randn(5, 3)); b = mx.nd.array(rng.randn(5))\n"
                  "label = mx.nd.array([0, 4, 2, 1])\nfor a in (w, b): a.attach_grad()\n"
                  "with mx.autograd.record():\n    h = mx.nd.FullyConnected(data, w, b, num_hidden=5)\n"
                  "    out = mx.nd.SoftmaxOutput(mx.nd.Activation(h, act_type='relu'), label)\n"
                  "out.backward(); r = (out, w.grad, b.grad)",
        "BatchNorm in training": "rng = np.random.RandomState(6)\nx = mx.nd.array(rng.randn(4, 3, 2)); x.attach_grad()\n"
                                 "gamma = mx.nd.array([1., 2., 0.5]); beta = mx.nd.zeros(3); gamma.attach_grad(); beta.attach_grad()\n"
                                 "mm, mv = mx.nd.zeros(3), mx.nd.ones(3)\nwith mx.autograd.record():\n"
                                 "    y = mx.nd.BatchNorm(x, gamma, beta, mm, mv, fix_gamma=False)\n"
                                 "    z = (y * mx.nd.array(rng.randn(4, 3, 2))).sum()\n"
                                 "z.backward(); r = (y, x.grad, gamma.grad, beta.grad)",
    }, messages={"a freed graph": "retain_graph=True"}, rtol=1e-5)


def test_recording_and_training_states():
    assert_parity({
        "states": "ag = mx.autograd; s = [(ag.is_recording(), ag.is_training())]\n"
                  "with ag.record():\n    s.append((ag.is_recording(), ag.is_training()))\n"
                  "    with ag.pause():\n        s.append((ag.is_recording(), ag.is_training()))\n"
                  "    with ag.predict_mode():\n        s.append((ag.is_recording(), ag.is_training()))\n"
                  "with ag.record(train_mode=False):\n    s.append((ag.is_recording(), ag.is_training()))\n"
                  "with ag.train_mode():\n    s.append((ag.is_recording(), ag.is_training()))\n"
                  "s.append((ag.set_recording(True), ag.set_training(True), ag.set_recording(False), "
                  "ag.set_training(False)))\nr = s",
        "Dropout by mode": "x = mx.nd.ones((1000,))\nwith mx.autograd.predict_mode():\n    a = mx.nd.Dropout(x, p=0.5)\n"
                           "with mx.autograd.train_mode():\n    b = mx.nd.Dropout(x, p=0.5)\n"
                           "r = (float(a.sum().asscalar()), 300 < float((b == 0).sum().asscalar()) < 700, "
                           "sorted(set(b.asnumpy().tolist())))",
        "pause inside record": "x = mx.nd.array([1., 2.]); x.attach_grad()\nwith mx.autograd.record():\n"
                               "    y = x * 3\n    with mx.autograd.pause():\n        c = x * 10\n    z = (y * c).sum()\n"
                               "z.backward(); r = x.grad",
    })


FUNCTION = """
class Sigmoid(mx.autograd.Function):
    def forward(self, x):
        y = 1 / (1 + mx.nd.exp(-x))
        self.save_for_backward(y)
        return y
    def backward(self, dy):
        y, = self.saved_tensors
        return dy * y * (1 - y)
"""


def test_functions_written_in_python():
    assert_parity({
        "custom sigmoid": FUNCTION + "x = mx.nd.array([-1., 0., 2.]); x.attach_grad()\n"
                                     "with mx.autograd.record():\n    y = Sigmoid()(x * 2)\n    z = (y * y).sum()\n"
                                     "z.backward(); r = (y, x.grad)",
    }, rtol=1e-5)


def test_gradients_match_finite_differences(mx):
    """The gradient of a small network, recorded, against central differences in float64."""
    rng = np.random.default_rng(8)
    x0, w0 = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))

    def f(x, w):
        h = mx.nd.FullyConnected(x, w, num_hidden=2, no_bias=True)
        return (mx.nd.tanh(h) * mx.nd.sigmoid(x.sum(axis=1, keepdims=True))).sum()

    x, w = mx.nd.array(x0, dtype="float64"), mx.nd.array(w0, dtype="float64")
    x.attach_grad()
    w.attach_grad()
    with mx.autograd.record():
        y = f(x, w)
    y.backward()
    for array, value, got in ((x, x0, x.grad), (w, w0, w.grad)):
        numeric = np.zeros_like(value)
        for i in range(value.size):
            for sign in (1, -1):
                moved = value.copy()
                moved.ravel()[i] += sign * 1e-6
                args = (mx.nd.array(moved, dtype="float64"), w) if array is x else (x, mx.nd.array(moved, dtype="float64"))
                numeric.ravel()[i] += sign * f(*args).asscalar() / 2e-6
        np.testing.assert_allclose(got.asnumpy(), numeric, rtol=1e-6, atol=1e-8)


def test_recording_and_training_are_per_thread_as_in_mxnet():
    # The flags live in the extension (Note [Autograd state]), per thread as MXNet's are: a thread
    # started inside record() neither records nor trains, and the recording thread still does.
    import threading
    import mxplug as mx
    seen = {}

    def probe():
        seen["recording"], seen["training"] = mx.autograd.is_recording(), mx.autograd.is_training()
        x = mx.nd.ones((2,))
        seen["sum"] = (x + x).asnumpy().tolist()  # an operator outside record() in this thread
    with mx.autograd.record():
        t = threading.Thread(target=probe)
        t.start()
        t.join()
        assert mx.autograd.is_recording() and mx.autograd.is_training()
    assert not mx.autograd.is_recording()
    assert seen == {"recording": False, "training": False, "sum": [2.0, 2.0]}
