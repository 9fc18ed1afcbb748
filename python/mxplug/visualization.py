"""Pictures and tables of a Symbol graph (MXNet's ``mx.viz``).

    mx.viz.print_summary(net, shape={'data': (1, 1, 28, 28)})   # layers, output shapes, params
    dot = mx.viz.plot_network(net, shape={'data': (1, 1, 28, 28)})
    dot.render('lenet', format='svg')   # writes lenet (Graphviz source) and lenet.svg

plot_network returns a ``graphviz.Digraph`` (Debian's python3-graphviz); rendering needs the
``dot`` program (Debian's graphviz), saving the source does not. Both functions read the graph as
MXNet's symbol JSON, so they draw and count what MXNet 1.x's did for the same graph.
"""
import copy
import json
import re

from .base import MXPlugError

__all__ = ["plot_network", "print_summary"]


def _ints(text):
    """'(5, 5)' -> ['5', '5']: the numbers of a tuple attribute, as text."""
    return re.findall(r"\d+", text)


def _internal_outputs(symbol, given, kind, caller):
    """{internal output name: shape (kind 'shape') or dtype (kind 'dtype')} inferred from the
    inputs' `given` ({} when given is None)."""
    if given is None:
        return {}
    if not isinstance(given, dict):
        raise MXPlugError("%s: %s must be a dict of input name -> %s, got %r" % (caller, kind, kind, given))
    internals = symbol.get_internals()
    infer = internals.infer_shape if kind == "shape" else internals.infer_type
    _, outputs, _ = infer(**given)
    if outputs is None:
        raise MXPlugError("%s: the input %ss %r do not determine every output's %s" % (caller, kind, given, kind))
    return dict(zip(internals.list_outputs(), outputs))


