"""Imperative gradients (MXNet's ``mx.autograd``): ``record`` ops on NDArrays, then ``backward``.

Note [Recorded graphs]: inside ``record()``, each operator call keeps a node on its outputs (the
op, its parameters, its inputs and all its outputs, the internal ones included), so a graph lives
as long as the arrays that reach it, as MXNet's does. ``backward`` walks the graph from the heads
in reverse order and runs each op's own backward kernel through the engine
(``_core.invoke_backward``: the kernels an executor runs), summing the gradients that reach an
array; the arrays made variables by ``attach_grad`` (or ``mark_variables``) receive theirs as
their grad_req says. Without ``retain_graph`` the graph is freed, and a second backward through
it raises MXNetError. ``autograd.Function`` records a node whose backward is its own Python
method.

What is recorded: the operators (mx.nd.<op>, the fluent methods, the arithmetic operators and
reshape). ``get_symbol`` gives the Symbol of a recorded graph. Not yet: indexing (a[1:3]) and
in-place arithmetic (a += b), which change or view arrays without a recorded op; higher-order
gradients (create_graph=True).
"""

from . import _core
from .base import MXNetError

# Both flags are per thread, kept by the extension (Note [Autograd state] in
# python/src/ndarray_bindings.cc), where the arithmetic operators read them.


def is_recording():
    """Whether operator calls are being recorded."""
    return _core.is_recording()


def is_training():
    """Whether ops run in training mode (Dropout drops, BatchNorm uses the batch's statistics)."""
    return _core.is_training()


def set_recording(is_recording):  # noqa: F811 (MXNet's argument name)
    """Sets recording on or off; returns the previous state."""
    return _core.set_recording(bool(is_recording))


def set_training(train_mode):
    """Sets training mode on or off; returns the previous state."""
    return _core.set_training(bool(train_mode))


class _Scope(object):
    """A with-block that sets recording and training mode (None: unchanged) and restores them."""

    def __init__(self, recording, training):
        self._enter = (recording, training)
        self._saved = None

    def __enter__(self):
        recording, training = self._enter
        self._saved = (set_recording(recording) if recording is not None else None,
                       set_training(training) if training is not None else None)
        return self

    def __exit__(self, *exc):
        recording, training = self._saved
        if self._enter[0] is not None:
            set_recording(recording)
        if self._enter[1] is not None:
            set_training(training)


def record(train_mode=True):  # noqa: F811
    """A scope that records operator calls for backward (in training mode unless told)."""
    return _Scope(True, train_mode)


def pause(train_mode=False):  # noqa: F811
    """A scope that does not record (in inference mode unless told)."""
    return _Scope(False, train_mode)


def train_mode():
    """A scope in training mode, recording or not as before."""
    return _Scope(None, True)


def predict_mode():
    """A scope in inference mode, recording or not as before."""
    return _Scope(None, False)


class _Node(object):
    """One recorded call (Note [Recorded graphs])."""

    __slots__ = ("op", "params", "inputs", "outputs", "function", "freed")

    def __init__(self, op, params, inputs, outputs, function=None):
        self.op, self.params, self.inputs, self.outputs = op, params, inputs, outputs
        self.function = function
        self.freed = False


def _attach(node):
    for i, out in enumerate(node.outputs):
        if out is not None:
            out._ag_entry = (node, i)


def invoke(name, arrays, kwargs, out=None, ctx=None):
    """Runs an operator (what mx.nd's functions and methods call), in training mode inside
    train_mode/record, and records it inside record(). The check is _core.run_op's (one call
    from Python for an op outside record()); inside record() it calls _invoke_recorded."""
    return _core.run_op(name, arrays, kwargs, out, ctx)


def _invoke_recorded(name, arrays, kwargs, out, ctx):
    inputs, outputs, visible = _core.invoke(name, arrays, kwargs, out, ctx, _core.is_training(),
                                            True)
    if out is not None:  # the caller's arrays stand for the visible outputs
        given = [out] if not isinstance(out, (list, tuple)) else list(out)
        outputs[:len(given)] = given
    params = {k: v for k, v in kwargs.items() if k != "name" and not isinstance(v, _core.NDArray)}
    # The caller's array objects, in the op's input order (the core returned its own handles).
    recorded = list(arrays) + [None] * (len(inputs) - len(arrays))
    named = {k: v for k, v in kwargs.items() if isinstance(v, _core.NDArray)}
    if named:
        slots = _core.op_inputs(name, params)
        for key, array in named.items():
            recorded[slots.index(key)] = array
    _attach(_Node(name, params, recorded, list(outputs)))
    if out is not None:
        return out
    return outputs[0] if visible == 1 else outputs[:visible]


