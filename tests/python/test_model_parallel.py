"""Model parallelism (issue 25 item 5): AttrScope(ctx_group=...) with bind/simple_bind(group2ctx=...)
and Module(group2ctxs=...), on CPU contexts. The same snippets run under MXNet 1.9.1 (values,
gradients, where each array lives, errors), and results equal single-context execution (the
serial oracle). Note [Model parallelism] in core/src/executor/executor.cc says how nodes are
placed and copies inserted."""
import os
import subprocess
import sys

import numpy as np

from conftest import PYTHON_PACKAGES
from parity import assert_parity

# Two layers on two "devices" (cpu(1), cpu(2)); data and labels on the default context cpu(0).
NET = """
data = mx.sym.var('data'); label = mx.sym.var('softmax_label')
with mx.AttrScope(ctx_group='dev1'):
    w1 = mx.sym.var('fc1_weight'); b1 = mx.sym.var('fc1_bias')
    h = mx.sym.Activation(mx.sym.FullyConnected(data, w1, b1, num_hidden=5, name='fc1'), act_type='tanh')
with mx.AttrScope(ctx_group='dev2'):
    w2 = mx.sym.var('fc2_weight'); b2 = mx.sym.var('fc2_bias')
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, w2, b2, num_hidden=3, name='fc2'), label, name='sm')
rs = np.random.RandomState(7)
params = {'fc1_weight': rs.randn(5, 4) * 0.5, 'fc1_bias': rs.randn(5) * 0.1,
          'fc2_weight': rs.randn(3, 5) * 0.5, 'fc2_bias': rs.randn(3) * 0.1}
X = rs.randn(6, 4); Y = np.array([0, 1, 2, 1, 0, 2])
groups = {'dev1': mx.cpu(1), 'dev2': mx.cpu(2)}
"""

TWO_GROUPS = """
x = mx.sym.var('x'); y = mx.sym.var('y')
with mx.AttrScope(ctx_group='dev2'):
    z = mx.sym.tanh(x * 2, name='t')
w = z + y
"""


def test_bind_and_simple_bind_place_ops_and_arrays_as_mxnet_does():
    assert_parity({
        "bind": TWO_GROUPS + """
ex = w.bind(mx.cpu(0), {'x': mx.nd.array([0.1, -0.3], ctx=mx.cpu(3)), 'y': mx.nd.array([1., 2.])},
            args_grad={'x': mx.nd.zeros(2, ctx=mx.cpu(1)), 'y': mx.nd.zeros(2, ctx=mx.cpu(1))},
            group2ctx={'dev2': mx.cpu(1)})
ex.forward(is_train=True)
ex.backward(mx.nd.array([1., 3.]))
r = [ex.outputs[0], str(ex.outputs[0].context), ex.grad_dict['x'], ex.grad_dict['y']]""",
        "simple_bind_places_variables_by_group": TWO_GROUPS + """
with mx.AttrScope(ctx_group='dev2'):
    v = mx.sym.var('v')
s = mx.sym.broadcast_add(y + z, v * 3)
ex = s.simple_bind(mx.cpu(0), x=(2,), y=(2,), v=(2,), group2ctx={'dev2': mx.cpu(1)},
                   grad_req={'x': 'null', 'y': 'write', 'v': 'write'})
r = [sorted((k, str(a.context)) for k, a in ex.arg_dict.items()),
     sorted((k, str(a.context)) for k, a in ex.grad_dict.items() if a is not None),
     str(ex.outputs[0].context)]""",
        "network": NET + """
ex = net.simple_bind(mx.cpu(0), data=(6, 4), softmax_label=(6,), group2ctx=groups,
                     grad_req={'data': 'null', 'softmax_label': 'null', 'fc1_weight': 'write',
                               'fc1_bias': 'write', 'fc2_weight': 'write', 'fc2_bias': 'write'})
for k, v in params.items(): ex.arg_dict[k][:] = v
ex.forward(is_train=True, data=mx.nd.array(X), softmax_label=mx.nd.array(Y))
ex.backward()
r = [ex.outputs[0], str(ex.outputs[0].context)] + [
     [ex.grad_dict[k], str(ex.grad_dict[k].context), str(ex.arg_dict[k].context)] for k in sorted(params)]""",
        "module": NET + """
mod = mx.mod.Module(net, context=mx.cpu(0), group2ctxs=groups)
mod.bind(data_shapes=[('data', (6, 4))], label_shapes=[('softmax_label', (6,))])
mod.init_params(arg_params={k: mx.nd.array(v) for k, v in params.items()})
mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5})
for step in range(3):
    mod.forward_backward(mx.io.DataBatch([mx.nd.array(X + step)], [mx.nd.array(Y)]))
    mod.update()
arg, _ = mod.get_params()
r = [arg[k] for k in sorted(arg)] + [mod.get_outputs()[0]]""",
        "missing_group": TWO_GROUPS + """
w.bind(mx.cpu(0), {'x': mx.nd.ones(2), 'y': mx.nd.ones(2)}, group2ctx={'other': mx.cpu(1)})""",
        "argument_elsewhere_without_group2ctx": TWO_GROUPS + """
w.bind(mx.cpu(0), {'x': mx.nd.ones(2, ctx=mx.cpu(3)), 'y': mx.nd.ones(2)})""",
        "gradient_elsewhere_without_group2ctx": TWO_GROUPS + """
w.bind(mx.cpu(0), {'x': mx.nd.ones(2), 'y': mx.nd.ones(2)},
       args_grad={'x': mx.nd.ones(2, ctx=mx.cpu(2)), 'y': mx.nd.ones(2)})""",
    }, messages={
        "missing_group": "The device assignment not found for group dev2",
        "argument_elsewhere_without_group2ctx":
            "Input array is in cpu(3) while binding with ctx=cpu(0). All arguments must be in global "
            "context (cpu(0)) unless group2ctx is specified for cross-device graph.",
        "gradient_elsewhere_without_group2ctx":
            "Gradient array is in cpu(2) while binding with ctx=cpu(0). All gradients must be in "
            "global context (cpu(0)) unless group2ctx is specified for cross-device graph.",
    }, rtol=1e-5)