def _entry_key(node):
    """The name under which get_internals lists a node's (first) output."""
    return node["name"] if node["op"] == "null" else node["name"] + "_output"


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Prints a table of the graph's layers: name (op), output shape without the batch axis,
    parameter count (Convolution, FullyConnected, BatchNorm, Embedding) and the layers it reads.
    `positions` are the right edges of the four columns, as fractions of line_length or in
    characters."""
    from .symbol import Symbol
    if not isinstance(symbol, Symbol):
        raise TypeError("print_summary: symbol must be a Symbol, got %s" % type(symbol).__name__)
    shapes = _internal_outputs(symbol, shape, "shape", "print_summary")
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    # MXNet's rule, kept so that the tables agree: a variable is shown (and named as an input) when
    # its index is among the numbers of the first head entry, which in practice is the data input.
    heads = set(conf["heads"][0])
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def row(fields):
        line = ""
        for field, edge in zip(fields, positions):
            line = (line + str(field))[:edge]
            line += " " * (edge - len(line))
        print(line)

    def out_shape(node):
        key = _entry_key(node)
        return list(shapes[key][1:]) if key in shapes else []

    def layer(node):
        attrs = node.get("attrs", {})
        previous, channels = [], 0
        if node["op"] != "null":
            for entry in node["inputs"]:
                src = nodes[entry[0]]
                if src["op"] != "null" or entry[0] in heads:
                    previous.append(src["name"])
                    s = out_shape(src)
                    channels += int(s[0]) if s else 0
        op, params = node["op"], 0
        no_bias = attrs.get("no_bias") == "True"
        if op == "Convolution":
            params = channels * int(attrs["num_filter"]) // int(attrs.get("num_group", "1"))
            for k in _ints(attrs["kernel"]):
                params *= int(k)
            params += 0 if no_bias else int(attrs["num_filter"])
        elif op == "FullyConnected":
            params = (channels + (0 if no_bias else 1)) * int(attrs["num_hidden"])
        elif op == "BatchNorm":
            s = out_shape(node)
            params = 2 * int(s[0]) if s else 0
        elif op == "Embedding":
            params = int(attrs["input_dim"]) * int(attrs["output_dim"])
        row(["%s(%s)" % (node["name"], op), "x".join(str(d) for d in out_shape(node)), params,
             previous[0] if previous else ""])
        for name in previous[1:]:
            row(["", "", "", name])
        return params

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        if node["op"] == "null" and i > 0:
            continue
        total += layer(node)
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print("Total params: %d" % total)
    print("_" * line_length)


_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean", "_running_var",
                    "_running_mean")
_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69", "#fccde5")


def _label_and_color(node):
    """MXNet's box text and color per op: the op and its defining parameters."""
    op, attrs = node["op"], node.get("attrs", {})
    if op == "Convolution":
        stride = "x".join(_ints(attrs["stride"])) if "stride" in attrs else "1"
        return "Convolution\n%s/%s, %s" % ("x".join(_ints(attrs["kernel"])), stride, attrs["num_filter"]), 1
    if op == "FullyConnected":
        return "FullyConnected\n%s" % attrs["num_hidden"], 1
    if op == "BatchNorm":
        return node["name"], 3
    if op == "Activation":
        return "Activation\n%s" % attrs["act_type"], 2
    if op == "LeakyReLU":
        return "LeakyReLU\n%s" % attrs.get("act_type", "leaky"), 2
    if op == "Pooling":
        kernel = "x".join(_ints(attrs["kernel"])) if "kernel" in attrs else "[]"
        stride = "x".join(_ints(attrs["stride"])) if "stride" in attrs else "1"
        return "Pooling\n%s, %s/%s" % (attrs["pool_type"], kernel, stride), 4
    if op in ("Concat", "Flatten", "Reshape"):
        return node["name"], 5
    if op == "Softmax":
        return node["name"], 6
    return (attrs["op_type"] if op == "Custom" else node["name"]), 7


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None, node_attrs=None,
                 hide_weights=True):
    """The graph as a graphviz.Digraph: a box per op (colored by kind, labeled with its defining
    parameters), an oval per input, edges from each input to its reader labeled with the shape
    (and dtype) that flows along it when `shape` (and `dtype`) give the inputs'. Parameters
    (names ending in _weight, _bias, _gamma, ...) are left out unless hide_weights=False, which
    draws them as plain ovals."""
    from .symbol import Symbol
    try:
        from graphviz import Digraph
    except ImportError as e:
        raise ImportError("plot_network needs the graphviz Python package (Debian: python3-graphviz; "
                          "rendering also needs the dot program, Debian: graphviz)") from e
    if not isinstance(symbol, Symbol):
        raise TypeError("plot_network: symbol must be a Symbol, got %s" % type(symbol).__name__)
    shapes = _internal_outputs(symbol, shape, "shape", "plot_network")
    dtypes = _internal_outputs(symbol, dtype, "dtype", "plot_network")
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    box = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034", "style": "filled"}
    box.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)

    hidden = set()
    for node in nodes:
        attr = copy.deepcopy(box)
        if node["op"] == "null":
            if node["name"].lower().endswith(_WEIGHT_SUFFIXES):
                # Shown (hide_weights=False), a parameter has no node statement of its own: its
                # edge makes Graphviz draw it as a plain oval, as in MXNet's pictures.
                if hide_weights:
                    hidden.add(node["name"])
                continue
            attr["shape"] = "oval"
            label, color = node["name"], 0
        else:
            label, color = _label_and_color(node)
        attr["fillcolor"] = _COLORS[color]
        dot.node(name=node["name"], label=label, **attr)

    for node in nodes:
        if node["op"] == "null":
            continue
        for entry in node["inputs"]:
            src = nodes[entry[0]]
            if src["name"] in hidden:
                continue
            attr = {"dir": "back", "arrowtail": "open", "label": ""}
            key = _entry_key(src)
            if src["op"] != "null" and "num_outputs" in src.get("attrs", {}):
                # MXNet labels a multi-output op's edges with its last output's shape.
                key += str(int(src["attrs"]["num_outputs"]) - 1)
            if shapes:
                attr["label"] = "x".join(str(d) for d in shapes[key][1:])
            if dtypes:
                attr["label"] += "(%s)" % dtypes[key].__name__
            dot.edge(tail_name=node["name"], head_name=src["name"], **attr)
    return dot