_core._set_recorded_invoke(_invoke_recorded)


# ---- Variables --------------------------------------------------------------------------------

_GRAD_REQS = ("write", "add", "null")


def _make_variable(array, gradient, grad_req):
    if grad_req not in _GRAD_REQS:
        raise ValueError("grad_req must be one of %s, got %r" % (_GRAD_REQS, grad_req))
    array._ag_grad = gradient
    array._ag_req = grad_req
    array._ag_entry = None  # a variable is where gradients stop


def mark_variables(variables, gradients, grad_reqs="write"):
    """Makes arrays variables of the recorded graphs, each with the array its gradient goes to."""
    from .ndarray import NDArray
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise ValueError("mark_variables: %d variables, %d gradients and %d grad_reqs; expected as many of each"
                         % (len(variables), len(gradients), len(grad_reqs)))
    for v, g, r in zip(variables, gradients, grad_reqs):
        _make_variable(v, g, r)


def _is_variable(array):
    return getattr(array, "_ag_req", "null") != "null" and getattr(array, "_ag_grad", None) is not None


# ---- Backward ---------------------------------------------------------------------------------

def _graph(heads):
    """The recorded nodes that reach the heads, inputs before the nodes that read them."""
    order, seen = [], set()
    stack = [(getattr(h, "_ag_entry", None) or (None, 0))[0] for h in heads]
    stack = [(n, False) for n in stack if n is not None]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for a in node.inputs or []:
            entry = getattr(a, "_ag_entry", None) if a is not None else None
            if entry is not None and id(entry[0]) not in seen:
                stack.append((entry[0], False))
    return order


def _gradients(heads, head_grads, retain_graph):
    """{id(array): (array, its gradient)} for every array the heads' gradients reach."""
    from . import ndarray as nd
    from .ndarray import NDArray
    if isinstance(heads, NDArray):
        heads = [heads]
        head_grads = [head_grads] if head_grads is not None else None
    heads = list(heads)
    if head_grads is None:
        head_grads = [None] * len(heads)
    if len(head_grads) != len(heads):
        raise ValueError("backward: %d heads but %d head gradients" % (len(heads), len(head_grads)))
    if not any(getattr(h, "_ag_entry", None) is not None or _is_variable(h) for h in heads):
        raise MXNetError("backward: the heads were not computed in a record() scope: there is no graph to "
                         "differentiate (call their ops inside `with mx.autograd.record():`)")
    order = _graph(heads)
    if any(node.freed for node in order):
        raise MXNetError("backward: the graph was freed by an earlier backward; pass retain_graph=True to "
                         "the first backward to differentiate a graph twice")
    # Which arrays lead to a variable: only their gradients are computed.
    leads = {}

    def reaches(a):
        if a is None:
            return False
        if _is_variable(a):
            return True
        entry = getattr(a, "_ag_entry", None)
        return entry is not None and leads.get(id(entry[0]), False)

    for node in order:
        leads[id(node)] = any(reaches(a) for a in node.inputs or [])
    grads = {}

    def add(array, grad):
        key = id(array)
        grads[key] = (array, grad if key not in grads else grads[key][1] + grad)

    with pause():
        for h, g in zip(heads, head_grads):
            add(h, nd.ones_like(h) if g is None else g)
        for node in reversed(order):
            if not leads[id(node)]:
                continue
            out_grads = [grads[id(o)][1] if o is not None and id(o) in grads else None for o in node.outputs]
            if all(g is None for g in out_grads):
                continue
            if node.function is not None:
                visible = [g if g is not None else nd.zeros_like(o) for g, o in zip(out_grads, node.outputs)]
                in_grads = node.function.backward(*visible)
                in_grads = [in_grads] if isinstance(in_grads, NDArray) else list(in_grads)
            else:
                # An output of the op that received no gradient gets zeros (the kernel reads them
                # where its backward declares it does).
                filled = [g if g is not None or o is None else nd.zeros_like(o) for g, o in zip(out_grads, node.outputs)]
                in_grads = _core.invoke_backward(node.op, node.params, node.inputs, node.outputs, filled)
            for a, g in zip(node.inputs, in_grads):
                if g is not None and reaches(a):
                    add(a, g)
        if not retain_graph:
            for node in order:
                node.freed = True
                node.inputs = None
    return grads


