"""Operators written in Python (mx.operator.CustomOp, CustomOpProp, register; mx.nd.Custom and
mx.sym.Custom), each snippet run under MXNet 1.9.1 and mxplug and compared (parity.py)."""
import os
import subprocess
import sys

import numpy as np

from conftest import PYTHON_PACKAGES
from parity import assert_parity

# Defined in every snippet (each runs in a fresh interpreter): MXNet's tutorial ops.
OPS = r'''
@mx.operator.register("psigmoid")
class SigmoidProp(mx.operator.CustomOpProp):
    def __init__(self):
        super(SigmoidProp, self).__init__(need_top_grad=True)
    def create_operator(self, ctx, shapes, dtypes):
        return Sigmoid()

class Sigmoid(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        y = 1.0 / (1.0 + mx.nd.exp(-in_data[0]))
        self.assign(out_data[0], req[0], y)
    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0]
        self.assign(in_grad[0], req[0], out_grad[0] * y * (1.0 - y))

@mx.operator.register("psoftmax")
class SoftmaxProp(mx.operator.CustomOpProp):
    def __init__(self):
        super(SoftmaxProp, self).__init__(need_top_grad=False)
    def list_arguments(self):
        return ['data', 'label']
    def infer_shape(self, in_shape):
        return [in_shape[0], (in_shape[0][0],)], [in_shape[0]], []
    def create_operator(self, ctx, shapes, dtypes):
        return Softmax()

class Softmax(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0].asnumpy()
        y = np.exp(x - x.max(axis=1, keepdims=True))
        y /= y.sum(axis=1, keepdims=True)
        self.assign(out_data[0], req[0], mx.nd.array(y))
    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        l = in_data[1].asnumpy().ravel().astype(int)
        y = out_data[0].asnumpy()
        y[np.arange(l.shape[0]), l] -= 1.0
        self.assign(in_grad[0], req[0], mx.nd.array(y))
        self.assign(in_grad[1], req[1], mx.nd.zeros(in_data[1].shape))

@mx.operator.register("pscale")
class ScaleProp(mx.operator.CustomOpProp):
    def __init__(self, scale, offset="0"):
        super(ScaleProp, self).__init__()
        self.scale, self.offset = float(scale), float(offset)
        self.kinds = (type(scale).__name__, type(offset).__name__)
    def list_outputs(self):
        return ['scaled', 'sum']
    def list_auxiliary_states(self):
        return ['calls']
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], (in_shape[0][0],)], [(1,)]
    def infer_type(self, in_type):
        return in_type, [in_type[0], np.float64], [np.float32]
    def create_operator(self, ctx, shapes, dtypes):
        return Scale(self.scale, self.offset, ctx, shapes, dtypes)

class Scale(mx.operator.CustomOp):
    def __init__(self, scale, offset, ctx, shapes, dtypes):
        self.scale, self.offset = scale, offset
        self.made = (str(ctx), [list(s) for s in shapes], list(dtypes))
    def forward(self, is_train, req, in_data, out_data, aux):
        x = in_data[0]
        self.assign(out_data[0], req[0], x * self.scale + self.offset)
        self.assign(out_data[1], req[1], mx.nd.sum(x, axis=1).astype('float64'))
        if aux:
            aux[0][:] = aux[0] + 1
    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        g = out_grad[0] * self.scale + mx.nd.broadcast_to(
            out_grad[1].astype('float32').reshape((-1, 1)), shape=in_data[0].shape)
        self.assign(in_grad[0], req[0], g)

@mx.operator.register("pscale_noaux")
class ScaleNoAuxProp(ScaleProp):
    def list_auxiliary_states(self):
        return []
    def infer_shape(self, in_shape):
        return in_shape, [in_shape[0], (in_shape[0][0],)]
    def infer_type(self, in_type):
        return in_type, [in_type[0], np.float64]

x = mx.nd.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
'''


