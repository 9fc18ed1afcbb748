"""Data parallelism within a process: one executor per context, each bound to its slice of the
batch along the batch axis (MXNet's DataParallelExecutorGroup). Parameters are replicated; the
module sums their gradients through the kvstore or its updater."""
from collections import OrderedDict

from .. import ndarray as nd
from ..context import cpu
from ..io import DataDesc
from ..ndarray import NDArray


def split_input_slice(batch_size, work_load_list):
    """The batch cut into one contiguous slice per device, sized by the work loads (rounded as
    Python rounds, the last slice taking what rounding leaves)."""
    total = float(sum(work_load_list))
    sizes = [int(round(w * batch_size / total)) for w in work_load_list]
    if sum(sizes) < batch_size:
        sizes[-1] += batch_size - sum(sizes)
    slices, end = [], 0
    for size in sizes:
        begin = min(end, batch_size)
        end = min(begin + size, batch_size)
        if begin >= end:
            raise ValueError("Too many slices: batch size %d over %d devices leaves some empty"
                             % (batch_size, len(work_load_list)))
        slices.append(slice(begin, end))
    return slices


def _batch_axes(descs):
    return [DataDesc.get_batch_axis(getattr(d, "layout", None)) for d in descs]


def _slice_along(array, axis, islice):
    if axis == 0:
        return array[islice]
    if axis > 0:
        return nd.slice_axis(array, axis=axis, begin=islice.start, end=islice.stop)
    return array


def _merge(tensors, axis):
    """One array from the per-device pieces, concatenated on the first device's context."""
    if axis < 0 or len(tensors) == 1:
        return tensors[0]
    ctx = tensors[0].context
    return nd.concat(*[t.as_in_context(ctx) for t in tensors], dim=axis)


def _prepare_group2ctxs(group2ctxs, count):
    """Module's group2ctxs as one group2ctx per data-parallel context, as MXNet reads it: a list of
    dicts (one per context), or a dict of group to a context or to a list of them (one per context,
    or one for all)."""
    if group2ctxs is None:
        return [None] * count
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != count:
            raise ValueError("group2ctxs: a list of %d dicts, one per context, was given %d"
                             % (count, len(group2ctxs)))
        return list(group2ctxs)
    if not isinstance(group2ctxs, dict):
        raise TypeError("group2ctxs should be a dict of str to context (or to a list of them), or a "
                        "list of such dicts; got %s" % type(group2ctxs).__name__)
    out = [{} for _ in range(count)]
    for group, where in group2ctxs.items():
        contexts = list(where) if isinstance(where, (list, tuple)) else [where]
        if len(contexts) == 1:
            contexts = contexts * count
        if len(contexts) != count:
            raise ValueError("group2ctxs['%s']: %d contexts given, expected 1 or %d (one per "
                             "context of the module)" % (group, len(contexts), count))
        for i, c in enumerate(contexts):
            out[i][group] = c
    return out


def refuse_merged_states(merge_multi_context):
    """MXNet's refusal of get_states(merge_multi_context=True): a state need not have a batch
    axis to merge along."""
    if merge_multi_context:
        raise ValueError("get_states: merge_multi_context=True is not supported; call "
                         "get_states(merge_multi_context=False)")