def test_model_parallel_results_equal_single_context_execution():
    # The serial oracle: the same graphs bound on one context. Covered here beyond what MXNet
    # 1.9.1 accepts: gradients summed from several contexts (grad_req 'add'), an output gradient
    # read on another context, auxiliary states (BatchNorm) in a group, and Module training.
    code = NET + """
import numpy as np
def run(group2ctx, module_groups):
    x = mx.sym.var('x')
    with mx.AttrScope(ctx_group='dev1'):
        a = mx.sym.sin(x * 2)
    with mx.AttrScope(ctx_group='dev2'):
        b = mx.sym.cos(x) * a
        gamma = mx.sym.var('gamma'); beta = mx.sym.var('beta')
        mm = mx.sym.var('mm'); mv = mx.sym.var('mv')
        bn = mx.sym.BatchNorm(mx.sym.reshape(b, shape=(2, 3, 1, 1)), gamma, beta, mm, mv, name='bn')
    out = mx.sym.Group([mx.sym.sum(bn) + mx.sym.sum(a), a])
    ex = out.simple_bind(mx.cpu(0), x=(6,), grad_req={'x': 'add', 'gamma': 'write', 'beta': 'write'},
                         group2ctx=group2ctx)
    ex.arg_dict['x'][:] = np.linspace(-1, 1, 6)
    ex.arg_dict['gamma'][:] = [1., 2., 3.]
    ex.aux_dict['mv'][:] = 1.0
    ex.grad_dict['x'][:] = 0.5
    got = []
    for step in range(2):
        ex.forward(is_train=True)
        ex.backward([mx.nd.ones(1), mx.nd.array(np.arange(6.0))])
        got += [o.asnumpy() for o in ex.outputs] + [ex.grad_dict[k].asnumpy() for k in ('x', 'gamma', 'beta')]
    got += [ex.aux_dict[k].asnumpy() for k in ('mm', 'mv')]
    places = sorted(str(o.context) for o in ex.outputs)
    mod = mx.mod.Module(net, context=[mx.cpu(0), mx.cpu(5)], group2ctxs=module_groups)
    mod.bind(data_shapes=[('data', (6, 4))], label_shapes=[('softmax_label', (6,))])
    mod.init_params(arg_params={k: mx.nd.array(v) for k, v in params.items()})
    mod.init_optimizer(optimizer='sgd', optimizer_params={'learning_rate': 0.5, 'momentum': 0.9})
    for step in range(4):
        mod.forward_backward(mx.io.DataBatch([mx.nd.array(X * (step + 1))], [mx.nd.array(Y)]))
        mod.update()
    got += [v.asnumpy() for _, v in sorted(mod.get_params()[0].items())]
    return got, places

parallel, places = run({'dev1': mx.cpu(1), 'dev2': mx.cpu(2)},
                       {'dev1': [mx.cpu(1), mx.cpu(3)], 'dev2': mx.cpu(2)})
single, single_places = run(None, None)
assert places == ['cpu(1)', 'cpu(2)'] and single_places == ['cpu(0)', 'cpu(0)'], (places, single_places)
assert len(parallel) == len(single)
for p, s in zip(parallel, single):
    np.testing.assert_allclose(p, s, rtol=1e-6, atol=1e-7)
print('ok')
"""
    env = dict(os.environ, PYTHONPATH=str(PYTHON_PACKAGES))
    p = subprocess.run([sys.executable, "-c", "import mxplug as mx\nimport numpy as np\n" + code],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stdout + p.stderr
