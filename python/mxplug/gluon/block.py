"""Gluon's blocks (MXNet 1.9.1's ``Block``, ``HybridBlock`` and ``SymbolBlock``).

Note [Gluon names]: a block's prefix comes from its class (``dense0_``) and a counter of the
scope it is made in (the parent's ``name_scope()``; at the top level, the counter of ``mx.name``
that symbols use too), and its parameters' names start with it, exactly as MXNet 1.x names them:
the names are what ``collect_params`` keys, ``export`` writes and ``Trainer`` and
``save_params`` files hold. ``save_parameters`` names them by their place instead
(``0.weight``: child name, then attribute).

Note [Hybridized blocks]: ``hybridize()`` makes a HybridBlock trace its ``hybrid_forward`` with
``F = mx.sym`` on the first call, which gives the graph ``export`` writes and checks that the block
is hybridizable; the calls themselves still run operator by operator (``F = mx.nd``) through the
same kernels and autograd, which gives the same values and gradients as MXNet's cached graph. A
fused cached graph (one engine push per call) is not yet.
"""
import copy
import json
import re
import threading
import warnings
from collections import OrderedDict

import numpy as np

from .. import initializer
from .. import name as _name
from .. import ndarray as nd
from .. import symbol
from ..ndarray import NDArray
from ..symbol import Symbol
from .parameter import DeferredInitializationError, Parameter, ParameterDict, _brief, _indent


class _BlockScope(object):
    """The scope of ``Block.name_scope()``: names its children's prefixes and parameters."""
    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """(prefix, ParameterDict) of a new block (Note [Gluon names])."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.NameManager.current.get(None, hint) + '_'
            params = ParameterDict(prefix) if params is None else ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = '%s%d_' % (hint, count)
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _flatten(args, inout_str):
    """(the NDArrays or Symbols in nested lists, their nesting) as MXNet's gluon flattens them."""
    if isinstance(args, (NDArray, Symbol)):
        if isinstance(args, Symbol):
            length = len(args.list_outputs())
            length = length if length > 1 else 0
            return [args], int(length)
        return [args], int(0)
    if args is None:
        return [None], int(-1)
    if not isinstance(args, (list, tuple)):
        raise AssertionError("HybridBlock %s must be (nested) list of Symbol or NDArray, but got %s of type %s"
                             % (inout_str, str(args), str(type(args))))
    flat, fmts = [], []
    for i in args:
        arg, fmt = _flatten(i, inout_str)
        flat.extend(arg)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """The inverse of _flatten: (the nested value, the rest of args)."""
    if isinstance(fmt, int):
        if fmt == 0:
            return args[0], args[1:]
        if fmt == -1:
            if args[0] is not None:
                raise ValueError('We do not support passing types that are not None when the initial HybridBlock '
                                 'has received NoneType and has been hybridized. Received arg = {}, fmt = {}.'
                                 .format(args[0], fmt))
            return None, args[1:]
        return args[:fmt], args[fmt:]
    ret = []
    for i in fmt:
        res, args = _regroup(args, i)
        ret.append(res)
    return ret, args


class HookHandle(object):
    """Removes a forward hook (``detach()``, or on leaving a ``with`` block)."""

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict, hook):
        self._id = id(hook)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = hooks_dict

    def detach(self):
        hooks_dict = self._hooks_dict_ref
        if hooks_dict is not None and self._id in hooks_dict:
            del hooks_dict[self._id]

    def __enter__(self):
        return self

    def __exit__(self, ptype, value, trace):
        self.detach()