def backward(heads, head_grads=None, retain_graph=False, train_mode=True):  # noqa: F811
    """Computes the gradients of heads (NDArrays recorded in record()) with respect to the
    variables, and writes them to the variables' gradient arrays ('write': replaces, 'add': adds).
    head_grads default to ones."""
    for array, grad in _gradients(heads, head_grads, retain_graph).values():
        if not _is_variable(array):
            continue
        if array._ag_req == "add":
            array._ag_grad[:] += grad
        else:
            array._ag_grad[:] = grad
        array._fresh_grad = True  # what gluon.Trainer checks before a step


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False, train_mode=True):  # noqa: F811
    """The gradients of heads with respect to ``variables`` (new arrays; the variables' gradient
    arrays are left as they are). A variable the heads do not depend on gets zeros."""
    from . import ndarray as nd
    from .ndarray import NDArray
    if create_graph:
        raise MXNetError("autograd.grad: create_graph=True (gradients of gradients) is not supported yet")
    single = isinstance(variables, NDArray)
    variables = [variables] if single else list(variables)
    for v in variables:
        if not _is_variable(v):
            raise MXNetError("autograd.grad: every variable must have a gradient buffer (attach_grad or "
                             "mark_variables) with grad_req other than 'null'")
    grads = _gradients(heads, head_grads, bool(retain_graph))
    result = [grads[id(v)][1] if id(v) in grads else nd.zeros_like(v) for v in variables]
    return result[0] if single else result


def get_symbol(x):
    """The Symbol of the graph recorded up to ``x``, as MXNet builds it: the arrays it starts from
    become variables ``var0``, ``var1``... in the order a depth-first walk from ``x`` meets them,
    and the recorded calls nodes ``node_0``, ``node_1``... in the order they are computed, with
    their parameters. An ``autograd.Function`` has no operator, so a graph through one raises."""
    from . import symbol as sym
    from .symbol.register import _op_function
    entry = getattr(x, "_ag_entry", None)
    if entry is None:
        raise MXNetError("get_symbol: the array was not computed by a recorded operator (call it "
                         "inside autograd.record())")
    variables, made = {}, {}  # id(array) -> Symbol; id(node) -> Symbol

    def symbol_of(array):
        producer = getattr(array, "_ag_entry", None)
        if producer is None:
            if id(array) not in variables:
                variables[id(array)] = sym.var("var%d" % len(variables))
            return variables[id(array)]
        node, index = producer
        built = node_symbol(node)
        return built if len(node.outputs) == 1 else built[index]

    def node_symbol(node):
        if id(node) in made:
            return made[id(node)]
        if node.function is not None:
            raise MXNetError("get_symbol: the graph holds an autograd.Function (%s), which no "
                             "operator computes" % type(node.function).__name__)
        if node.freed:
            raise MXNetError("get_symbol: the graph was freed by a backward without retain_graph")
        inputs = [symbol_of(a) for a in node.inputs if a is not None]
        made[id(node)] = _op_function(node.op)(*inputs, name="node_%d" % len(made), **node.params)
        return made[id(node)]

    return symbol_of(x)


class Function(object):
    """A differentiable function written in Python (MXNet's autograd.Function): subclass it with
    ``forward(self, *inputs)`` and ``backward(self, *output_grads)`` (returning one gradient per
    input); call an instance on NDArrays inside record(). ``save_for_backward`` keeps arrays for
    backward in ``saved_tensors``."""

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def __call__(self, *inputs):
        from .ndarray import NDArray
        with pause(train_mode=is_training()):
            outputs = self.forward(*inputs)
        single = isinstance(outputs, NDArray)
        outs = [outputs] if single else list(outputs)
        if is_recording():
            _attach(_Node(None, None, list(inputs), outs, function=self))
        return outputs

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError


def _ndarray_methods():
    """attach_grad, grad, detach and backward on NDArray."""
    from . import ndarray as nd
    from .ndarray import NDArray

    def attach_grad(self, grad_req="write", stype=None):
        """Makes this array a variable of recorded graphs, with a zero gradient array (``grad``)."""
        if stype not in (None, "default"):
            raise MXNetError("attach_grad: storage type %r is not supported: mxplug stores every array dense" % stype)
        _make_variable(self, nd.zeros_like(self), grad_req)

    def detach(self):
        """This array's data, outside every recorded graph (no copy)."""
        return self._reshape_view(self.shape)

    def backward_method(self, out_grad=None, retain_graph=False, train_mode=True):
        """backward([self], [out_grad])."""
        backward([self], [out_grad], retain_graph, train_mode)

    NDArray.attach_grad = attach_grad
    NDArray.grad = property(lambda self: getattr(self, "_ag_grad", None), doc="The gradient array of a variable.")
    NDArray.detach = detach
    NDArray.backward = backward_method


__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training", "set_recording",
           "set_training", "mark_variables", "backward", "grad", "get_symbol", "Function"]
