"""mx.viz: print_summary's table and plot_network's graph, checked against MXNet 1.9.1's own on the
same networks (tests/python/nets.py), and the picture rendered by Graphviz's dot."""
import contextlib
import io
import json
import pathlib
import shutil
import subprocess

import pytest

from conftest import MXNET_PYTHON, require_mxnet
import nets

NETS = (pathlib.Path(__file__).parent / "nets.py").read_text()
CASES = ["mlp", "lenet", "resnet18"]

MXNET_SIDE = NETS + '''
import contextlib, io, json, sys
import mxnet as mx
out = {}
for name in sys.argv[1:]:
    sym = globals()[name](mx)
    for key, shape in (("shaped", {"data": SHAPES[name]}), ("plain", None)):
        text = io.StringIO()
        with contextlib.redirect_stdout(text):
            mx.viz.print_summary(sym, shape=shape)
        out["%s %s summary" % (name, key)] = text.getvalue()
        out["%s %s dot" % (name, key)] = mx.viz.plot_network(sym, shape=shape).source
    out[name + " weights dot"] = mx.viz.plot_network(sym, hide_weights=False, title=name).source
    out[name + " typed dot"] = mx.viz.plot_network(sym, shape={"data": SHAPES[name]},
                                                   dtype={"data": "float32"}).source
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def mxnet_viz():
    require_mxnet()
    p = subprocess.run([str(MXNET_PYTHON), "-c", MXNET_SIDE] + CASES, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def fresh(mx, name):
    """The network with automatic names counted from 0, as in the MXNet process that drew it once."""
    with mx.name.NameManager():
        return getattr(nets, name)(mx)


def summary(mx, sym, **kwargs):
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        mx.viz.print_summary(sym, **kwargs)
    return text.getvalue()


def edges(source):
    """The graph's statements, one per line, without the graphviz package's formatting."""
    return sorted(" ".join(line.split()) for line in source.splitlines()[1:-1])


@pytest.mark.parametrize("name", CASES)
def test_summary_is_mxnets_table(mx, mxnet_viz, name):
    sym = fresh(mx, name)
    assert summary(mx, sym, shape={"data": nets.SHAPES[name]}) == mxnet_viz[name + " shaped summary"]
    assert summary(mx, sym) == mxnet_viz[name + " plain summary"]


def test_summary_counts_parameters(mx):
    # LeNet at 1x28x28: conv1 1*20*25+20, bn1 2*20, conv2 20*50*25+50, bn2 2*50, fc1 800*500+500, fc2 500*10+10.
    text = summary(mx, nets.lenet(mx), shape={"data": (1, 1, 28, 28)})
    assert "Total params: %d\n" % (520 + 40 + 25050 + 100 + 400500 + 5010) in text
    conv2 = next(line for line in text.splitlines() if line.startswith("conv2(Convolution)"))
    assert conv2.split()[1:] == ["50x8x8", "25050", "pool1"]


@pytest.mark.parametrize("name", CASES)
def test_plot_is_mxnets_graph(mx, mxnet_viz, name):
    sym = fresh(mx, name)
    ours = mx.viz.plot_network(sym, shape={"data": nets.SHAPES[name]})
    assert edges(ours.source) == edges(mxnet_viz[name + " shaped dot"])
    assert edges(mx.viz.plot_network(sym).source) == edges(mxnet_viz[name + " plain dot"])
    assert edges(mx.viz.plot_network(sym, hide_weights=False, title=name).source) == \
        edges(mxnet_viz[name + " weights dot"])
    typed = mx.viz.plot_network(sym, shape={"data": nets.SHAPES[name]}, dtype={"data": "float32"})
    assert edges(typed.source) == edges(mxnet_viz[name + " typed dot"])


def test_plot_labels_edges_with_shapes_and_dtypes(mx):
    dot = mx.viz.plot_network(nets.lenet(mx), shape={"data": (8, 1, 28, 28)}, dtype={"data": "float32"})
    assert 'conv2 -> pool1 [label="20x12x12(float32)"' in " ".join(dot.source.split())
    assert "fc1_weight" not in dot.source  # weights hidden by default
    assert dot.format == "pdf" and dot.name == "plot"


def test_plot_renders_with_dot(mx, tmp_path):
    assert shutil.which("dot"), "Graphviz's dot is missing: run tools/install-deps.sh"
    dot = mx.viz.plot_network(nets.lenet(mx), shape={"data": (1, 1, 28, 28)}, save_format="svg")
    path = pathlib.Path(dot.render(tmp_path / "lenet"))
    assert path.suffix == ".svg" and (tmp_path / "lenet").read_text() == dot.source
    svg = path.read_text()
    assert "<svg" in svg and "Convolution" in svg and "20x24x24" in svg and "FullyConnected" in svg


def test_bad_arguments(mx):
    sym = nets.mlp(mx)
    with pytest.raises(TypeError, match="must be a Symbol"):
        mx.viz.plot_network("not a symbol")
    with pytest.raises(TypeError, match="must be a Symbol"):
        mx.viz.print_summary(42)
    with pytest.raises(mx.MXPlugError, match="print_summary: shape must be a dict of input name -> shape"):
        mx.viz.print_summary(sym, shape=(16, 784))
    with pytest.raises(mx.MXPlugError, match="plot_network: dtype must be a dict"):
        mx.viz.plot_network(sym, dtype="float32")
    with pytest.raises(mx.MXPlugError, match=r"node 'fc1' \(FullyConnected\): weight has shape \(128, 100\), "
                                             r"expected \(128, 784\)"):
        mx.viz.plot_network(sym, shape={"data": (16, 784), "fc1_weight": (128, 100)})
    with pytest.raises(mx.MXPlugError, match="node 'fc1' .*'weight' has dtype float32, expected int8"):
        mx.viz.plot_network(sym, dtype={"data": "int8", "fc1_weight": "float32"})