class Block(object):
    """The base of layers and models: child blocks and parameters assigned as attributes are
    registered, ``forward`` says what a call computes.

    ``prefix``: the prefix of the names of its parameters and children (default: from the
    class name and a counter, Note [Gluon names]); ``params``: a ParameterDict whose parameters
    this block shares.
    """

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ''
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith('_') else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        s = '{name}(\n{modstr}\n)'
        modstr = '\n'.join(['  ({key}): {block}'.format(key=key, block=_indent(block.__repr__(), 2))
                            for key, block in self.__dict__.items() if isinstance(block, Block)])
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __setattr__(self, name, value):
        """Registers child blocks and parameters assigned as attributes."""
        if hasattr(self, name):
            existing = getattr(self, name)
            if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
                raise TypeError('Changing attribute type for {name} from {type1} to {type2}'
                                'is not allowed.'.format(name=name, type1=type(existing), type2=type(value)))
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise AssertionError("Overriding Parameter attribute %s is not allowed. If you want to share "
                                     "parameters between blocks, please set 'params' at Block construction "
                                     "instead." % name)
            self._reg_params[name] = value
        super(Block, self).__setattr__(name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())

        def _find_unregistered_block_in_container(data):
            if isinstance(data, (list, tuple)):
                return any(_find_unregistered_block_in_container(ele) for ele in data)
            if isinstance(data, dict):
                return any(_find_unregistered_block_in_container(v) for v in data.values())
            if isinstance(data, Block):
                return data not in children
            return False
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith('__') or k == '_children'):
                if _find_unregistered_block_in_container(v):
                    warnings.warn('"{name}" is an unregistered container with Blocks. Note that Blocks inside the '
                                  'list, tuple or dict will not be registered automatically. Make sure to register '
                                  'them using register_child() or switching to nn.Sequential/nn.HybridSequential '
                                  'instead. '.format(name=self.__class__.__name__ + "." + k), stacklevel=3)

    def _alias(self):
        return self.__class__.__name__.lower()

    @property
    def prefix(self):
        """The prefix of this block's parameter and child names."""
        return self._prefix

    @property
    def name(self):
        """The prefix without its trailing underscore."""
        return self._name

    def name_scope(self):
        """A ``with`` scope in which child blocks get names under this block's prefix."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (not its children's: see ``collect_params``)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this block's and its children's parameters; ``select``, a regular
        expression, keeps the names it matches (``'.*weight|.*bias'``)."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({name: value for name, value in self.params.items() if pattern.match(name)})
        for cld in self._children.values():
            ret.update(cld.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=''):
        if prefix:
            prefix += '.'
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Writes the parameters to ``filename`` named by their place (``0.weight``): what
        ``load_parameters`` of the same structure reads, in MXNet's file format."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            reverse = OrderedDict()
            for k, v in params.items():
                reverse.setdefault(v, []).append(k)
            params = {v[0]: k for k, v in reverse.items()}
        nd.save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename):
        """Deprecated (MXNet's too): writes the parameters by name, without this block's prefix."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you want load from "
                      "SymbolBlock later, please use export instead. For details, see "
                      "https://mxnet.apache.org/tutorials/gluon/save_load_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError('%s\nsave_params is deprecated. Using save_parameters may resolve this error.' % e)

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False, cast_dtype=False,
                        dtype_source='current'):
        """Loads what ``save_parameters`` wrote (or, for names without dots, ``save_params``)."""
        loaded = nd.load(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any('.' in i for i in loaded.keys()):
            # a file of names (save_params, ParameterDict.save): the old way
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            params_inv = {}
            for k, v in params.items():
                params_inv.setdefault(v, []).append(k)
            for name, param in params.items():
                if not any(p in loaded for p in params_inv[param]):
                    raise AssertionError(
                        "Parameter '%s' is missing in file '%s', which contains parameters: %s. Set "
                        "allow_missing=True to ignore missing parameters." % (name, filename, _brief(loaded)))
        for name in loaded:
            if not ignore_extra and name not in params:
                raise ValueError(
                    "Parameter '%s' loaded from file '%s' is not present in ParameterDict, which contains "
                    "parameters %s. Set ignore_extra=True to ignore. " % (name, filename, _brief(params)))
            if name in params:
                params[name]._load_init(loaded[name], ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def save(self, prefix):
        """Writes ``prefix-model.json`` (the blocks' structure: each block by class and number,
        its name, its children's names and, hybridized, its traced graph) and
        ``prefix-model.params`` (``save_parameters``), as MXNet 1.9.1's: ``load`` reads them
        into a block built the same way."""
        model = {}

        def save_block(blk, index, structure):
            mdl = {'orig_name': blk.name}
            structure[type(blk).__name__.lower() + str(index[0])] = mdl
            if isinstance(blk, HybridBlock):
                mdl['hybridized'] = bool(blk._cached_graph)
                if blk._cached_graph:
                    syms, out = blk._cached_graph
                    mdl['in_format'] = blk._in_format
                    mdl['out_format'] = blk._out_format
                    mdl['inputs'] = [sym.tojson() for sym in syms]
                    mdl['symbol'] = out.tojson()
            children = {}
            mdl['children'] = children
            for ch_name, child in blk._children.items():
                index[0] += 1
                children[child.name] = ch_name
                save_block(child, index, mdl)
        save_block(self, [0], model)
        with open(prefix + '-model.json', 'w') as fp:
            json.dump(model, fp)
        self.save_parameters(prefix + '-model.params')

    def load(self, prefix):
        """Reads what ``save`` wrote into this block (built as the saved one was): the blocks'
        names, the hybridized ones' graphs, and the parameters."""
        with open(prefix + '-model.json') as fp:
            model = json.load(fp)

        def load_block(blk, index, structure):
            key = type(blk).__name__.lower() + str(index[0])
            if key not in structure:
                raise ValueError("'%s-model.json' has no block %s where this model has one: it was saved from a "
                                 "model built differently" % (prefix, key))
            mdl = structure[key]
            blk._name = mdl['orig_name']
            if isinstance(blk, HybridBlock) and mdl.get('hybridized'):
                blk._in_format = mdl['in_format']
                blk._out_format = mdl['out_format']
                blk._cached_graph = ([symbol.load_json(i) for i in mdl['inputs']], symbol.load_json(mdl['symbol']))
                blk._active = True
            for p in list(blk.params.keys()):
                param = blk.params._params.pop(p)
                blk.params._params[blk.name + '_' + p[len(blk.params._prefix):]] = param
            for child in blk._children.values():
                index[0] += 1
                load_block(child, index, mdl)
            children = mdl['children']
            for ch_name in list(blk._children.keys()):
                child = blk._children.pop(ch_name)
                blk._children[children[child.name]] = child
        load_block(self, [0], model)
        self.load_parameters(prefix + '-model.params')

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        """Deprecated (MXNet's too): load_parameters."""
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def register_child(self, block, name=None):
        """Registers a child block (its parameters join ``collect_params``; it is called by
        ``Sequential``)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """``hook(block, inputs)`` before each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """``hook(block, inputs, outputs)`` after each forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Calls ``fn(block)`` on every child, recursively, then on this block."""
        for cld in self._children.values():
            cld.apply(fn)
        fn(self)
        return self

    def initialize(self, init=initializer.Uniform(), ctx=None, verbose=False, force_reinit=False):
        """Initializes the parameters of this block and its children (``collect_params``)."""
        self.collect_params().initialize(init, ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridizes the HybridBlocks among the children (Note [Hybridized blocks])."""
        for cld in self._children.values():
            cld.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Casts the parameters of this block and its children to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for _, param in self.params.items():
            param.cast(dtype)

    def __call__(self, *args):
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """What a call computes (override it)."""
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        """Calls ``callback(node name, op name, array)`` on the outputs (and with ``monitor_all``
        the inputs) of each operator of the hybridized children."""
        for cld in self._children.values():
            cld.register_op_hook(callback, monitor_all)

    def summary(self, *inputs):
        """Prints each layer's output shape and parameter count for a call on ``inputs``."""
        summary = OrderedDict()
        seen = set()
        hooks = []

        def _get_shape_str(args):
            flat, fmts = _flatten(args, 'output')
            return str(_regroup([x.shape if x is not None else None for x in flat], fmts)[0])

        def _register_summary_hook(block):
            def _summary_hook(block, _, outputs):
                class_name = block.__class__.__name__
                m_key = '%s-%i' % (class_name, len(summary) + 1)
                summary[m_key] = OrderedDict()
                summary[m_key]['output_shape'] = _get_shape_str(outputs)
                params = 0
                summary[m_key]['trainable'] = 0
                summary[m_key]['shared'] = 0
                for p in block.params.values():
                    params += p.data().size
                    summary[m_key]['trainable'] += 0 if p.grad_req == 'null' else p.data().size
                    if p in seen:
                        summary[m_key]['shared'] += p.data().size
                    else:
                        seen.add(p)
                summary[m_key]['n_params'] = params
            from .nn.basic_layers import Sequential, HybridSequential
            if not isinstance(block, (Sequential, HybridSequential)):
                hooks.append(block.register_forward_hook(_summary_hook))

        summary['Input'] = OrderedDict()
        summary['Input']['output_shape'] = _get_shape_str(inputs)
        summary['Input']['n_params'] = 0
        summary['Input']['trainable'] = 0
        summary['Input']['shared'] = 0
        try:
            self.apply(_register_summary_hook)
            self(*inputs)
            line_format = '{:>20}  {:>42} {:>15}'
            print('-' * 80)
            print(line_format.format('Layer (type)', 'Output Shape', 'Param #'))
            print('=' * 80)
            total_params = trainable_params = shared_params = 0
            for layer in summary:
                print(line_format.format(layer, str(summary[layer]['output_shape']), summary[layer]['n_params']))
                total_params += summary[layer]['n_params']
                trainable_params += summary[layer]['trainable']
                shared_params += summary[layer]['shared']
            print('=' * 80)
            print('Parameters in forward computation graph, duplicate included')
            print('   Total params: ' + str(total_params))
            print('   Trainable params: ' + str(trainable_params))
            print('   Non-trainable params: ' + str(total_params - trainable_params))
            print('Shared params in forward computation graph: ' + str(shared_params))
            print('Unique parameters in model: ' + str(total_params - shared_params))
            print('-' * 80)
        finally:
            for h in hooks:
                h.detach()


def _gather_type_ctx_info(args):
    """(has a Symbol, has an NDArray, the first NDArray's context) of nested args."""
    if isinstance(args, NDArray):
        return False, True, args.context
    if isinstance(args, Symbol):
        return True, False, None
    if isinstance(args, (list, tuple)):
        has_symbol = has_ndarray = False
        ctx = None
        for ele in args:
            s, n, c = _gather_type_ctx_info(ele)
            has_symbol |= s
            has_ndarray |= n
            ctx = ctx or c
        return has_symbol, has_ndarray, ctx
    return False, False, None


class HybridBlock(Block):
    """A block written once for arrays and symbols: ``hybrid_forward(F, x, *args, **params)``
    with ``F`` ``mx.nd`` or ``mx.sym`` and the registered parameters by attribute name.
    ``hybridize()`` and ``export`` (Note [Hybridized blocks])."""

    def __init__(self, prefix=None, params=None):
        super(HybridBlock, self).__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._in_format = None
        self._out_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False

    def __setattr__(self, name, value):
        super(HybridBlock, self).__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError("Children of HybridBlock must also be HybridBlock, but %s has type %s. If you are "
                             "using Sequential, please try HybridSequential instead." % (str(block), str(type(block))))
        super(HybridBlock, self).register_child(block, name)
        self._clear_cached_op()

    def _clear_cached_op(self):
        self._cached_graph = ()

    def hybridize(self, active=True, backend=None, backend_opts=None, clear=True, **kwargs):
        """Hybridizes this block and its children (Note [Hybridized blocks]); ``static_alloc``,
        ``static_shape`` and MXNet's other flags are accepted."""
        self._active = active
        self._flags = list(kwargs.items())
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn('"{block}" is being hybridized while still having forward hook/pre-hook. If "{block}" '
                          'is a child of HybridBlock, the hooks will not take effect.'.format(block=self))
        super(HybridBlock, self).hybridize(active, **kwargs)

    def cast(self, dtype):
        self._clear_cached_op()
        super(HybridBlock, self).cast(dtype)

    def _get_graph(self, *args):
        if not self._cached_graph:
            args, self._in_format = _flatten(args, "input")
            if len(args) > 1:
                inputs = [symbol.var('data%d' % i) if arg is not None else None for i, arg in enumerate(args)]
            else:
                inputs = [symbol.var('data')]
            grouped_inputs = _regroup(inputs, self._in_format)[0]
            params = {i: j.var() for i, j in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(symbol, *grouped_inputs, **params)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = inputs, (symbol.Group(out) if len(out) > 1 else out[0])
        return self._cached_graph

    def infer_shape(self, *args):
        """Infers the shapes of the parameters from the inputs' (deferred initialization)."""
        self._infer_attrs('infer_shape', 'shape', *args)

    def infer_type(self, *args):
        """Infers the dtypes of the parameters from the inputs'."""
        self._infer_attrs('infer_type', 'dtype', *args)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        args, _ = _flatten(args, "input")
        known = {i.name: getattr(j, attr) for i, j in zip(inputs, args) if i is not None}
        if attr == 'shape':
            arg_attrs, _, aux_attrs = out.infer_shape_partial(**known)
        else:
            arg_attrs, _, aux_attrs = out.infer_type(**known)
        if arg_attrs is None:
            raise ValueError("cannot infer the %ss of %s from its inputs" % (attr, self.name))
        sdict = dict(zip(out.list_arguments(), arg_attrs))
        sdict.update(zip(out.list_auxiliary_states(), aux_attrs))
        for i in self.collect_params().values():
            if i.name in sdict:
                setattr(i, attr, sdict[i.name])

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError("Deferred initialization failed because shape cannot be inferred. {}".format(e))

    def _finish_deferred(self, *args):
        self._deferred_infer_shape(*args)
        for p in self.collect_params().values():
            p._finish_deferred_init()

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Writes ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` names), which
        ``SymbolBlock.imports`` and ``mx.model.load_checkpoint`` read; after a forward call of the
        hybridized block. Returns the two file names."""
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with this block at least "
                               "once before calling export.")
        sym = self._cached_graph[1]
        sym_filename = '%s-symbol.json' % (path if path is not None else "")
        if path is not None:
            sym.save(sym_filename, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict['arg:%s' % name] = param._reduce()
            elif name in aux_names:
                arg_dict['aux:%s' % name] = param._reduce()
        params_filename = '%s-%04d.params' % ((path if path is not None else ""), epoch)
        if path is not None:
            nd.save(params_filename, arg_dict)
            return (sym_filename, params_filename)
        return sym, arg_dict

    def forward(self, x, *args):
        """Runs ``hybrid_forward`` with ``F = mx.nd`` on arrays (finishing a deferred
        initialization first) or ``F = mx.sym`` on symbols."""
        has_symbol, has_ndarray, ctx = _gather_type_ctx_info([x] + list(args))
        if has_symbol and has_ndarray:
            raise ValueError('In HybridBlock, we do not support mixed NDArrays and Symbols types for the input. '
                             'Please check the type of the args.\n')
        if not has_symbol and not has_ndarray:
            raise ValueError('In HybridBlock, there must be one NDArray or one Symbol in the input. Please check '
                             'the type of the args.\n')
        if has_ndarray:
            if self._active:
                self._get_graph(x, *args)  # Note [Hybridized blocks]
            try:
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            except DeferredInitializationError:
                self._finish_deferred(x, *args)
                params = {k: v.data(ctx) for k, v in self._reg_params.items()}
            with ctx:
                return self.hybrid_forward(nd, x, *args, **params)
        params = {i: j.var() for i, j in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(symbol, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """What a call computes, with F ``mx.nd`` or ``mx.sym`` (override it)."""
        raise NotImplementedError

    def register_op_hook(self, callback, monitor_all=False):
        self._callback = callback
        self._monitor_all = monitor_all
        super(HybridBlock, self).register_op_hook(callback, monitor_all)

    def optimize_for(self, x, *args, backend=None, **kwargs):
        raise NotImplementedError("optimize_for: mxplug has no subgraph backends (MXNet's graph partitioning)")


def _common_prefix(names):
    if not names:
        return ''
    prefix = names[0]
    for name in names:
        i = 0
        while i < len(prefix) and i < len(name) and prefix[i] == name[i]:
            i += 1
        prefix = prefix[:i]
    return prefix


class SymbolBlock(HybridBlock):
    """A block that computes a Symbol graph: ``outputs`` (a Symbol or a list), ``inputs`` (the
    variables fed by the call); its other arguments are its parameters. ``imports`` reads what
    ``export`` (or ``mx.model.save_checkpoint``) wrote. A call runs the graph's operators
    through autograd, so gradients reach the parameters and the inputs."""

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(i, dtype='float32') for i in input_names]
        else:
            inputs = [symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra, cast_dtype=True,
                                      dtype_source='saved')
        return ret

    def __repr__(self):
        s = '{name}(\n{modstr}\n)'
        modstr = '\n'.join(['{block} : {numinputs} -> {numoutputs}'.format(
            block=self._cached_graph[1], numinputs=len(self._cached_graph[0]),
            numoutputs=len(self._cached_graph[1].list_outputs()))])
        return s.format(name=self.__class__.__name__, modstr=modstr)

    def __init__(self, outputs, inputs, params=None):
        super(SymbolBlock, self).__init__(prefix=None, params=None)
        self._prefix = ''
        self._params = ParameterDict('', params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        out = symbol.Group(out) if len(out) > 1 else out[0]
        input_names = set()
        for i in syms:
            if len(i.get_internals().list_outputs()) != 1:
                raise AssertionError("Input symbols must be variable, but %s is an output of operators" % str(i))
            input_names.add(i.name)
        # Parameters' dtypes come from the inputs' declared ones where the graph infers them.
        arg_types, aux_types = {}, {}
        try:
            known = {i.name: i.attr('__dtype__') for i in syms}
            known = {k: _DTYPE_NAMES[int(v)] for k, v in known.items() if v is not None}
            if known:
                a, _, x = out.infer_type(**known)
                if a is not None:
                    arg_types = dict(zip(out.list_arguments(), a))
                    aux_types = dict(zip(out.list_auxiliary_states(), x))
        except Exception:  # dtypes then come from the loaded values
            pass
        for i in out.list_arguments():
            if i not in input_names:
                self.params.get(i, allow_deferred_init=True, dtype=arg_types.get(i, np.float32))
        for i in out.list_auxiliary_states():
            if i not in input_names:
                self.params.get(i, grad_req='null', allow_deferred_init=True, dtype=aux_types.get(i, np.float32))
        self._cached_graph = syms, out
        len_prefix = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {key[len_prefix:]: val for key, val in self._params.items()}
        self._graph = json.loads(out.tojson())

    def forward(self, x, *args):
        has_symbol, has_ndarray, ctx = _gather_type_ctx_info([x] + list(args))
        if has_symbol:
            args, in_fmt = _flatten([x] + list(args), "input")
            if in_fmt != self._in_format:
                raise AssertionError("Invalid input format")
            ret = copy.copy(self._cached_graph[1])
            ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], args)})
            return _regroup(list(ret), self._out_format)[0]
        args, in_fmt = _flatten([x] + list(args), "input")
        if in_fmt != self._in_format:
            raise AssertionError("Invalid input format")
        feed = {k.name: v for k, v in zip(self._cached_graph[0], args)}
        try:
            values = {name: p.data(ctx) for name, p in self._params.items()}
        except DeferredInitializationError:
            self._finish_deferred(x, *args[1:])
            values = {name: p.data(ctx) for name, p in self._params.items()}
        values.update(feed)
        with ctx:
            out = _run_graph(self._graph, values)
        return _regroup(out, self._out_format)[0]

    def _clear_cached_op(self):
        pass  # the graph is the block

    def cast(self, dtype):
        super(SymbolBlock, self).cast(dtype)

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


_DTYPE_NAMES = {0: 'float32', 1: 'float64', 2: 'float16', 3: 'uint8', 4: 'int32', 5: 'int8', 6: 'int64'}


def _run_graph(graph, values):
    """Runs a Symbol's JSON graph operator by operator (mx.nd, so autograd records it), with
    ``values`` for its variables; returns the heads."""
    from ..ndarray.register import _op_function
    nodes = graph["nodes"]
    outputs = {}
    for i, node in enumerate(nodes):
        if node["op"] == "null":
            if node["name"] not in values:
                raise ValueError("the graph's input '%s' has no value" % node["name"])
            outputs[i] = [values[node["name"]]]
            continue
        attrs = {k: v for k, v in node.get("attrs", {}).items() if not (k.startswith("__") and k.endswith("__"))}
        inputs = [outputs[e[0]][e[1]] for e in node["inputs"]]
        result = _op_function(node["op"])(*inputs, **attrs)
        outputs[i] = list(result) if isinstance(result, (list, tuple)) else [result]
    return [outputs[h[0]][h[1]] for h in graph["heads"]]
