"""The conformance suite's cases (tests/python/test_conformance.py): for every operator, the shapes,
arguments and input ranges it is run on, and the dtypes it must support on every device. A case
names its op once; the suite runs it forward and backward on the device under test and on the CPU
in float64, on the same values.

Input domains: a (low, high) range drawn uniformly; INTS(high, low=0), integers in [low, high) (labels, indices,
conditions, and values that tie under comparison); WITH_NAN, signed values with NaNs among them."""
import numpy as np


class Case:
    def __init__(self, op, shapes, kwargs=None, domains=None, dtypes=None, grad=True, tol=1.0):
        self.op = op
        self.shapes = [tuple(s) for s in shapes]
        self.kwargs = kwargs or {}
        # One domain per input; missing ones are SIGNED.
        self.domains = list(domains or []) + [SIGNED] * (len(shapes) - len(domains or []))
        self.dtypes = dtypes or ALL_FLOATS
        self.grad = grad  # run backward too
        self.tol = tol    # a multiple of the dtype's tolerance, for long sums

    def __repr__(self):
        return "%s%s%s" % (self.op, self.shapes, self.kwargs or "")


def _rnn_size(mode, inputs, hidden, layers, dirs):
    """The length of the RNN op's parameter vector."""
    gates = {"lstm": 4, "gru": 3}.get(mode, 1)
    return sum(dirs * gates * hidden * ((inputs if l == 0 else dirs * hidden) + hidden + 2) for l in range(layers))


SIGNED, POSITIVE, UNIT, ABOVE_ONE = (-2.0, 2.0), (0.5, 2.0), (-0.9, 0.9), (1.1, 3.0)
WITH_NAN = "with_nan"


def INTS(high, low=0):
    return ("ints", low, high)


ALL_FLOATS = ("float32", "float16", "float64")
# The nn plugin's kernels (layers, losses, products) have no float16 yet; MXNet 1.9.1 has it.
WIDE = ("float32", "float64")

# ---- Elementwise: unary, binary, broadcast and scalar ----

UNARY_DOMAINS = {
    "log": POSITIVE, "log2": POSITIVE, "log10": POSITIVE, "log1p": POSITIVE, "sqrt": POSITIVE,
    "rsqrt": POSITIVE, "reciprocal": POSITIVE, "gamma": POSITIVE, "gammaln": POSITIVE,
    "arcsin": UNIT, "arccos": UNIT, "tan": UNIT, "arctanh": UNIT, "arccosh": ABOVE_ONE,
    "rcbrt": POSITIVE, "logical_not": INTS(3, -1), "erfinv": UNIT,
}
UNARY = ["negative", "abs", "sign", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt",
         "cbrt", "square", "reciprocal", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arcsinh",
         "arccosh", "arctanh", "degrees", "radians", "rcbrt", "logical_not", "sinh",
         "cosh", "tanh", "sigmoid", "relu", "softsign", "erf", "erfinv", "round", "rint", "floor", "ceil",
         "trunc", "fix", "gamma", "gammaln", "_copy", "identity", "_copyto", "BlockGrad", "stop_gradient"]

# Each binary function under all its names, with the domains of its two inputs.
BINARY = {
    ("elemwise_add", "_plus", "_Plus", "_add"): (SIGNED, SIGNED),
    ("elemwise_sub", "_minus", "_Minus", "_sub"): (SIGNED, SIGNED),
    ("elemwise_mul", "_mul", "_Mul"): (SIGNED, SIGNED),
    ("elemwise_div", "_div", "_Div"): (SIGNED, POSITIVE),
    ("_mod", "_Mod"): (SIGNED, POSITIVE),
    ("_power", "_Power"): (POSITIVE, SIGNED),
    ("_maximum", "_Maximum"): (SIGNED, SIGNED),
    ("_minimum", "_Minimum"): (SIGNED, SIGNED),
    ("_hypot", "_Hypot"): (SIGNED, SIGNED),
    ("_equal", "_Equal"): (INTS(3), INTS(3)),
    ("_not_equal", "_Not_Equal"): (INTS(3), INTS(3)),
    ("_greater", "_Greater"): (INTS(3), INTS(3)),
    ("_greater_equal", "_Greater_Equal"): (INTS(3), INTS(3)),
    ("_lesser", "_Lesser"): (INTS(3), INTS(3)),
    ("_lesser_equal", "_Lesser_Equal"): (INTS(3), INTS(3)),
    ("_logical_and", "_Logical_And"): (INTS(2), INTS(2)),
    ("_logical_or", "_Logical_Or"): (INTS(2), INTS(2)),
    ("_logical_xor", "_Logical_Xor"): (INTS(2), INTS(2)),
}
def _legacy_scalar_name(scalar_name, reversed=False):
    """MXNet's legacy name of a scalar form: not_equal -> _NotEqualScalar (_R...Scalar reversed)."""
    return ("_R" if reversed else "_") + "".join(w.capitalize() for w in scalar_name.split("_")) + "Scalar"


# broadcast_<name> for each binary function, by the name of its scalar form.
BROADCAST = {"add": "plus", "plus": "plus", "sub": "minus", "minus": "minus", "mul": "mul",
             "div": "div", "mod": "mod", "power": "power", "maximum": "maximum",
             "minimum": "minimum", "hypot": "hypot", "equal": "equal", "not_equal": "not_equal",
             "greater": "greater", "greater_equal": "greater_equal", "lesser": "lesser",
             "lesser_equal": "lesser_equal", "logical_and": "logical_and",
             "logical_or": "logical_or", "logical_xor": "logical_xor"}


def _domains_of(scalar_name):
    (domains,) = [d for names, d in BINARY.items() if "_" + scalar_name in names]
    return domains


