"""mx.sym: building, composing, listing, attributes, inference, JSON. Expected values are the
seeds' snippets and what MXNet 1.9.1 prints for the same code (run in its reference environment
where a test says so)."""
import json
import subprocess
import warnings

import numpy as np
import pytest

from conftest import MXNET_PYTHON, require_mxnet


def mlp(mx):
    net = mx.symbol.Variable('data')
    net = mx.symbol.FullyConnected(data=net, name='fc1', num_hidden=128)
    net = mx.symbol.Activation(data=net, name='relu1', act_type="relu")
    net = mx.symbol.FullyConnected(data=net, name='fc2', num_hidden=64)
    return mx.symbol.SoftmaxOutput(data=net, name='out')


def test_seed_snippets(mx):
    net = mlp(mx)
    assert isinstance(net, mx.symbol.Symbol)
    assert net.list_arguments() == ['data', 'fc1_weight', 'fc1_bias', 'fc2_weight', 'fc2_bias', 'out_label']

    net = mx.symbol.Variable('data')
    w = mx.symbol.Variable('myweight')
    net = mx.symbol.FullyConnected(data=net, weight=w, name='fc1', num_hidden=128)
    assert net.list_arguments() == ['data', 'myweight', 'fc1_bias']

    lhs, rhs = mx.symbol.Variable('data1'), mx.symbol.Variable('data2')
    net = mx.symbol.FullyConnected(data=lhs + rhs, name='fc1', num_hidden=128)
    assert net.list_arguments() == ['data1', 'data2', 'fc1_weight', 'fc1_bias']

    net = mx.symbol.Variable('data')
    net = mx.symbol.FullyConnected(data=net, name='fc1', num_hidden=128)
    net2 = mx.symbol.Variable('data2')
    net2 = mx.symbol.FullyConnected(data=net2, name='net2', num_hidden=128)
    composed_net = net(data=net2, name='compose')
    assert composed_net.list_arguments() == ['data2', 'net2_weight', 'net2_bias', 'compose_fc1_weight',
                                             'compose_fc1_bias']
    assert net.list_arguments() == ['data', 'fc1_weight', 'fc1_bias']  # the original is unchanged

    net = mx.symbol.Variable('data')
    net = mx.symbol.FullyConnected(data=net, name='fc1', num_hidden=10)
    arg_shape, out_shape, aux_shape = net.infer_shape(data=(100, 100))
    assert dict(zip(net.list_arguments(), arg_shape)) == {'data': (100, 100), 'fc1_weight': (10, 100),
                                                          'fc1_bias': (10,)}
    assert out_shape == [(100, 10)] and aux_shape == []

    A, B = mx.symbol.Variable('A'), mx.symbol.Variable('B')
    C = A * B
    a, b = mx.nd.ones(3) * 4, mx.nd.ones(3) * 2
    c_exec = C.bind(ctx=mx.cpu(), args={'A': a, 'B': b})
    c_exec.forward()
    assert c_exec.outputs[0].asnumpy().tolist() == [8, 8, 8]