BROKEN = '''
@mx.operator.register("pbroken")
class BrokenProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Broken()
class Broken(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        raise ValueError("broken on purpose")
'''


def cases(snippets):
    return {name: OPS + code for name, code in snippets.items()}


def test_imperative_forward_and_autograd():
    assert_parity(cases({
        "forward": "r = mx.nd.Custom(x, op_type='psigmoid')",
        "autograd": """
x.attach_grad()
with mx.autograd.record():
    y = mx.nd.Custom(x, op_type='psigmoid')
    z = (y * y).sum()
z.backward()
r = [y, x.grad]
""",
        "autograd_two_calls": """
x.attach_grad()
w = mx.nd.array([[2.0, 1.0, 0.5], [0.1, 0.2, 0.3]])
with mx.autograd.record():
    a = mx.nd.Custom(x, op_type='psigmoid')
    b = mx.nd.Custom(x * w, op_type='psigmoid')
    z = (a * b).sum()
z.backward()
r = x.grad
""",
        "kwargs_are_strings_outputs_and_aux": """
calls = mx.nd.zeros((1,))
out = mx.nd.Custom(x, calls, op_type='pscale', scale=2.5)
r = [out[0], out[1], calls]
""",
    }))


def test_symbolic_forward_backward_and_inference():
    assert_parity(cases({
        "lists": """
s = mx.sym.Custom(data=mx.sym.Variable('d'), op_type='pscale', scale=3, name='sc')
r = [s.list_arguments(), s.list_outputs(), s.list_auxiliary_states()]
""",
        "infer": """
s = mx.sym.Custom(data=mx.sym.Variable('d'), op_type='pscale', scale=3, name='sc')
r = [s.infer_shape(d=(4, 5)), s.infer_type(d=np.float32)]
""",
        "missing_inputs_become_variables": """
a = mx.sym.Custom(data=mx.sym.Variable('x'), op_type='psoftmax', name='sm')
b = mx.sym.Custom(mx.sym.Variable('x') * 2, mx.sym.Variable('y'), op_type='psoftmax', name='sm2')
r = [a.list_arguments(), b.list_arguments()]
""",
        "infer_unknown": """
s = mx.sym.Custom(data=mx.sym.Variable('d'), op_type='psigmoid')
r = s.infer_shape_partial()
""",
        "executor": """
d = mx.sym.Variable('d')
s = mx.sym.Custom(data=d * 2, op_type='psigmoid', name='sig')
e = s.simple_bind(mx.cpu(), d=(2, 3))
e.arg_dict['d'][:] = x
e.forward(is_train=True)
e.backward(mx.nd.ones((2, 3)) * 0.5)
r = [e.outputs[0], e.grad_dict['d']]
""",
        "grad_req_add": """
d = mx.sym.Variable('d')
s = mx.sym.Custom(data=d, op_type='psigmoid')
e = s.simple_bind(mx.cpu(), d=(2, 3), grad_req='add')
e.arg_dict['d'][:] = x
e.grad_dict['d'][:] = 1
for _ in range(2):
    e.forward(is_train=True)
    e.backward(mx.nd.ones((2, 3)))
r = e.grad_dict['d']
""",
        "loss_needs_no_head_gradient": """
s = mx.sym.Custom(data=mx.sym.Variable('data'), label=mx.sym.Variable('label'), op_type='psoftmax')
e = s.simple_bind(mx.cpu(), data=(2, 3))
e.arg_dict['data'][:] = x
e.arg_dict['label'][:] = mx.nd.array([2, 0])
e.forward(is_train=True)
e.backward()
r = [s.list_arguments(), e.outputs[0], e.grad_dict['data'], e.grad_dict['label']]
""",
        "two_outputs_and_dtypes_in_executor": """
s = mx.sym.Custom(data=mx.sym.Variable('d'), op_type='pscale_noaux', scale='0.5', offset='1')
e = s.simple_bind(mx.cpu(), d=(2, 3))
e.arg_dict['d'][:] = x
e.forward(is_train=True)
e.backward([mx.nd.ones((2, 3)), mx.nd.ones((2,), dtype='float64') * 2])
r = [e.outputs[0], e.outputs[1], e.grad_dict['d'], s.infer_type(d=np.float32)]
""",
    }))