def _elementwise_cases():
    cases = []
    for op in UNARY:
        domain = UNARY_DOMAINS.get(op, SIGNED)
        cases += [Case(op, [(5, 7)], domains=[domain]), Case(op, [(2, 3, 33)], domains=[domain])]
    cases += [Case("clip", [(64,)], {"a_min": -0.3, "a_max": 0.4}),
              Case("clip", [(4, 9)], {"a_min": 0.0, "a_max": 10.0})]
    for names, domains in BINARY.items():
        for op in names:
            cases += [Case(op, [(3, 4), (3, 4)], domains=domains),
                      Case(op, [(2, 3, 50), (2, 3, 50)], domains=domains)]
    for name, scalar_name in BROADCAST.items():
        domains = _domains_of(scalar_name)
        cases += [Case("broadcast_" + name, [(4, 1, 5), (3, 1)], domains=domains),
                  Case("broadcast_" + name, [(2, 3), (2, 3)], domains=domains)]
    # The gradients of broadcasting reduce onto the smaller input: across threads (many outputs)
    # and within a block (a long run per output).
    cases += [Case("broadcast_add", [(300, 200), (200,)], tol=4),
              Case("broadcast_mul", [(2, 3000), (2, 1)], tol=4)]
    for scalar_name in sorted(set(BROADCAST.values())):  # one order in every process (pytest-xdist)
        domains = _domains_of(scalar_name)
        scalar = 1.0 if domains[0][0] == "ints" else 0.7
        for op in ("_%s_scalar" % scalar_name, _legacy_scalar_name(scalar_name)):
            cases.append(Case(op, [(4, 6)], {"scalar": scalar}, domains=domains[:1]))
    for scalar_name, scalar, domains in (("minus", 0.7, None), ("div", -1.3, [POSITIVE]),
                                         ("mod", 1.9, [POSITIVE]), ("power", 1.7, None)):
        for op in ("_r%s_scalar" % scalar_name, _legacy_scalar_name(scalar_name, reversed=True)):
            cases.append(Case(op, [(33,)] if scalar_name == "power" else [(4, 6)], {"scalar": scalar},
                              domains=domains))
    cases += [Case("hard_sigmoid", [(4, 6)]), Case("hard_sigmoid", [(33,)], {"alpha": 0.7, "beta": 0.2})]
    # smooth_l1: both of its pieces (|x| beyond 1 / sigma^2 and within).
    cases += [Case("smooth_l1", [(4, 6)], {"scalar": 1.5}), Case("smooth_l1", [(33,)], {"scalar": 0.5})]
    return cases


# ---- Reductions ----

REDUCTIONS = [
    Case("sum", [(4, 5, 6)], {"axis": 1}),
    Case("sum", [(3, 1000)], {"axis": 1}, tol=4),
    Case("sum", [(1000, 3)], {"axis": 0}, tol=4),
    Case("sum", [(3, 4)], {"axis": (), "keepdims": True}),
    Case("mean", [(4, 5, 6)], {"axis": (0, 2), "keepdims": True}),
    Case("prod", [(3, 4)], domains=[POSITIVE]),
    Case("prod", [(3, 4, 2)], {"axis": 1}),
    Case("max", [(6, 7, 8)], {"axis": (0, 2)}),
    Case("min", [(6, 7)], {"axis": 0, "exclude": True}),
    Case("nansum", [(5, 9)], {"axis": 1}, domains=[WITH_NAN]),
    Case("nanprod", [(5, 9)], {"axis": 0}, domains=[WITH_NAN]),
    Case("sum_axis", [(3, 4, 5)], {"axis": 2}),
    Case("max_axis", [(3, 4, 5)], {"axis": (0, 2)}),
    Case("min_axis", [(3, 4, 5)], {"axis": 1, "keepdims": True}),
    Case("norm", [(5, 6)], {"ord": 1, "axis": 1}),
    Case("norm", [(40, 50)], tol=4),
    Case("argmax", [(5, 6)], {"axis": 1}),
    Case("argmax", [(4, 5)], {"axis": 0, "keepdims": True}, domains=[INTS(3)]),  # ties: the first
    Case("argmin", [(5, 6, 7)], {"axis": 0}),
    Case("argmax_channel", [(5, 6, 7)]),
    Case("argmax_channel", [(4, 5)], domains=[INTS(3)]),
    Case("moments", [(3, 4, 5)], {"axes": (0, 2)}, tol=4),
    Case("moments", [(4, 6)], {"axes": (1,), "keepdims": True}, tol=4),
    Case("cumsum", [(3, 4, 5)], {"axis": 1}, tol=4),
    Case("cumsum", [(3, 7)], tol=4),
    Case("topk", [(4, 7)], {"k": 3, "ret_typ": "value"}),
    Case("topk", [(5, 4, 3)], {"k": 2, "axis": 1, "ret_typ": "both", "is_ascend": True}),
    Case("topk", [(4, 6)], {"k": 4, "axis": None, "ret_typ": "mask"}, domains=[INTS(4)]),  # ties
    Case("topk", [(3, 8)], {"k": 3, "dtype": "int64"}, domains=[WITH_NAN]),
    Case("sort", [(3, 9)], {"is_ascend": False}),
    Case("sort", [(6, 2, 3)], {"axis": 0}, domains=[WITH_NAN]),
    Case("argsort", [(5, 6)], {"axis": None}, domains=[INTS(5)]),  # ties keep index order
    Case("argsort", [(4, 5)], {"is_ascend": False, "dtype": "int32"}),
    Case("_split_v2", [(3, 7, 2)], {"indices": (0, 2, 3), "axis": 1}),
    Case("_split_v2", [(6, 4)], {"indices": (), "sections": 3, "axis": 0}),
    Case("SequenceMask", [(5, 3, 2), (3,)], {"use_sequence_length": True, "value": -1.5},
         domains=[SIGNED, INTS(7)], grad=True),
    Case("SequenceMask", [(3, 5)], {"axis": 1}),
    Case("SequenceLast", [(3, 6, 2), (3,)], {"use_sequence_length": True, "axis": 1},
         domains=[SIGNED, INTS(7)]),
    Case("SequenceLast", [(4, 3)]),
    Case("SequenceReverse", [(6, 2, 3), (2,)], {"use_sequence_length": True},
         domains=[SIGNED, INTS(7)]),
    Case("SequenceReverse", [(4, 3, 2)]),
    Case("slice_like", [(4, 5, 3), (2, 5, 2)]),
    Case("slice_like", [(4, 5, 3), (3, 1, 2)], {"axes": (0, -1)}),
    Case("diag", [(4, 5)], {"k": 1}),
    Case("diag", [(3, 4, 5)], {"k": -1, "axis1": 2, "axis2": 0}),
    Case("diag", [(4,)], {"k": 2}),
    Case("Pad", [(2, 2, 3, 4)], {"mode": "constant", "pad_width": (0, 0, 0, 0, 2, 1, 0, 3),
                                 "constant_value": 0.5}),
    Case("Pad", [(2, 1, 3, 4)], {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 3, 1, 2)}),
    Case("pad", [(1, 2, 3, 4, 3)], {"mode": "reflect", "pad_width": (0, 0, 0, 0, 2, 1, 1, 3, 2, 2)}),
]