def test_names_outputs_internals_children(mx):
    # Expected values: MXNet 1.9.1 on the same code.
    data = mx.sym.Variable('data')
    fc = mx.sym.FullyConnected(data, num_hidden=4)
    bn = mx.sym.BatchNorm(fc)
    assert fc.name.startswith('fullyconnected') and bn.name.startswith('batchnorm')
    f, b = fc.name, bn.name
    assert bn.list_arguments() == ['data', f + '_weight', f + '_bias', b + '_gamma', b + '_beta']
    assert bn.list_auxiliary_states() == [b + '_moving_mean', b + '_moving_var']
    assert bn.list_outputs() == [b + '_output']  # BatchNorm's mean and var outputs are hidden
    assert bn.list_inputs() == bn.list_arguments() + bn.list_auxiliary_states()
    assert bn.get_internals().list_outputs() == [
        'data', f + '_weight', f + '_bias', f + '_output', b + '_gamma', b + '_beta', b + '_moving_mean',
        b + '_moving_var', b + '_output']
    assert bn.get_children().list_outputs() == [f + '_output', b + '_gamma', b + '_beta', b + '_moving_mean',
                                                b + '_moving_var']
    assert data.get_children() is None
    internal = bn.get_internals()[f + '_output']
    assert internal.list_arguments() == ['data', f + '_weight', f + '_bias']

    s = mx.sym.SliceChannel(data, num_outputs=3, name='sl')
    assert s.list_outputs() == ['sl_output0', 'sl_output1', 'sl_output2'] and len(s) == 3
    assert s[1].name == 'sl' and s[1].list_outputs() == ['sl_output1']
    g = mx.sym.Group([data + data, fc])
    assert g.name is None and len(g) == 2 and g[1].list_outputs() == [f + '_output']
    with pytest.raises(IndexError):
        g[2]

    a, b2 = mx.sym.Variable('a'), mx.sym.Variable('b')
    hints = [(a + b2).name, (a * b2).name, (a * 2).name, (2 / a).name, (-a).name, (a ** 2).name, (a > b2).name,
             (1 - a).name]
    prefixes = ['_plus', '_mul', '_mulscalar', '_rdivscalar', '_mulscalar', '_powerscalar', '_greater',
                '_rminusscalar']
    for name, prefix in zip(hints, prefixes):
        assert name.startswith(prefix) and name[len(prefix):].isdigit(), (name, prefix)

    with mx.name.Prefix('pre_'):
        x = mx.sym.FullyConnected(a, num_hidden=3)
        y = mx.sym.FullyConnected(a, num_hidden=3, name='named')
    assert x.name.startswith('pre_fullyconnected') and y.name == 'pre_named'
    assert x.list_arguments() == ['a', x.name + '_weight', x.name + '_bias']
    with mx.name.NameManager():
        assert mx.sym.Activation(a, act_type='relu').name == 'activation0'


def test_attributes_and_scopes(mx):
    data = mx.sym.Variable('data', shape=(2, 3), lr_mult=2, dtype='float64', wd_mult=0.5, attr={'foo': 'bar'},
                           init='["xavier", {}]')
    assert data.list_attr() == {'__shape__': '(2, 3)', '__lr_mult__': '2', 'lr_mult': '2', '__wd_mult__': '0.5',
                                'wd_mult': '0.5', '__dtype__': '1', '__init__': '["xavier", {}]', 'foo': 'bar'}
    assert data.attr('lr_mult') == '2' and data.attr('missing') is None
    with pytest.raises(ValueError):
        mx.sym.Variable('v', something=1)
    with mx.AttrScope(ctx_group='dev1', __mood__='x'):
        fc = mx.sym.FullyConnected(data, num_hidden=4, name='fc', attr={'__a__': 'b'})
    # MXNet 1.9.1 prints these for the op node; its auto-made weights take the scope's attributes.
    assert fc.list_attr() == {'num_hidden': '4', '__a__': 'b', '__mood__': 'x', '__ctx_group__': 'dev1',
                              'ctx_group': 'dev1'}
    attrs = fc.attr_dict()
    assert attrs['fc_weight']['ctx_group'] == 'dev1' and attrs['fc_bias']['__mood__'] == 'x'
    assert attrs['data']['__shape__'] == '(2, 3)'
    with pytest.raises(mx.MXNetError, match="FullyConnected: unknown parameter 'not_a_param'; valid parameters "
                                             "are num_hidden"):
        mx.sym.FullyConnected(data, num_hidden=4, attr={'not_a_param': 'x'})  # MXNet refuses it too
    fc._set_attr(num_hidden='5')  # an op parameter: the op is reconfigured
    assert fc.infer_shape()[1] == [(2, 5)]
    with pytest.raises(mx.MXNetError, match="num_hidden"):
        fc._set_attr(num_hidden='zero')
    assert fc.infer_shape()[1] == [(2, 5)]  # a bad value changed nothing