class ExecutorGroup(object):
    """Executors of one symbol over `contexts`, with the parameter, gradient and auxiliary
    arrays listed per name and then per device."""

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, fixed_param_names=None, grad_req='write',
                 group2ctxs=None, state_names=None, shared_group=None):
        self.symbol = symbol
        self.contexts = contexts
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.workload = workload
        self.param_names = param_names
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.fixed_param_names = set(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.output_names = symbol.list_outputs()
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr("__layout__"))
                               for i in range(len(self.output_names))]
        self.data_names = [d.name for d in data_shapes]
        self.grad_req = self._grad_reqs(grad_req)
        self.execs = []
        self._default_execs = None
        self._read_in_place = {}  # (executor index, name): (the array read last, the argument)
        # Another group whose parameters, their gradients and auxiliary states these executors
        # use as their own (BucketingModule: one group per bucket, one set of parameters).
        self.shared_group = shared_group
        if shared_group is not None and len(shared_group.execs) < len(contexts):
            raise ValueError("shared module runs on %d contexts, this module on %d"
                             % (len(shared_group.execs), len(contexts)))
        self.bind_exec(data_shapes, label_shapes)

    def _grad_reqs(self, grad_req):
        data_req = grad_req if self.inputs_need_grad else 'null'
        reqs = {}
        for name in self.arg_names:
            if name in self.param_names:
                if not self.for_training or name in self.fixed_param_names:
                    reqs[name] = 'null'
                elif isinstance(grad_req, dict):
                    reqs[name] = grad_req.get(name, 'write')
                else:
                    reqs[name] = grad_req
            elif name in self.data_names and isinstance(data_req, dict):
                reqs[name] = data_req.get(name, 'null')
            elif name in self.data_names:
                reqs[name] = data_req
            else:
                reqs[name] = 'null'
        return reqs

    # ---- Binding ---------------------------------------------------------------------------

    def bind_exec(self, data_shapes, label_shapes, reshape=False):
        """Binds (or, with reshape, re-shapes) one executor per context for these shapes."""
        self.batch_size = None
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_layouts = _batch_axes(data_shapes)
        # Labels that the symbol does not take (a network without a loss) are not loaded.
        self.label_names = [d.name for d in (label_shapes or []) if d.name in self.arg_names]
        labels = [d for d in (label_shapes or []) if d.name in self.arg_names]
        self.label_layouts = _batch_axes(labels)
        for desc, axis in zip(data_shapes + labels, self.data_layouts + self.label_layouts):
            if axis < 0:
                continue
            if self.batch_size is None:
                self.batch_size = desc.shape[axis]
            elif desc.shape[axis] != self.batch_size:
                raise ValueError("all data must have the same batch size: %s has %d along its "
                                 "batch axis, expected %d" % (desc.name, desc.shape[axis],
                                                              self.batch_size))
        self.slices = split_input_slice(self.batch_size, self.workload)
        type_dict = {d.name: d.dtype for d in data_shapes + labels}
        for i, ctx in enumerate(self.contexts):
            shapes = {}
            for desc, axis in zip(data_shapes + labels, self.data_layouts + self.label_layouts):
                shape = list(desc.shape)
                if axis >= 0:
                    shape[axis] = self.slices[i].stop - self.slices[i].start
                shapes[desc.name] = tuple(shape)
            if reshape:
                self.execs[i] = self._default_execs[i].reshape(allow_up_sizing=True, **shapes)
            else:
                shared = self.shared_group.execs[i] if self.shared_group is not None else None
                self.execs.append(self.symbol.simple_bind(ctx, grad_req=self.grad_req,
                                                          type_dict=type_dict,
                                                          group2ctx=self.group2ctxs[i],
                                                          shared_arg_names=self.param_names,
                                                          shared_exec=shared, **shapes))
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes):
        """Re-binds for new input shapes, sharing the parameters."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        self.finish_reading()  # into the executors that read it
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _collect_arrays(self):
        self._arg_index = {name: i for i, name in enumerate(self.arg_names)}
        # What loading a batch checks, read once per bind rather than per batch.
        self._input_facts = {(k, name): (e.arg_dict[name].shape, e.arg_dict[name]._dtype_name)
                             for k, e in enumerate(self.execs)
                             for name in self.data_names + self.label_names}
        self._input_ctx = [e._ctx._dl() for e in self.execs]
        self.param_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.param_names]
        if self.for_training:
            self.grad_arrays = [[e.grad_dict[name] for e in self.execs] for name in self.param_names]
        else:
            self.grad_arrays = None
        self.aux_arrays = [[e.aux_dict[name] for e in self.execs] for name in self.aux_names]
        self.state_arrays = [[e.arg_dict[name] for e in self.execs] for name in self.state_names]

    # ---- Parameters ------------------------------------------------------------------------

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copies the parameters into every device's executor."""
        for e in self.execs:
            e.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Writes the devices' parameters, averaged, into the given dicts' arrays."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if len(block) == 1:
                    weight = block[0].copyto(cpu())
                else:
                    weight = sum(w.copyto(cpu()) for w in block) / len(block)
                weight.astype(target[name].dtype).copyto(target[name])

    # ---- States: inputs that are neither data nor parameters (an RNN's carried state) -------

    def get_states(self, merge_multi_context=True):
        """[[state_dev1, state_dev2, ...], ...] per state name."""
        refuse_merged_states(merge_multi_context)
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Copies `states` ([[state_dev1, ...], ...], or one array per state for every device)
        into the state arrays, or fills them all with the number `value`."""
        if (states is None) == (value is None):
            raise ValueError("set_states: give exactly one of states and value")
        if value is not None:
            for block in self.state_arrays:
                for array in block:
                    array[:] = value
            return
        if len(states) != len(self.state_arrays):
            raise ValueError("set_states: %d states given, the module has %d (%s)"
                             % (len(states), len(self.state_arrays), ", ".join(self.state_names)))
        for name, src, block in zip(self.state_names, states, self.state_arrays):
            sources = list(src) if isinstance(src, (list, tuple)) else [src] * len(block)
            if len(sources) != len(block):
                raise ValueError("set_states: %s has %d arrays, the module runs on %d devices"
                                 % (name, len(sources), len(block)))
            for array, target in zip(sources, block):
                if not isinstance(array, NDArray):
                    array = nd.array(array)
                if array.shape != target.shape:
                    raise ValueError("set_states: %s has shape %s, the module needs %s"
                                     % (name, array.shape, target.shape))
                array.astype(target._dtype_name).copyto(target)

    # ---- Running ---------------------------------------------------------------------------

    def _pieces(self, arrays, names, layouts):
        """(executor index, argument name, its piece of the batch in the argument's dtype)."""
        for src, name, axis in zip(arrays, names, layouts):
            if not isinstance(src, NDArray):
                src = nd.array(src)
            for k, islice in enumerate(self.slices):
                shape, dtype_name = self._input_facts[k, name]
                piece = src if len(self.execs) == 1 else _slice_along(src, axis, islice)
                if piece.shape != shape:
                    raise ValueError("%s: the batch gives shape %s, the module is bound to %s"
                                     % (name, piece.shape, shape))
                if piece._dtype_name != dtype_name:
                    piece = piece.astype(dtype_name)
                yield k, name, piece

    def _batch_pieces(self, data_batch):
        pieces = list(self._pieces(data_batch.data, self.data_names, self.data_layouts))
        if self.label_names and data_batch.label:
            label_of = dict(zip([d.name for d in self.label_shapes], data_batch.label))
            pieces += self._pieces([label_of[n] for n in self.label_names], self.label_names,
                                   self.label_layouts)
        return pieces

    def forward(self, data_batch, is_train=None):
        """Loads the batch's slices into the executors and runs their forward passes."""
        if is_train is None:
            is_train = self.for_training
        self.finish_reading()
        for k, name, piece in self._batch_pieces(data_batch):
            piece.copyto(self.execs[k].arg_dict[name])
        for e in self.execs:
            e.forward(is_train=is_train)

    def forward_reading(self, data_batch):
        """Inference forward passes that read the batch's slices where the bound inputs would be
        read, without copying them in (Note [Reading in place] in core/src/executor/executor.cc);
        finish_reading copies the last batch in, leaving what forward would have left."""
        reading = [[None] * len(e.arg_arrays) for e in self.execs]
        for k, name, piece in self._batch_pieces(data_batch):
            if piece._ctx != self._input_ctx[k]:
                piece = piece.as_in_context(self.execs[k]._ctx)
            reading[k][self._arg_index[name]] = piece
            self._read_in_place[k, name] = (piece, self.execs[k].arg_dict[name])
        for e, arrays in zip(self.execs, reading):
            e.handle.forward(False, arrays)
            e._report_monitored()

    def finish_reading(self):
        """Copies the batch that forward_reading read last into the bound inputs."""
        for piece, target in self._read_in_place.values():
            piece.copyto(target)
        self._read_in_place = {}

    def install_monitor(self, mon):
        """Installs a monitor (mx.monitor.Monitor) on every executor."""
        for e in self.execs:
            mon.install(e)

    def backward(self, out_grads=None):
        """Runs the backward passes, slicing `out_grads` as the batch was sliced."""
        if not self.for_training:
            raise RuntimeError("backward: re-bind with for_training=True to run backward")
        out_grads = [] if out_grads is None else list(out_grads)
        for e, islice in zip(self.execs, self.slices):
            pieces = [_slice_along(g, axis, islice).as_in_context(e._ctx) if len(self.execs) > 1
                      else g for g, axis in zip(out_grads, self.output_layouts)]
            e.backward(out_grads=pieces or None)

    def get_outputs(self, merge_multi_context=True):
        outputs = [[e.outputs[i] for e in self.execs] for i in range(len(self.output_names))]
        if merge_multi_context:
            return [_merge(pieces, axis) for pieces, axis in zip(outputs, self.output_layouts)]
        return outputs

    def get_input_grads(self, merge_multi_context=True):
        if not self.inputs_need_grad:
            raise RuntimeError("get_input_grads: bind with inputs_need_grad=True")
        grads = [[e.grad_dict[name] for e in self.execs] for name in self.data_names]
        if merge_multi_context:
            return [_merge(pieces, axis) for pieces, axis in zip(grads, self.data_layouts)]
        return grads

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Updates the metric with each device's outputs and its slice of the labels."""
        label_names = [d.name for d in (self.label_shapes or [])]
        label_layouts = _batch_axes(self.label_shapes or [])
        for k, (e, islice) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                labels_slice = labels[k]
            elif len(self.execs) == 1:
                labels_slice = list(labels or [])
            else:
                labels_slice = [_slice_along(l, axis, islice)
                                for l, axis in zip(labels or [], label_layouts)]
            eval_metric.update_dict(OrderedDict(zip(label_names, labels_slice)),
                                    OrderedDict(zip(self.output_names, e.outputs)))