# ---- Layout, indexing and selection ----

LAYOUT = [
    Case("Reshape", [(4, 6)], {"shape": (3, -1, 2)}),
    Case("reshape", [(2, 3, 4)], {"shape": (-3, 0)}),
    Case("Flatten", [(2, 3, 4)]),
    Case("flatten", [(5, 2)]),
    Case("expand_dims", [(3, 4)], {"axis": 1}),
    Case("transpose", [(2, 3, 4)], {"axes": (2, 0, 1)}),
    Case("transpose", [(5, 7)]),
    Case("SwapAxis", [(2, 3, 4)], {"dim1": 0, "dim2": 2}),
    Case("swapaxes", [(2, 3, 4, 5)], {"dim1": -1, "dim2": 1}),
    Case("slice", [(6, 7, 8)], {"begin": (1, None, 7), "end": (5, None, 0), "step": (2, None, -3)}),
    Case("slice", [(4, 5)], {"begin": (1,), "end": (3,)}),
    Case("crop", [(6, 7)], {"begin": (0, 2), "end": (4, 7)}),
    Case("reshape_like", [(4, 6), (3, 8)]),
    Case("depth_to_space", [(2, 12, 3, 5)], {"block_size": 2}),
    Case("shape_array", [(2, 3, 4)], grad=False), Case("size_array", [(5, 7)], grad=False),
    Case("space_to_depth", [(2, 3, 4, 6)], {"block_size": 2}),
    Case("reshape_like", [(30, 7), (15, 2, 4)], {"lhs_begin": 0, "lhs_end": 1, "rhs_begin": 0, "rhs_end": 2}),
    Case("_slice_assign", [(5, 6), (2, 3)], {"begin": (1, 0), "end": (5, 6), "step": (2, 2)}),
    Case("_slice_assign_scalar", [(5, 6)], {"begin": (None, 2), "end": (None, 4), "scalar": 3.5}),
    Case("_crop_assign", [(4, 5), (2, 5)], {"begin": (1, 0), "end": (3, 5)}),
    Case("_crop_assign_scalar", [(4, 5)], {"begin": (0, 1), "end": (4, 3), "scalar": -2}),
    Case("broadcast_to", [(3, 1, 5)], {"shape": (2, 3, 4, 5)}),
    Case("broadcast_axis", [(3, 1, 5, 1)], {"axis": (1, 3), "size": (4, 2)}),
    Case("broadcast_axes", [(1, 6)], {"axis": (0,), "size": (3,)}),
    Case("broadcast_like", [(1, 7), (300, 7)], tol=4),
    Case("Concat", [(2, 3, 4), (2, 1, 4), (2, 5, 4)], {"dim": 1, "num_args": 3}),
    Case("concat", [(2, 3), (4, 3)], {"dim": 0, "num_args": 2}),
    Case("_rnn_param_concat", [(6,), (4,), (5,)], {"dim": 0, "num_args": 3}),
    # The image operators, on (H, W, C) images and (N, H, W, C) batches.
    Case("_image_to_tensor", [(5, 4, 3)], domains=[(0.0, 255.0)]),
    Case("_image_to_tensor", [(2, 5, 4, 3)], domains=[(0.0, 255.0)]),
    Case("_image_normalize", [(3, 4, 5)], {"mean": (0.1, 0.2, 0.3), "std": (0.5, 1.5, 2.0)}),
    Case("_image_normalize", [(2, 3, 4, 5)], {"mean": (0.2,), "std": (0.4,)}),
    Case("_image_flip_left_right", [(4, 5, 3)]),
    Case("_image_flip_top_bottom", [(4, 5, 3)]),
    Case("_image_crop", [(6, 7, 3)], {"x": 2, "y": 1, "width": 3, "height": 4}),
    Case("_image_crop", [(2, 6, 7, 3)], {"x": 0, "y": 2, "width": 7, "height": 3}),
    Case("_image_adjust_lighting", [(5, 4, 3)], {"alpha": (0.5, -1.0, 2.0)}, domains=[(0.0, 255.0)]),
    # Every interpolation, shrinking (area averages) and enlarging, an image and a batch.
    Case("_image_resize", [(6, 9, 2)], {"size": (4, 5)}),
    Case("_image_resize", [(2, 5, 4, 3)], {"size": (7,), "interp": 2}),
    Case("_image_resize", [(8, 6, 1)], {"size": (3, 2), "interp": 3}),
    Case("_image_resize", [(4, 5, 3)], {"size": (7, 9), "interp": 3}),
    Case("_image_resize", [(5, 6, 1)], {"size": (8, 3), "interp": 4}),
    Case("_image_resize", [(7, 5, 3)], {"size": (4,), "keep_ratio": True, "interp": 0}),
    Case("stack", [(3, 4), (3, 4)], {"axis": 2, "num_args": 2}),
    Case("split", [(4, 6, 5)], {"num_outputs": 3, "axis": 1}),
    Case("SliceChannel", [(4, 6)], {"num_outputs": 4, "axis": 0, "squeeze_axis": True}),
    Case("add_n", [(5, 6), (5, 6), (5, 6)], {"num_args": 3}),
    Case("ElementWiseSum", [(7,), (7,)], {"num_args": 2}),
    Case("slice_axis", [(5, 6, 7)], {"axis": 2, "begin": 1, "end": -2}),
    Case("tile", [(2, 3, 4)], {"reps": (2, 1, 3, 2)}),
    Case("repeat", [(3, 4)], {"repeats": 3, "axis": 0}),
    Case("repeat", [(3, 4)], {"repeats": 2}),
    Case("flip", [(3, 4, 5)], {"axis": (0, 2)}),
    Case("reverse", [(3, 4)], {"axis": 1}),
    Case("squeeze", [(3, 1, 4)]),
    # take, Embedding and pick: repeated indices add their gradients; indices outside the axis are
    # clipped or wrapped.
    Case("take", [(5, 4, 3), (2, 3)], {"axis": 1, "mode": "clip"}, domains=[SIGNED, INTS(10, -7)]),
    Case("take", [(5, 4, 3), (2, 3)], {"axis": 1, "mode": "wrap"}, domains=[SIGNED, INTS(10, -7)]),
    Case("take", [(6, 3), (4,)], domains=[SIGNED, INTS(6)]),
    Case("take", [(5, 4, 3), (2, 3)], {"axis": 1, "mode": "raise"}, domains=[SIGNED, INTS(4, -4)]),
    Case("Embedding", [(6, 5), (7, 3)], {"input_dim": 7, "output_dim": 3}, domains=[INTS(9)]),
    Case("pick", [(5, 4, 3), (5, 3)], {"axis": 1}, domains=[SIGNED, INTS(6)]),
    Case("pick", [(5, 4), (5, 1)], {"axis": -1, "keepdims": True, "mode": "wrap"},
         domains=[SIGNED, INTS(9)]),
    Case("pick", [(3, 4), (4,)], {"axis": 0}, domains=[SIGNED, INTS(3)]),
    Case("choose_element_0index", [(5, 4), (5,)], domains=[SIGNED, INTS(6, -2)]),
    Case("one_hot", [(3, 4)], {"depth": 5, "on_value": 2.5, "off_value": -1}, domains=[INTS(6)]),
    # gather_nd: columns of indices into the leading axes (negative from the end); repeated columns
    # add their gradients. scatter_nd with one column, so that no two write one place.
    Case("gather_nd", [(2, 3, 4), (2, 5)], domains=[SIGNED, INTS(2, -2)]),
    Case("gather_nd", [(3, 4), (1, 2, 3)], domains=[SIGNED, INTS(3, -3)]),
    Case("gather_nd", [(2, 3), (2, 7)], domains=[SIGNED, INTS(2)]),
    Case("scatter_nd", [(1, 3), (1, 1)], {"shape": (4, 3)}, domains=[SIGNED, INTS(4)]),
    Case("scatter_nd", [(1,), (2, 1)], {"shape": (3, 2)}, domains=[SIGNED, INTS(2)]),
    Case("batch_take", [(5, 4), (5,)], domains=[SIGNED, INTS(6, -2)], grad=False),  # int32 indices
    # Index arithmetic, in the indices' own dtype (floats holding whole numbers here).
    Case("_ravel_multi_index", [(3, 5)], {"shape": (4, 5, 6)}, domains=[INTS(4)], grad=False),
    Case("ravel_multi_index", [(2, 2, 3)], {"shape": (7, 6)}, domains=[INTS(6, -2)], grad=False),
    Case("_unravel_index", [(7,)], {"shape": (4, 5, 6)}, domains=[INTS(120)], grad=False),
    Case("unravel_index", [(2, 3)], {"shape": (7, 6)}, domains=[INTS(50, -5)], grad=False),
    Case("where", [(4, 5), (4, 5), (4, 5)], domains=[INTS(2)]),
    Case("where", [(4,), (4, 5), (4, 5)], domains=[INTS(2)]),  # a condition per row
    Case("zeros_like", [(3, 4)]),
    Case("ones_like", [(2, 5)]),
]
# Cast to every dtype, from values every dtype holds.
CASTS = [Case(op, [(4, 6)], {"dtype": to}, domains=[(0.0, 100.0)])
         for op in ("Cast", "cast")
         for to in ("float16", "float32", "float64", "int8", "uint8", "int32", "int64")]