def test_infer_shape_both_directions_and_partial(mx):
    x = mx.sym.Variable('x')
    fc = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    assert fc.infer_shape_partial(x=(0, 3)) == ([(0, 3), (4, 3), (4,)], [(0, 4)], [])
    assert fc.infer_shape_partial() == ([(), (), ()], [()], [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert fc.infer_shape(fc_weight=(4, 3)) == (None, None, None)
    assert any("Cannot decide shape" in str(w.message) for w in caught)
    # Backward direction: an elementwise input from the other input and from the output.
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    s = mx.sym.elemwise_add(a, b) * 2
    assert s.infer_shape(b=(2, 5)) == ([(2, 5), (2, 5)], [(2, 5)], [])
    # Positional shapes follow list_arguments.
    assert fc.infer_shape((7, 3))[1] == [(7, 4)]
    # The __shape__ attribute counts as given.
    v = mx.sym.Variable('v', shape=(3, 6))
    assert mx.sym.FullyConnected(v, num_hidden=2, name='f').infer_shape()[0] == [(3, 6), (2, 6), (2,)]


def test_infer_shape_error_names_node_op_input_and_shapes(mx, capsys):
    x = mx.sym.Variable('x')
    fc = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    with pytest.raises(mx.MXNetError) as e:
        fc.infer_shape(x=(2, 3), fc_weight=(5, 3))
    message = str(e.value)
    for part in ("'fc'", "FullyConnected", "weight", "(5, 3)", "(4, 3)"):
        assert part in message, (part, message)
    assert "infer_shape error" in capsys.readouterr().out
    a, b = mx.sym.Variable('a'), mx.sym.Variable('b')
    with pytest.raises(mx.MXNetError, match=r"'_plus\d+'.*elemwise_add.*\(2, 3\).*\(4, 3\)|\(4, 3\).*\(2, 3\)"):
        (a + b).infer_shape(a=(2, 3), b=(4, 3))
    with pytest.raises(mx.MXNetError, match="'nope' is not an input"):
        fc.infer_shape(nope=(1, 2))


def test_bad_shape_attribute_is_named(mx):
    doc = {"nodes": [{"op": "null", "name": "x", "attrs": {"__shape__": "(99999999999999999999, 2)"},
                      "inputs": []}], "heads": [[0, 0, 0]]}
    with pytest.raises(mx.MXNetError, match="variable 'x': attribute __shape__ .* has a dimension too large"):
        mx.sym.load_json(json.dumps(doc)).infer_shape()
    doc["nodes"][0]["attrs"]["__shape__"] = "(2, three)"
    with pytest.raises(mx.MXNetError, match="variable 'x': attribute __shape__ '\\(2, three\\)' is not a shape"):
        mx.sym.load_json(json.dumps(doc)).infer_shape()


def test_infer_type(mx):
    x = mx.sym.Variable('x')
    fc = mx.sym.FullyConnected(x, num_hidden=4, name='fc')
    assert fc.infer_type(x='float64') == ([np.float64] * 3, [np.float64], [])
    assert fc.infer_type() == (None, None, None)
    d = mx.sym.Variable('d', dtype=np.float16)
    assert mx.sym.Activation(d, act_type='relu').infer_type()[1] == [np.float16]
    with pytest.raises(mx.MXNetError, match="dtype"):
        (mx.sym.Variable('p') + mx.sym.Variable('q')).infer_type(p='float32', q='float64')


def test_compose_errors(mx):
    a = mx.sym.Variable('a')
    net = mx.sym.FullyConnected(a, num_hidden=3, name='f')
    with pytest.raises(mx.MXNetError, match="no variable 'foo'.*a, f_weight, f_bias"):
        net(foo=a)
    with pytest.raises(mx.MXNetError, match="no input 'foo'.*data, weight, bias"):
        mx.sym.FullyConnected(a, foo=a, num_hidden=3)
    with pytest.raises(mx.MXNetError, match="one output"):
        mx.sym.FullyConnected(mx.sym.Group([a, a]), num_hidden=3)
    with pytest.raises(mx.MXNetError, match="FullyConnected.*num_hidden"):
        mx.sym.FullyConnected(a)  # a required parameter missing
    with pytest.raises(AttributeError):
        mx.sym.NoSuchOp
    with pytest.raises(AssertionError, match="Argument weight must be Symbol instances, but got 3"):
        mx.sym.FullyConnected(a, 3)  # MXNet's error: positional values fill the inputs first


def test_json_round_trip(mx, tmp_path):
    net = mlp(mx)
    with mx.AttrScope(__group__='g'):
        bn = mx.sym.BatchNorm(net, name='bn', fix_gamma=False)
    sym = mx.sym.Group([bn, mx.sym.Variable('extra', shape=(2,), lr_mult=0.1)])
    text = sym.tojson()
    doc = json.loads(text)
    assert doc["attrs"]["mxnet_version"] == ["int", 10901]
    assert [n["op"] for n in doc["nodes"]].count("null") == len(doc["arg_nodes"])
    bn_node = [n for n in doc["nodes"] if n["name"] == "bn"][0]
    assert doc["node_row_ptr"][-1] == sum(3 if n["op"] == "BatchNorm" else 1 for n in doc["nodes"])
    assert bn_node["attrs"] == {"__group__": "g", "fix_gamma": "False"}
    back = mx.sym.load_json(text)
    assert back.tojson() == text
    for f in ("list_arguments", "list_outputs", "list_auxiliary_states", "attr_dict"):
        assert getattr(back, f)() == getattr(sym, f)(), f
    path = str(tmp_path / "net-symbol.json")
    sym.save(path)
    assert mx.sym.load(path).tojson() == text


LEGACY = {  # the format of MXNet 0.8: "param" and "attr", two-element inputs, BatchNorm without aux inputs
    "nodes": [
        {"op": "null", "param": {}, "name": "data", "inputs": [], "backward_source_id": -1,
         "attr": {"ctx_group": "stage1", "lr_mult": "0.2"}},
        {"op": "null", "param": {}, "name": "fc_weight", "inputs": [], "backward_source_id": -1},
        {"op": "null", "param": {}, "name": "fc_bias", "inputs": [], "backward_source_id": -1},
        {"op": "FullyConnected", "param": {"no_bias": "False", "num_hidden": "3"}, "name": "fc",
         "inputs": [[0, 0], [1, 0], [2, 0]], "backward_source_id": -1},
        {"op": "null", "param": {}, "name": "bn_gamma", "inputs": [], "backward_source_id": -1},
        {"op": "null", "param": {}, "name": "bn_beta", "inputs": [], "backward_source_id": -1},
        {"op": "BatchNorm", "param": {"eps": "0.001", "fix_gamma": "True", "momentum": "0.9"}, "name": "bn",
         "inputs": [[3, 0], [4, 0], [5, 0]], "backward_source_id": -1}],
    "arg_nodes": [0, 1, 2, 4, 5],
    "heads": [[6, 0]],
}


def test_legacy_json_loads(mx):
    sym = mx.sym.load_json(json.dumps(LEGACY))
    assert sym.list_arguments() == ['data', 'fc_weight', 'fc_bias', 'bn_gamma', 'bn_beta']
    assert sym.list_auxiliary_states() == ['bn_moving_mean', 'bn_moving_var']
    assert sym.attr_dict()['data'] == {'__ctx_group__': 'stage1', 'ctx_group': 'stage1', '__lr_mult__': '0.2',
                                       'lr_mult': '0.2'}
    assert sym.attr_dict()['bn']['eps'] == '0.001'
    assert sym.infer_shape(data=(4, 5))[1] == [(4, 3)]


def bad(doc_or_text):
    return doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text)


def variable(name):
    return {"op": "null", "name": name, "inputs": []}


@pytest.mark.parametrize("text, message", [
    ("{", "not valid JSON"),
    ("[]", "top level must be an object"),
    ({"nodes": [variable("x")]}, "\"heads\" is missing"),
    ({"nodes": [variable("x"), {"op": "NoSuchOp", "name": "n", "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]},
     "node 1 \\('n'\\).*NoSuchOp"),
    ({"nodes": [variable("x"), {"op": "relu", "name": "r", "inputs": [[2, 0, 0]]}], "heads": [[1, 0, 0]]},
     "node 1 \\('r'\\).*refers to node 2.*cycle or a dangling"),
    ({"nodes": [{"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}], "heads": [[0, 0, 0]]},
     "node 0 \\('r'\\).*refers to node 0"),
    ({"nodes": [variable("x"), {"op": "relu", "name": "r", "inputs": [[0, 3, 0]]}], "heads": [[1, 0, 0]]},
     "asks for output 3 of variable 'x'"),
    ({"nodes": [variable("x"), {"op": "FullyConnected", "name": "f", "attrs": {"num_hidden": "many"},
                                "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]},
     "node 1 \\('f'\\).*num_hidden"),
    ({"nodes": [variable("x"), {"op": "FullyConnected", "name": "f", "attrs": {"num_hidden": "2"},
                                "inputs": [[0, 0, 0]]}], "heads": [[1, 0, 0]]},
     "takes 3 inputs \\(data, weight, bias\\), the file gives 1"),
    ({"nodes": [variable("x")], "heads": [[5, 0, 0]]}, "heads.*refers to node 5"),
    ({"nodes": [variable("x")], "heads": []}, "no output"),
    ({"nodes": [{"op": "null", "name": "x", "inputs": [], "attrs": {"a": 3}}], "heads": [[0, 0, 0]]},
     "attribute 'a' must be a string"),
    ({"nodes": [{"op": "null", "name": 7, "inputs": []}], "heads": [[0, 0, 0]]}, "\"name\" is missing or not"),
    ({"nodes": [variable("x"), {"op": "relu", "name": "r", "inputs": [[0, -1, 0]]}], "heads": [[1, 0, 0]]},
     "non-negative integers"),
])
def test_malformed_json_gives_clear_errors(mx, text, message):
    with pytest.raises(mx.MXNetError, match=message):
        mx.sym.load_json(bad(text))


def test_derived_and_unknown_fields_are_not_trusted(mx):
    # arg_nodes and node_row_ptr are recomputed, unknown fields ignored, as MXNet's loader does.
    doc = {"nodes": [variable("x")], "heads": [[0, 0, 0]], "x": 1, "arg_nodes": "junk", "node_row_ptr": [7]}
    sym = mx.sym.load_json(json.dumps(doc))
    assert sym.list_arguments() == ["x"]
    assert json.loads(sym.tojson())["node_row_ptr"] == [0, 1]


def test_load_names_the_file(mx, tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"nodes": [], "heads": [')
    with pytest.raises(mx.MXNetError, match="broken.json.*not valid JSON"):
        mx.sym.load(str(path))


def test_mxnet_reads_our_json(mx, tmp_path):
    require_mxnet()
    net = mlp(mx)
    bn = mx.sym.BatchNorm(mx.sym.Convolution(mx.sym.Variable('img'), kernel=(3, 3), num_filter=2, name='c'),
                          name='bn')
    sym = mx.sym.Group([net, bn, mx.sym.Variable('a') * 2 + 1])
    path = tmp_path / "ours.json"
    sym.save(str(path))
    code = ("import mxnet as mx, json\ns = mx.sym.load(%r)\n"
            "print(json.dumps([s.list_arguments(), s.list_outputs(), s.list_auxiliary_states()]))" % str(path))
    p = subprocess.run([str(MXNET_PYTHON), "-c", code], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    args, outs, aux = json.loads(p.stdout.strip().splitlines()[-1])
    assert args == sym.list_arguments() and outs == sym.list_outputs() and aux == sym.list_auxiliary_states()
