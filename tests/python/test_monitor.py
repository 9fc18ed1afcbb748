"""mx.monitor.Monitor and Executor.set_monitor_callback: the same snippets under MXNet 1.9.1 and
mxplug (parity.py): which arrays are reported, under which names, with which statistics."""
from parity import assert_parity

NET = r'''
data = mx.sym.Variable('data')
fc = mx.sym.FullyConnected(data, num_hidden=3, name='fc1')
act = mx.sym.Activation(fc, act_type='relu', name='relu1')
out = mx.sym.SoftmaxOutput(act, name='softmax')
e = out.simple_bind(mx.cpu(), data=(2, 4))
for k, v in e.arg_dict.items():
    v[:] = np.arange(v.size).reshape(v.shape) * 0.1 - 0.3
def table(rows):
    return [(n, k, float(v.split()[0])) for n, k, v in rows]
'''


def test_monitor_reports_what_each_op_computes():
    assert_parity({
        "callback_names": NET + """
names = []
e.set_monitor_callback(lambda n, a: names.append(n if isinstance(n, str) else n.decode()))
e.forward(is_train=True)
e.backward()
r = names
""",
        "statistics": NET + """
mon = mx.monitor.Monitor(1, sort=True)
mon.install(e)
mon.tic()
e.forward(is_train=True)
e.backward()
r = table(mon.toc())
""",
        "pattern_and_interval": NET + """
mon = mx.mon.Monitor(2, pattern='fc1_.*')
mon.install(e)
r = []
for step in range(3):
    mon.tic()
    e.forward(is_train=True)
    e.backward()
    r.append(table(mon.toc()))
""",
        "custom_statistic": NET + """
mon = mx.monitor.Monitor(1, stat_func=lambda x: [mx.nd.max(x), mx.nd.min(x)], pattern='.*output')
mon.install(e)
mon.tic()
e.forward(is_train=False)
r = [(n, k, [float(x) for x in v.split()]) for n, k, v in mon.toc()]
""",
        "module": """
data = mx.sym.Variable('data')
fc = mx.sym.FullyConnected(data, num_hidden=2, name='fc')
net = mx.sym.SoftmaxOutput(fc, name='softmax')
mod = mx.mod.Module(net, context=mx.cpu())
mod.bind(data_shapes=[('data', (4, 3))], label_shapes=[('softmax_label', (4,))])
mod.init_params(mx.init.Constant(0.2))
# Forward only: MXNet reports the data gradient of a module that computes none (garbage).
mon = mx.monitor.Monitor(1, pattern='fc.*|softmax_output', sort=True)
mod.install_monitor(mon)
batch = mx.io.DataBatch([mx.nd.array(np.arange(12).reshape(4, 3) * 0.1)], [mx.nd.array([0, 1, 1, 0])])
mon.tic()
mod.forward(batch, is_train=True)
r = [(n, k, float(v.split()[0])) for n, k, v in mon.toc()]
""",
    })