# ---- Products (cuBLAS and OpenBLAS sum in different orders) ----

GEMM = [
    Case("dot", [(33, 70), (70, 21)], tol=8),
    Case("dot", [(70, 33), (21, 70)], {"transpose_a": True, "transpose_b": True}, tol=8),
    Case("dot", [(4, 5, 6), (6,)], tol=4),
    Case("batch_dot", [(3, 17, 40), (3, 17, 9)], {"transpose_a": True}, tol=8),
    Case("batch_dot", [(2, 4, 5), (2, 6, 5)], {"transpose_b": True}, tol=4),
    Case("FullyConnected", [(64, 5, 20), (30, 100), (30,)], {"num_hidden": 30}, tol=8),
    Case("FullyConnected", [(8, 3, 20), (7, 20)], {"num_hidden": 7, "no_bias": True, "flatten": False},
         tol=4),
]

# ---- Neural-network layers and losses ----

NN = (
    [Case("Activation", [(5, 7)], {"act_type": t})
     for t in ("relu", "sigmoid", "tanh", "softrelu", "softsign")]
    + [Case("LeakyReLU", [(4, 3, 5)], {"act_type": t}) for t in ("leaky", "elu", "selu", "gelu")]
    + [Case("LeakyReLU", [(4, 3, 5), (3,)], {"act_type": "prelu"}),
       Case("LeakyReLU", [(6, 2), (1,)], {"act_type": "prelu"}),
       Case("softmax", [(4, 5, 6)], {"axis": 1}),
       Case("softmax", [(8, 10)], {"temperature": 2.0}),
       Case("softmax", [(4, 5, 6), (4, 6)], {"axis": 1, "use_length": True}, domains=[SIGNED, INTS(6)]),
       Case("softmax", [(3, 7)], {"dtype": "float64"}),
       Case("softmin", [(4, 5, 6)], {"axis": 1}),
       Case("softmin", [(8, 10)], {"temperature": 2.0}),
       Case("log_softmax", [(4, 5, 6)], {"axis": 0}),
       Case("log_softmax", [(3, 300)], tol=4),
       Case("SoftmaxOutput", [(8, 10), (8,)], domains=[SIGNED, INTS(10)]),
       Case("SoftmaxOutput", [(8, 10), (8,)],
            {"use_ignore": True, "ignore_label": 0, "normalization": "valid", "smooth_alpha": 0.1},
            domains=[SIGNED, INTS(10)]),
       Case("SoftmaxOutput", [(2, 4, 3, 5), (2, 3, 5)],
            {"multi_output": True, "normalization": "batch", "out_grad": True},
            domains=[SIGNED, INTS(4)]),
       Case("SoftmaxOutput", [(3, 2, 6), (3, 2)], {"preserve_shape": True, "grad_scale": 0.5},
            domains=[SIGNED, INTS(6)]),
       Case("Softmax", [(5, 4), (5,)], domains=[SIGNED, INTS(4)]),
       Case("LinearRegressionOutput", [(6, 3), (6, 3)], {"grad_scale": 2.0}),
       Case("LogisticRegressionOutput", [(6, 3), (6, 3)], domains=[SIGNED, INTS(2)]),
       Case("MAERegressionOutput", [(6, 3), (6, 3)]),
       Case("MakeLoss", [(5, 4)], {"normalization": "valid", "valid_thresh": 0.1}),
       Case("SVMOutput", [(6, 4), (6,)], {"margin": 0.5, "regularization_coefficient": 2.0},
            domains=[SIGNED, INTS(4)]),
       Case("SVMOutput", [(2, 3, 5), (2, 3)], {"use_linear": True}, domains=[SIGNED, INTS(5)]),
       # Positive data: the moving mean (from zeros) stays inside (0, 1).
       Case("IdentityAttachKLSparseReg", [(4, 3, 2)], {"penalty": 0.01}, domains=[(0.2, 0.9)]),
       Case("Crop", [(2, 3, 5, 6)], {"h_w": (2, 3), "offset": (1, 2)}),
       Case("Crop", [(2, 3, 5, 6), (1, 1, 3, 4)], {"center_crop": True}),
       Case("make_loss", [(5, 4)], {"normalization": "batch", "grad_scale": 3.0}),
       # Labels of classes 1-4 (0 is the blank), as long as the label; then lengths of their own.
       Case("CTCLoss", [(6, 3, 5), (3, 4)], domains=[SIGNED, INTS(5, 1)], tol=4),
       Case("ctc_loss", [(7, 2, 4), (2, 3), (2,), (2,)],
            {"use_data_lengths": True, "use_label_lengths": True, "blank_label": "last"},
            domains=[SIGNED, INTS(3), INTS(8, 5), INTS(4)], tol=4),
       # rois of batch index 0 or 1 with corners at 0 or 1: boxes of 1 or 2 pixels a side, some
       # bins empty (a domain holds for every column, and rois need a valid batch index).
       Case("ROIPooling", [(2, 3, 6, 7), (5, 5)], {"pooled_size": (2, 3), "spatial_scale": 1.0},
            domains=[SIGNED, INTS(2)]),
       # Grids inside the image and around it (sampling is piecewise linear: the reference and
       # the device agree away from pixel boundaries, which random points miss).
       Case("Correlation", [(2, 3, 7, 6), (2, 3, 7, 6)],
            {"kernel_size": 3, "max_displacement": 2, "stride1": 2, "pad_size": 2}, tol=4),
       Case("Correlation", [(1, 2, 6, 7), (1, 2, 6, 7)], {"max_displacement": 1, "is_multiply": False}),
       Case("GridGenerator", [(2, 6)], {"transform_type": "affine", "target_shape": (3, 4)}),
       Case("GridGenerator", [(2, 2, 3, 4)], {"transform_type": "warp"}),
       Case("BilinearSampler", [(2, 3, 5, 6), (2, 2, 4, 3)], domains=[SIGNED, (-1.2, 1.2)], tol=4),
       Case("SpatialTransformer", [(2, 3, 5, 6), (2, 6)],
            {"target_shape": (3, 4), "transform_type": "affine", "sampler_type": "bilinear"},
            domains=[SIGNED, (-0.9, 0.9)], tol=4)] + [
       # The fused RNN: data (T, N, I), the parameter vector, the states (L D, N, H); small
       # weights keep the gates away from saturation; sequence lengths 1-4 of 4 steps.
       Case("RNN", [(4, 3, 3), (_rnn_size(mode, 3, 4, layers, dirs),)] + [(layers * dirs, 3, 4)] * states
            + [(3,)] * ("use_sequence_length" in extra),
            dict({"state_size": 4, "num_layers": layers, "mode": mode, "bidirectional": dirs == 2,
                  "state_outputs": True}, **extra),
            domains=[SIGNED, (-0.5, 0.5)] + [UNIT] * states + [INTS(5, 1)] * ("use_sequence_length" in extra),
            tol=4)
       for mode, layers, dirs, states, extra in (
           ("lstm", 2, 2, 2, {}), ("gru", 1, 2, 1, {}), ("rnn_tanh", 2, 1, 1, {}), ("rnn_relu", 1, 1, 1, {}),
           ("lstm", 1, 2, 2, {"use_sequence_length": True}),
           ("gru", 2, 1, 1, {"use_sequence_length": True}),
           ("lstm", 1, 1, 2, {"lstm_state_clip_min": -0.3, "lstm_state_clip_max": 0.4}))]

    # The convolution family: CPU kernels only so far (cuDNN is issue 24); they run wherever the
    # device has them (the test device's delegate the CPU's).
    + [Case("Convolution", [(2, 3, 5, 6), (4, 3, 3, 3), (4,)],
            {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1)}, tol=4),
       Case("Convolution", [(2, 4, 7, 6), (4, 2, 3, 2), (4,)],
            {"kernel": (3, 2), "num_filter": 4, "stride": (2, 1), "dilate": (1, 2), "pad": (1, 0),
             "num_group": 2}, tol=4),
       Case("Convolution", [(2, 3, 8), (2, 3, 3)], {"kernel": (3,), "num_filter": 2, "no_bias": True},
            dtypes=WIDE, tol=4),
       Case("Deconvolution", [(2, 3, 4, 5), (3, 4, 3, 3), (4,)],
            {"kernel": (3, 3), "num_filter": 4, "stride": (2, 2), "pad": (1, 1), "adj": (1, 0),
             "no_bias": False}, tol=4),
       Case("Pooling", [(2, 3, 7, 6)], {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)}),
       Case("Pooling", [(2, 3, 7, 6)],
            {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1), "pool_type": "avg"}),
       Case("Pooling", [(2, 3, 5, 4)], {"global_pool": True, "pool_type": "avg"}),
       Case("Pooling", [(2, 3, 10)], {"kernel": (4,), "stride": (3,), "pooling_convention": "same"}),
       Case("Pooling", [(2, 3, 10)],
            {"kernel": (3,), "stride": (2,), "pooling_convention": "same", "pool_type": "avg"}),
       Case("BatchNorm", [(4, 3, 5, 5), (3,), (3,)], {"fix_gamma": False}, tol=4),
       # MXNet 0.x's layers (Convolution_v1 is Convolution; Pooling_v1 pads with zeros).
       Case("Convolution_v1", [(2, 3, 5, 6), (4, 3, 3, 3), (4,)], {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1)}),
       Case("Pooling_v1", [(2, 3, 7, 6)], {"kernel": (3, 2), "stride": (2, 2), "pad": (1, 1)}),
       Case("Pooling_v1", [(2, 3, 7, 6)], {"kernel": (3, 3), "stride": (2, 2), "pool_type": "avg",
                                          "pooling_convention": "full"}),
       Case("BatchNorm_v1", [(4, 3, 5, 5), (3,), (3,)], {"fix_gamma": False, "output_mean_var": True}, tol=4),
       Case("BatchNorm", [(6, 4), (4,), (4,)], {"axis": 1, "eps": 1e-3}, tol=4),
       Case("SoftmaxActivation", [(3, 4, 5)], {"mode": "channel"}, tol=4),
       Case("SoftmaxActivation", [(4, 6)], tol=4),
       Case("softmax_cross_entropy", [(5, 4), (5,)], domains=[SIGNED, INTS(4)], tol=4),
       Case("LRN", [(2, 5, 3, 3)], {"nsize": 3, "alpha": 0.001, "beta": 0.75, "knorm": 2}),
       Case("LayerNorm", [(4, 6), (6,), (6,)], tol=4),
       Case("LayerNorm", [(3, 5, 4), (5,), (5,)], {"axis": 1, "output_mean_var": True}, tol=4),
       Case("InstanceNorm", [(2, 3, 4, 5), (3,), (3,)], tol=4),
       Case("GroupNorm", [(2, 6, 3, 2), (3,), (3,)], {"num_groups": 3, "output_mean_var": True}, tol=4),
       Case("L2Normalization", [(3, 4, 5)], tol=4),
       Case("L2Normalization", [(2, 3, 4, 2)], {"mode": "channel"}, tol=4),
       Case("L2Normalization", [(2, 3, 4)], {"mode": "spatial", "eps": 1e-3}, tol=4),
       Case("UpSampling", [(2, 3, 3, 4)], {"scale": 2, "sample_type": "nearest", "num_args": 1})])