def test_custom_op_inside_a_custom_op():
    assert_parity(cases({
        "nested": """
@mx.operator.register("pnested")
class NestedProp(mx.operator.CustomOpProp):
    def create_operator(self, ctx, shapes, dtypes):
        return Nested()
class Nested(mx.operator.CustomOp):
    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], mx.nd.Custom(in_data[0], op_type='psigmoid') * 2)
    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        self.assign(in_grad[0], req[0], out_grad[0] * 3)
x.attach_grad()
with mx.autograd.record():
    y = mx.nd.Custom(x, op_type='pnested')
y.backward()
r = [y, x.grad]
""",
    }))


def test_naive_engine_runs_python_on_the_pushing_thread():
    # The naive engine runs each op on the thread that pushed it, which holds the GIL: the
    # Python code runs there (Note [Python custom ops]). Checked against NumPy's sigmoid.
    code = OPS + """
x.attach_grad()
with mx.autograd.record():
    y = mx.nd.Custom(x, op_type='psigmoid')
y.backward(mx.nd.ones((2, 3)))
s = mx.sym.Custom(data=mx.sym.Variable('d'), op_type='psigmoid')
e = s.simple_bind(mx.cpu(), d=(2, 3))
e.arg_dict['d'][:] = x
e.forward(is_train=True)
e.backward(mx.nd.ones((2, 3)))
print(repr([y.asnumpy().tolist(), x.grad.asnumpy().tolist(), e.outputs[0].asnumpy().tolist(),
            e.grad_dict['d'].asnumpy().tolist()]))
"""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES), MXPLUG_ENGINE="naive")
    p = subprocess.run([sys.executable, "-c", "import mxplug as mx, numpy as np\n" + code], env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    y, gx, ey, egx = (np.array(v) for v in eval(p.stdout.strip().splitlines()[-1]))
    xs = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
    want = 1 / (1 + np.exp(-xs))
    for got, ref in ((y, want), (ey, want), (gx, want * (1 - want)), (egx, want * (1 - want))):
        np.testing.assert_allclose(got, ref, rtol=1e-5)


def test_module_trains_through_a_python_loss():
    assert_parity(cases({
        "fit": """
rng = np.random.RandomState(0)
X = rng.randn(40, 6).astype(np.float32)
Y = (X[:, 0] + X[:, 1] > 0).astype(np.float32)
data = mx.sym.Variable('data')
fc = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
net = mx.sym.Custom(data=fc, label=mx.sym.Variable('softmax_label'), op_type='psoftmax', name='softmax')
it = mx.io.NDArrayIter(X, Y, batch_size=10)
mod = mx.mod.Module(net, context=mx.cpu())
mod.bind(it.provide_data, it.provide_label)
mod.init_params(mx.init.Constant(0.1))
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
for epoch in range(2):
    it.reset()
    for batch in it:
        mod.forward_backward(batch)
        mod.update()
r = [mod.get_params()[0]['fc_weight'], mod.get_params()[0]['fc_bias']]
""",
    }))


def test_errors():
    assert_parity(cases({
        "unregistered": "r = mx.nd.Custom(x, op_type='nosuchop')",
        "forward_raises": BROKEN + """
r = mx.nd.Custom(x, op_type='pbroken')
r.asnumpy()
""",
        "still_works_after_a_failure": BROKEN + """
try:
    mx.nd.Custom(x, op_type='pbroken').asnumpy()
except mx.base.MXNetError:
    pass
r = mx.nd.Custom(x, op_type='psigmoid')
""",
    }), messages={"unregistered": "Cannot find custom operator nosuchop"})