# The nn plugin's kernels with float16 where MXNet's GPU users had it: the products and
# convolutions (accumulating in float32) and BatchNorm (its parameters and statistics in float32,
# as MXNet's). The others have none yet (MXNet 1.9.1 has them on the CPU too).
FLOAT16_NN = ("dot", "batch_dot", "FullyConnected", "Convolution", "Deconvolution", "BatchNorm")
for _case in GEMM + NN:
    if _case.op not in FLOAT16_NN:
        _case.dtypes = WIDE
# The optimizers' other ops: LAMB's second phase (r1 and r2 are norms, one element each) and the
# finiteness flags.
OPTIMIZER_OTHERS = [
    Case("lamb_update_phase2", [(4, 5), (4, 5), (1,), (1,)], {"lr": 0.1},
         domains=[SIGNED, SIGNED, POSITIVE, POSITIVE], dtypes=WIDE, grad=False),
    Case("lamb_update_phase2", [(6,), (6,), (1,), (1,)], {"lr": 0.1, "lower_bound": 1.0, "upper_bound": 1.5},
         domains=[SIGNED, SIGNED, POSITIVE, POSITIVE], dtypes=WIDE, grad=False),
    Case("all_finite", [(5, 9)], domains=[WITH_NAN], grad=False),
    Case("all_finite", [(3, 4)], grad=False),
    Case("multi_all_finite", [(3, 4), (7,)], {"num_arrays": 2}, domains=[SIGNED, WITH_NAN], grad=False),
    Case("multi_all_finite", [(3, 4), (7,)], {"num_arrays": 2}, grad=False),
    # 3075 elements: four chunks of the sum, the last one short.
    Case("multi_sum_sq", [(37, 29), (7,), (3075,)], {"num_arrays": 3}, grad=False),
]
# The densities, under both names: samples of three per distribution, two distributions.
LOW, HIGH, PROBABILITY, ON_SIMPLEX = (-2.0, -1.0), (1.0, 2.0), (0.2, 0.8), (0.1, 0.9)
DENSITIES = [Case(prefix + dist, [(2, 3)] + [(2,)] * len(domains), {"is_log": is_log},
                  domains=[POSITIVE] + domains, tol=4)
             for prefix in ("_random_pdf_", "random_pdf_") for is_log in (False, True)
             for dist, domains in (("uniform", [LOW, HIGH]), ("normal", [SIGNED, POSITIVE]),
                                   ("gamma", [POSITIVE, POSITIVE]), ("exponential", [POSITIVE]),
                                   ("poisson", [POSITIVE]), ("negative_binomial", [POSITIVE, PROBABILITY]),
                                   ("generalized_negative_binomial", [POSITIVE, POSITIVE]))]
DENSITIES += [Case(prefix + "dirichlet", [(2, 3, 4), (2, 4)], {"is_log": is_log},
                   domains=[ON_SIMPLEX, POSITIVE], tol=4)
              for prefix in ("_random_pdf_", "random_pdf_") for is_log in (False, True)]
# MXNet's older NDArray functions and the other small ops around them.
OLDER = [
    Case("_histogram", [(60,)], {"bin_cnt": 7, "range": (-1.5, 1.5)}, dtypes=WIDE, grad=False),
    Case("_histogram", [(5, 8)], {"bin_cnt": 4, "range": (0, 6)}, domains=[INTS(7)], dtypes=WIDE, grad=False),
    Case("_onehot_encode", [(6,), (6, 5)], domains=[INTS(6, -1)], grad=False),
    Case("fill_element_0index", [(4, 5), (4,), (4,)], domains=[SIGNED, SIGNED, INTS(6, -1)], grad=False),
    Case("khatri_rao", [(3, 4), (2, 4), (5, 4)], {"num_args": 3}, grad=False),
    Case("khatri_rao", [(3, 2)], {"num_args": 1}, grad=False),
    Case("im2col", [(2, 3, 5, 6)], {"kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2), "pad": (1, 1)}, tol=4),
    Case("im2col", [(1, 2, 4, 4, 3)], {"kernel": (2, 2, 2)}, tol=4),
    Case("col2im", [(2, 18, 18)], {"output_size": (5, 6), "kernel": (3, 2), "stride": (2, 1), "dilate": (1, 2),
                                   "pad": (1, 1)}, tol=4),
]
# The linear-algebra ops, on matrices made for them (the last two axes; test_conformance.draw):
# SPD symmetric positive definite, SYMMETRIC, DOMINANT diagonally dominant with a positive diagonal
# (well-conditioned triangles, solves, inverses and determinants).
SPD, SYMMETRIC, DOMINANT = "spd", "symmetric", "dominant"
_LINALG = [
    ("gemm", [(2, 4, 3), (2, 4, 5), (2, 3, 5)], {"transpose_a": True, "alpha": 2.0, "beta": 0.5}, []),
    ("gemm", [(2, 3, 2, 4), (2, 4, 2, 5), (2, 3, 2, 5)], {"axis": 1}, []),
    ("gemm2", [(3, 2, 4), (3, 5, 4)], {"transpose_b": True, "alpha": -1.5}, []),
    ("potrf", [(2, 4, 4)], {}, [SPD]),
    ("potri", [(2, 4, 4)], {}, [DOMINANT]),
    ("trmm", [(2, 3, 3), (2, 3, 4)], {"transpose": True, "alpha": 1.5}, []),
    ("trmm", [(3, 3), (4, 3)], {"rightside": True, "lower": False}, []),
    ("trsm", [(2, 3, 3), (2, 3, 4)], {"alpha": -2.0}, [DOMINANT]),
    ("trsm", [(3, 3), (4, 3)], {"rightside": True, "transpose": True, "lower": False}, [DOMINANT]),
    ("sumlogdiag", [(2, 3, 3)], {}, [DOMINANT]),
    ("extractdiag", [(2, 4, 4)], {"offset": -1}, []),
    ("makediag", [(2, 3)], {"offset": 2}, []),
    ("extracttrian", [(2, 4, 4)], {"offset": 1}, []),
    ("extracttrian", [(4, 4)], {"lower": False}, []),
    ("maketrian", [(2, 6)], {"offset": -1}, []),
    ("syrk", [(2, 3, 4)], {"transpose": True, "alpha": 0.5}, []),
    ("syrk", [(3, 4)], {}, []),
    ("gelqf", [(2, 3, 5)], {}, [DOMINANT]),
    ("inverse", [(2, 3, 3)], {}, [DOMINANT]),
    ("det", [(2, 4, 4)], {}, [DOMINANT]),
    ("slogdet", [(3, 3)], {}, [DOMINANT]),
]
LINALG = ([Case(prefix + op, shapes, kwargs, domains=domains, dtypes=WIDE, tol=10)
           for op, shapes, kwargs, domains in _LINALG for prefix in ("_linalg_", "linalg_")]
          + [Case("_linalg_syevd", [(2, 4, 4)], domains=[SYMMETRIC], dtypes=WIDE, tol=10)])
CASES = (_elementwise_cases() + REDUCTIONS + LAYOUT + CASTS + GEMM + NN + OPTIMIZER_OTHERS + DENSITIES
         + OLDER + LINALG)

# ---- What the suite checks through other calls than one op's forward and backward ----

# Made from nothing (their dtype is an argument), with what NumPy makes for them: compared exactly.
CREATIONS = [("_zeros", {"shape": (3, 4)}, lambda: np.zeros((3, 4))),
             ("_ones", {"shape": (5,)}, lambda: np.ones(5)),
             ("_full", {"shape": (2, 3), "value": 2.5}, lambda: np.full((2, 3), 2.5)),
             ("_arange", {"start": 2, "stop": 11, "step": 1.5, "repeat": 2},
              lambda: np.repeat(np.arange(2, 11, 1.5), 2)),
             ("_arange", {"start": 7}, lambda: np.arange(7)),
             ("_eye", {"N": 4, "M": 6, "k": 1}, lambda: np.eye(4, 6, 1)),
             ("_eye", {"N": 5, "k": -2}, lambda: np.eye(5, 5, -2)),
             ("_zeros", {"shape": (0, 2)}, lambda: np.zeros((0, 2))),
             ("_linspace", {"start": -1, "stop": 2, "num": 7}, lambda: np.linspace(-1, 2, 7)),
             ("_linspace", {"start": 3, "stop": 0, "num": 4, "endpoint": False},
              lambda: np.linspace(3, 0, 4, endpoint=False))]
# The fused optimizer updates (float32 and float64 only so far, as the nn plugin), with the ranges
# their states start in: averages of squares and histories are positive, and the centred variance
# n - g^2 too.
STATE_POSITIVE, STATE_SIGNED = (0.5, 1.5), (-0.5, 0.5)
UPDATES = [("sgd_update", [], {"lr": 0.1, "wd": 0.01, "clip_gradient": 0.5}),
           ("sgd_mom_update", [STATE_SIGNED], {"lr": 0.1, "momentum": 0.9, "wd": 0.01,
                                               "rescale_grad": 0.5}),
           ("nag_mom_update", [STATE_SIGNED], {"lr": 0.1, "momentum": 0.9}),
           ("adam_update", [STATE_SIGNED, STATE_POSITIVE], {"lr": 0.01, "beta1": 0.8,
                                                            "clip_gradient": 0.3}),
           ("rmsprop_update", [STATE_POSITIVE], {"lr": 0.01, "gamma1": 0.9, "clip_weights": 1.5}),
           ("rmspropalex_update", [STATE_POSITIVE, STATE_SIGNED, STATE_SIGNED],
            {"lr": 0.01, "gamma1": 0.9, "gamma2": 0.8}),
           ("adagrad_update", [STATE_POSITIVE], {"lr": 0.1, "wd": 0.001}),
           ("signsgd_update", [], {"lr": 0.1, "wd": 0.01}),
           ("signum_update", [STATE_SIGNED], {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "wd_lh": 0.02}),
           ("ftml_update", [STATE_POSITIVE, STATE_POSITIVE, STATE_SIGNED],
            {"lr": 0.1, "t": 2, "wd": 0.01, "clip_grad": 0.8}),
           ("ftrl_update", [STATE_SIGNED, STATE_POSITIVE], {"lr": 0.1, "lamda1": 0.05, "wd": 0.01}),
           # out=weight makes each step's weight the step direction g: still a chain of steps.
           ("lamb_update_phase1", [STATE_SIGNED, STATE_POSITIVE], {"t": 3, "wd": 0.01,
                                                                  "clip_gradient": 0.5})]
# Multi-precision updates: (op, momentum states, kwargs); the weight in any float dtype, the
# momentum and weight32 (the weight's master copy) in float32.
MP_UPDATES = [("mp_sgd_update", 0, {"lr": 0.1, "wd": 0.01, "clip_gradient": 0.5}),
              ("mp_sgd_mom_update", 1, {"lr": 0.1, "momentum": 0.9, "wd": 0.01, "rescale_grad": 0.5}),
              ("mp_nag_mom_update", 1, {"lr": 0.1, "momentum": 0.9, "wd": 0.01})]
# Random: after the same seed a device draws what the CPU draws, in the same dtype.
RANDOM = {"_random_uniform", "_random_normal", "_random_randint", "_sample_multinomial",
          "_shuffle", "Dropout", "uniform", "random_uniform", "normal", "random_normal",
          "random_randint", "sample_multinomial", "shuffle", "_random_exponential", "_random_gamma",
          "_random_poisson", "_random_negative_binomial", "_random_generalized_negative_binomial",
          "random_exponential", "random_gamma", "random_poisson", "random_negative_binomial",
          "random_generalized_negative_binomial"}
RANDOM |= {prefix + x for prefix in ("_sample_", "sample_") for x in (
    "uniform", "normal", "exponential", "gamma", "poisson", "negative_binomial",
    "generalized_negative_binomial")}
RANDOM |= {"_random_%s_like" % x for x in ("uniform", "normal", "exponential", "gamma", "poisson",
                                           "negative_binomial", "generalized_negative_binomial")}
RANDOM |= {"_sample_unique_zipfian"}  # the CPU's alone; test_random.py checks its distribution
# The random image operators: test_conformance.py's own test (the CPU's draws on each device).
RANDOM_IMAGE = {"_image_random_brightness": {"min_factor": 0.5, "max_factor": 1.5},
                "_image_random_contrast": {"min_factor": 0.5, "max_factor": 1.5},
                "_image_random_saturation": {"min_factor": 0.5, "max_factor": 1.5},
                "_image_random_hue": {"min_factor": 0.0, "max_factor": 1.0},
                "_image_random_color_jitter": {"brightness": 0.3, "contrast": 0.3, "saturation": 0.3, "hue": 0.3},
                "_image_random_lighting": {"alpha_std": 0.5},
                "_image_random_flip_left_right": {}, "_image_random_flip_top_bottom": {}}
RANDOM |= set(RANDOM_IMAGE)

# The aggregated updates (two weights a call) and LARS's rates: test_conformance.py's own test,
# against the CPU in the same dtypes.
MULTI_UPDATES = ["multi_sgd_update", "multi_sgd_mom_update", "multi_mp_sgd_update",
                 "multi_mp_sgd_mom_update", "preloaded_multi_sgd_update",
                 "preloaded_multi_sgd_mom_update", "preloaded_multi_mp_sgd_update",
                 "preloaded_multi_mp_sgd_mom_update", "_multi_adamw_update", "_multi_mp_adamw_update",
                 "_multi_lamb_update", "_multi_mp_lamb_update", "multi_lars"]

# Filled into the array given as out (its shape and dtype), or zeroed in place: test_conformance.py's
# own tests.
INTO_OUT = {"_set_value", "reset_arrays"}
# Updates with inputs of their own (AdamW's rescale_grad array, LAMB's phase outputs): test_conformance.py's
# own test, against the CPU in float32.
OTHER_UPDATES = ["_adamw_update", "_mp_adamw_update", "mp_lamb_update_phase1", "mp_lamb_update_phase2"]

COVERED = INTO_OUT | set(OTHER_UPDATES) | set(MULTI_UPDATES) | ({c.op for c in CASES} | {op for op, _, _ in CREATIONS} | {op for op, _, _ in UPDATES}
           | {op for op, _, _ in MP_UPDATES} | RANDOM)
