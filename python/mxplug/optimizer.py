"""Optimizers (MXNet's ``mx.optimizer``). Each step is one fused operator of the optimizer
plugin (``sgd_update``, ``sgd_mom_update``, ``nag_mom_update``, ``adam_update``,
``rmsprop_update``, ``rmspropalex_update``, ``adagrad_update``, ``signum_update``,
``signsgd_update``, ``ftml_update``, ``ftrl_update``; LAMB's two phases) that updates the
weight and the optimizer states in place.

An optimizer keeps the per-weight learning-rate and weight-decay multipliers and the update
counts that drive its ``lr_scheduler``; an :class:`Updater` owns the states and is what a
KVStore or a Module calls as ``updater(index, grad, weight)``.
"""
import math
import os
import pickle
import warnings

import numpy

from . import _core
from . import ndarray as nd
from .ndarray import NDArray

__all__ = ["Optimizer", "SGD", "NAG", "Adam", "AdaGrad", "RMSProp", "Signum", "FTML", "Ftrl", "LAMB", "LARS",
           "LBSGD",
           "AdaDelta", "Adamax", "Nadam", "SGLD", "DCASGD", "Updater", "get_updater", "create", "register"]


class Optimizer(object):
    """Base class of the optimizers.

    Parameters follow MXNet: ``rescale_grad`` (often ``1/batch_size``), ``param_idx2name``
    (index to parameter name, which makes the weight decay 0 for names not ending in
    ``_weight`` or ``_gamma``), ``wd``, ``clip_gradient``, ``learning_rate`` (default 0.01
    unless ``lr_scheduler`` gives one), ``lr_scheduler``, ``sym`` (whose ``__lr_mult__`` /
    ``__wd_mult__`` attributes set multipliers), ``begin_num_update``, ``multi_precision``,
    ``param_dict``.
    """
    opt_registry = {}

    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0., clip_gradient=None,
                 learning_rate=None, lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None and lr_scheduler.base_lr != learning_rate:
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                          "``learning_rate`` in optimizer.")
            lr_scheduler.base_lr = learning_rate
        self.wd = wd
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("param_idx2name should be a dict of param indexes to names, got %s"
                            % type(param_idx2name).__name__)
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    @staticmethod
    def register(klass):
        """Registers an optimizer class under its lower-cased name (a decorator)."""
        if not isinstance(klass, type):
            raise TypeError("register takes an optimizer class, got %r" % (klass,))
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            old = Optimizer.opt_registry[name]
            warnings.warn("WARNING: New optimizer %s.%s is overriding existing optimizer %s.%s"
                          % (klass.__module__, klass.__name__, old.__module__, old.__name__))
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An optimizer by registered name (case-insensitive) with its keyword arguments."""
        klass = Optimizer.opt_registry.get(name.lower())
        if klass is None:
            raise ValueError("Cannot find optimizer %s; registered optimizers are: %s"
                             % (name, ", ".join(sorted(Optimizer.opt_registry))))
        return klass(**kwargs)

    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def create_state(self, index, weight):
        """The state of one weight (momentum and the like), made before its first update."""
        return None

    # Where a float16 weight's float32 master copy sits in its multi-precision state: first, or
    # (SGD, NAG and LARS, as in MXNet, whose pickled states must load here) after the state.
    _master_copy_last = False

    def create_state_multi_precision(self, index, weight):
        """Like create_state; with multi_precision, the state comes with a float32 master copy
        of a float16 weight: (master, state), or (state, master) for SGD, NAG and LARS."""
        if self.multi_precision and weight.dtype == numpy.float16:
            master = weight.astype('float32')
            inner = self.create_state(index, master)
            return (inner, master) if self._master_copy_last else (master, inner)
        if weight.dtype == numpy.float16:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy or "
                          "slow convergence. Consider using multi_precision=True option of the "
                          "optimizer")
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Updates one weight in place from its gradient and state."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        if self.multi_precision and weight.dtype == numpy.float16:
            inner, master = state if self._master_copy_last else state[::-1]
            self.update(index, master, grad.astype('float32'), inner)
            nd.cast(master, dtype=weight.dtype, out=weight)
        else:
            self.update(index, weight, grad, state)

    def set_learning_rate(self, lr):
        """Sets the learning rate; an optimizer with an lr_scheduler refuses (UserWarning)."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note that "
                              "set_learning_rate can mutate the value of the learning rate of the "
                              "optimizer only when the LRScheduler of the optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):
        raise DeprecationWarning

    def _multipliers_from_sym(self, attribute):
        mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and attribute in attr[name]:
                    mult[name] = float(attr[name][attribute])
        return mult

    def set_lr_mult(self, args_lr_mult):
        """Learning-rate multipliers by parameter name (or index); the symbol's __lr_mult__
        attributes come first."""
        self.lr_mult = self._multipliers_from_sym('__lr_mult__')
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Weight-decay multipliers by parameter name (or index). Parameters named in
        param_idx2name that do not end in _weight or _gamma get 0 (biases, BatchNorm's beta)."""
        self.wd_mult = {n: 0.0 for n in self.idx2name.values()
                        if not (n.endswith('_weight') or n.endswith('_gamma'))}
        self.wd_mult.update(self._multipliers_from_sym('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        """Keeps update counts per device, so that data parallelism counts each step once."""
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index):
        for idx in index if isinstance(index, (list, tuple)) else [index]:
            count = self._index_update_count.get(idx, self.begin_num_update) + 1
            self._index_update_count[idx] = count
            self.num_update = max(count, self.num_update)

    def _scaled(self, indices, base, mults, attribute):
        values = [base] * len(indices)
        for i, index in enumerate(indices):
            if index in self.param_dict:
                values[i] *= getattr(self.param_dict[index], attribute)
            elif index in mults:
                values[i] *= mults[index]
            elif index in self.idx2name:
                values[i] *= mults.get(self.idx2name[index], 1.0)
        return values

    def _get_lrs(self, indices):
        return self._scaled(indices, self.learning_rate, self.lr_mult, 'lr_mult')

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        return self._scaled(indices, self.wd, self.wd_mult, 'wd_mult')

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def _step_kwargs(self, index):
        """Counts the update of `index`; the fused op's lr, wd, rescale_grad and clip_gradient."""
        self._update_count(index)
        kwargs = {'rescale_grad': self.rescale_grad, 'lr': self._get_lr(index), 'wd': self._get_wd(index)}
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        return kwargs

    def __getstate__(self):
        state = self.__dict__.copy()
        state['_index_update_count'] = None  # an alias into _all_index_update_counts
        return state

    def __setstate__(self, state):
        self.__dict__ = state
        self._index_update_count = self._all_index_update_counts.setdefault(0, {})


register = Optimizer.register
create = Optimizer.create_optimizer


def _zeros_like(weight):
    return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)


def _sgd_step(weight, grad, mom, **kwargs):
    """One SGD step of the weight in place: sgd_mom_update with a momentum state, sgd_update
    without (LARS and LBSGD, which choose lr themselves)."""
    if mom is not None:
        nd.sgd_mom_update(weight, grad, mom, out=weight, **kwargs)
    else:
        nd.sgd_update(weight, grad, out=weight, **kwargs)


class _Momentum(Optimizer):
    """SGD and NAG: a momentum state when momentum is not 0, and plain SGD steps without."""
    _momentum_update = None  # the fused op's name
    _master_copy_last = True

    def __init__(self, momentum=0.0, **kwargs):
        super(_Momentum, self).__init__(**kwargs)
        self.momentum = momentum

    def create_state(self, index, weight):
        return _zeros_like(weight) if self.momentum != 0.0 else None

    def update(self, index, weight, grad, state):
        kwargs = self._step_kwargs(index)
        if state is not None:
            getattr(nd, self._momentum_update)(weight, grad, state, out=weight, momentum=self.momentum, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, **kwargs)

    def update_multi_precision(self, index, weight, grad, state):
        """float16 weights with multi_precision: MXNet's fused steps on the float32 master copy
        (mp_sgd_update, mp_sgd_mom_update, mp_nag_mom_update), which then casts into the weight."""
        if not (self.multi_precision and weight.dtype == numpy.float16):
            return super(_Momentum, self).update_multi_precision(index, weight, grad, state)
        mom, master = state
        kwargs = self._step_kwargs(index)
        if mom is not None:
            getattr(nd, "mp_" + self._momentum_update)(weight, grad, mom, master, out=weight,
                                                       momentum=self.momentum, **kwargs)
        else:
            nd.mp_sgd_update(weight, grad, master, out=weight, **kwargs)


@register
class SGD(_Momentum):
    """SGD with momentum and weight decay::

        mom = momentum * mom - lr * (clip(rescale_grad * grad) + wd * weight)
        weight += mom

    (without momentum: ``weight -= lr * (clip(rescale_grad * grad) + wd * weight)``).
    ``lazy_update`` is accepted for compatibility (it concerns sparse gradients).
    """
    _momentum_update = "sgd_mom_update"

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super(SGD, self).__init__(momentum=momentum, **kwargs)
        self.lazy_update = lazy_update
        # MXNet's Updater steps this many weights per aggregated call; mxplug's steps them one
        # by one (the same numbers), and update() takes lists of weights, as below.
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', "4"))

    def update(self, index, weight, grad, state):
        """One step of a weight, or (index a list) of several in one aggregated op."""
        if isinstance(index, (list, tuple)):
            return self._update_aggregated(index, weight, grad, state, False)
        return super(SGD, self).update(index, weight, grad, state)

    def update_multi_precision(self, index, weight, grad, state):
        if isinstance(index, (list, tuple)):
            mp = self.multi_precision and weight[0].dtype == numpy.float16
            return self._update_aggregated(index, weight, grad, state, mp)
        return super(SGD, self).update_multi_precision(index, weight, grad, state)

    def _update_aggregated(self, indices, weights, grads, states, multi_precision):
        """MXNet's aggregated steps: multi_sgd_update, multi_sgd_mom_update and their mp_
        forms over (weight, grad[, mom][, master]) of every index."""
        self._update_count(indices)
        kwargs = {'rescale_grad': self.rescale_grad, 'lrs': self._get_lrs(indices),
                  'wds': self._get_wds(indices), 'num_weights': len(weights)}
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        op = 'multi_mp_sgd' if multi_precision else 'multi_sgd'
        per_weight = [[w, g] for w, g in zip(weights, grads)]
        if self.momentum > 0:
            op += '_mom'
            kwargs['momentum'] = self.momentum
        for inputs, state in zip(per_weight, states):
            if self.momentum > 0:
                inputs.append(state[0] if multi_precision else state)
            if multi_precision:
                inputs.append(state[1])
        getattr(nd, op + '_update')(*[a for inputs in per_weight for a in inputs],
                                    out=list(weights), **kwargs)


@register
class NAG(_Momentum):
    """Nesterov accelerated gradient::

        g = clip(rescale_grad * grad) + wd * weight
        mom = momentum * mom - lr * g
        weight += momentum * mom - lr * g
    """
    _momentum_update = "nag_mom_update"


@register
class Adam(Optimizer):
    """Adam (Kingma and Ba): the bias correction of step t is folded into the learning rate,
    ``lr * sqrt(1 - beta2**t) / (1 - beta1**t)``, then ``adam_update`` runs."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super(Adam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, variance

    def update(self, index, weight, grad, state):
        kwargs = self._step_kwargs(index)
        t = self._index_update_count[index]
        kwargs['lr'] *= math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        mean, var = state
        nd.adam_update(weight, grad, mean, var, out=weight, beta1=self.beta1, beta2=self.beta2,
                       epsilon=self.epsilon, **kwargs)


@register
class AdaGrad(Optimizer):
    """AdaGrad (Duchi et al.)::

        g = clip(rescale_grad * grad); history += g**2
        weight -= lr * (g / sqrt(history + eps) + wd * weight)
    """

    def __init__(self, eps=1e-7, **kwargs):
        super(AdaGrad, self).__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return _zeros_like(weight)  # the sum of squared gradients

    def update(self, index, weight, grad, state):
        nd.adagrad_update(weight, grad, state, out=weight, epsilon=self.float_stable_eps,
                          **self._step_kwargs(index))


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman and Hinton's (``centered=False``, ``rmsprop_update``) or Graves's
    centred form (``centered=True``, ``rmspropalex_update``, which uses gamma2); weights are
    clipped to ``[-clip_weights, clip_weights]`` when clip_weights is set."""

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8, centered=False,
                 clip_weights=None, **kwargs):
        super(RMSProp, self).__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        if self.centered:
            return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))  # n, g, delta
        return (_zeros_like(weight),)  # n

    def update(self, index, weight, grad, state):
        kwargs = self._step_kwargs(index)
        kwargs.update(gamma1=self.gamma1, epsilon=self.epsilon)
        if self.clip_weights:
            kwargs['clip_weights'] = self.clip_weights
        if self.centered:
            nd.rmspropalex_update(weight, grad, *state, out=weight, gamma2=self.gamma2, **kwargs)
        else:
            nd.rmsprop_update(weight, grad, state[0], out=weight, **kwargs)


# ---- Optimizers MXNet writes in Python, over NDArray arithmetic ----------------------------------

@register
class Signum(Optimizer):
    """Signum (Bernstein et al. 2018): the sign of a momentum of the gradients, with the weight
    decay wd inside the momentum and wd_lh (Loshchilov and Hutter's) applied to the weight::

        mom = momentum * mom - (1 - momentum) * (wd * weight + clip(rescale_grad * grad))
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

    Without momentum it is signSGD: ``weight = (1 - lr * wd) * weight - lr * sign(grad)``."""

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super(Signum, self).__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    create_state = _Momentum.create_state  # a momentum state unless momentum is 0

    def update(self, index, weight, grad, state):
        kwargs = self._step_kwargs(index)
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        if self.wd_lh:
            kwargs['wd_lh'] = self.wd_lh
        if state is not None:
            nd.signum_update(weight, grad, state, out=weight, **kwargs)
        else:
            nd.signsgd_update(weight, grad, out=weight, **kwargs)


@register
class FTML(Optimizer):
    """FTML, Follow the Moving Leader (Zheng and Kwok 2017), with the fused ``ftml_update``
    (states d, v, z)."""

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super(FTML, self).__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight), _zeros_like(weight))  # d, v, z

    def update(self, index, weight, grad, state):
        kwargs = self._step_kwargs(index)
        clip = kwargs.pop('clip_gradient', None)
        if clip:
            kwargs['clip_grad'] = clip  # ftml_update's name for it
        d, v, z = state
        nd.ftml_update(weight, grad, d, v, z, out=weight, beta1=self.beta1, beta2=self.beta2,
                       epsilon=self.epsilon, t=self._index_update_count[index], **kwargs)


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al. 2013), with the fused ``ftrl_update`` (states z, n).
    As in MXNet, its learning rate defaults to 0.1."""

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super(Ftrl, self).__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        # float32 whatever the weight's dtype, as MXNet makes them
        return (nd.zeros(weight.shape, weight.context), nd.zeros(weight.shape, weight.context))

    def update(self, index, weight, grad, state):
        z, n = state
        nd.ftrl_update(weight, grad, z, n, out=weight, lamda1=self.lamda1, beta=self.beta,
                       **self._step_kwargs(index))


@register
class LAMB(Optimizer):
    """LAMB (You et al. 2019): Adam's step direction scaled per weight by the trust ratio
    ``norm(weight) / norm(step)`` (``lamb_update_phase1``, the norms, ``lamb_update_phase2``);
    lower_bound and upper_bound clamp the weight's norm."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super(LAMB, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, variance

    def update(self, index, weight, grad, state):
        kwargs = self._step_kwargs(index)
        lr = kwargs.pop('lr')
        mean, var = state
        g = nd.lamb_update_phase1(weight, grad, mean, var, beta1=self.beta1, beta2=self.beta2,
                                  epsilon=self.epsilon, bias_correction=self.bias_correction,
                                  t=self._index_update_count[index], **kwargs)
        bounds = {}
        if self.lower_bound:
            bounds['lower_bound'] = self.lower_bound
        if self.upper_bound:
            bounds['upper_bound'] = self.upper_bound
        nd.lamb_update_phase2(weight, g, weight.norm(), g.norm(), lr=lr, out=weight, **bounds)


@register
class LARS(Optimizer):
    """LARS, layer-wise adaptive rate scaling (You et al. 2017): SGD (with momentum) whose
    learning rate for each weight is scaled by ``eta * norm(w) / (norm(g) * rescale_grad + wd *
    norm(w) + eps)`` (by 1 when either norm is 0, and not for names ending in gamma, beta or
    bias). With momentum_correction the momentum is scaled by the ratio of this step's learning
    rate to the last one's. Only names ending in ``_weight`` get weight decay."""

    _master_copy_last = True

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0, momentum_correction=True,
                 **kwargs):
        super(LARS, self).__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def _get_lrs(self, indices):
        # Tracks this step's learning rate and the last one's, for momentum_correction.
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        lr = self.learning_rate
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        return self._scaled(indices, lr, self.lr_mult, 'lr_mult')

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith('_weight')}
        self.wd_mult.update(self._multipliers_from_sym('__wd_mult__'))
        self.wd_mult.update(args_wd_mult)

    create_state = _Momentum.create_state  # a momentum state unless momentum is 0

    def _scaled_lr(self, index, weight, grad, lr, wd):
        name = self.idx2name.get(index, str(index))
        if name.endswith('gamma') or name.endswith('beta') or name.endswith('bias'):
            return lr
        w_norm = float(nd.norm(weight.astype('float32')).asscalar())
        g_norm = float(nd.norm(grad.astype('float32')).asscalar())
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm * self.rescale_grad + wd * w_norm + self.eps)
        return lr

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr = self._get_lrs([index])[0]
        wd = self._get_wd(index)
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = (self.momentum * (self.cur_lr / self.last_lr)
                                  if self.momentum_correction and self.last_lr != 0 else self.momentum)
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        _sgd_step(weight, grad, state, lr=self._scaled_lr(index, weight, grad, lr, wd), wd=wd, **kwargs)


@register
class LBSGD(Optimizer):
    """Large-batch SGD (Goyal et al. 2017): gradients are accumulated over ``batch_scale``
    updates and applied as their mean, with the learning rate multiplied during
    ``warmup_epochs * updates_per_epoch`` updates by a factor that rises from 1 to
    ``batch_scale`` ('linear', 'power2', 'sqrt'), or by the LARS ratio ('lars')."""

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear',
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super(LBSGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    create_state = _Momentum.create_state  # a momentum state unless momentum is 0

    def _get_lbmult(self, nup):
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        rising = {'linear': lambda: (maxmult - 1) * nup / nwup,
                  'power2': lambda: (maxmult - 1) * (nup * nup) / (nwup * nwup),
                  'sqrt': lambda: (maxmult - 1) * math.sqrt(float(nup) / nwup)}
        return 1.0 + rising[self.warmup_strategy]() if self.warmup_strategy in rising else 1.0

    def _get_lars(self, weight, g, wd):
        weight2 = float((weight * weight).asnumpy().sum())
        grad2 = float((g * g).asnumpy().sum())
        return min(max(math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18)), 0.01), 100)

    def _cumulate_gradient(self, grad, index):
        cgrad = self.cumgrads.get(index, {})
        if cgrad and cgrad['num_cums'] > 0:
            cgrad = {'cum_grad': cgrad['cum_grad'] + grad, 'num_cums': cgrad['num_cums'] + 1}
        else:
            cgrad = {'cum_grad': grad, 'num_cums': self.init_updates + 1}
        self.cumgrads[index] = cgrad
        return cgrad

    def update(self, index, weight, grad, state):
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad['num_cums'] % self.batch_scale != 0:
            return  # MXNet runs an update with lr 0 here, which changes nothing
        grad = cgrad['cum_grad'] / self.batch_scale
        if self.warmup_strategy == 'lars':
            lr *= self._get_lars(weight, grad, wd)
        else:
            lr *= self._get_lbmult(cgrad['num_cums'])
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        _sgd_step(weight, grad, state, lr=lr, wd=wd, **kwargs)
        self.cumgrads[index]['cum_grad'] = 0


class _Elementwise(Optimizer):
    """The start of an update written in array arithmetic: counts it and gives (lr, wd, the
    gradient rescaled and clipped as MXNet's Python optimizers do). The caller's gradient array is
    left as it is (MXNet's AdaDelta scales it in place)."""

    def _prepare(self, index, grad, weight=None, wd_in_grad=False):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = grad * self.rescale_grad
        if wd_in_grad:
            grad = grad + wd * weight
        if self.clip_gradient is not None:
            grad = nd.clip(grad, -self.clip_gradient, self.clip_gradient)
        return lr, wd, grad


@register
class AdaDelta(_Elementwise):
    """AdaDelta (Zeiler): steps of sqrt(E[dx^2] + eps) / sqrt(E[g^2] + eps) * g, decayed by rho;
    the learning rate is not used."""

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super(AdaDelta, self).__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # accumulated g^2, accumulated delta^2

    def update(self, index, weight, grad, state):
        _, wd, grad = self._prepare(index, grad)
        acc_g, acc_delta = state
        acc_g[:] = self.rho * acc_g + (1. - self.rho) * grad * grad
        delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] = self.rho * acc_delta + (1. - self.rho) * delta * delta
        weight[:] -= delta + wd * weight


@register
class Adamax(_Elementwise):
    """Adamax (Kingma and Ba): Adam with the infinity norm, u = max(beta2 * u, |g|)."""

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super(Adamax, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, infinity norm

    def update(self, index, weight, grad, state):
        lr, _, grad = self._prepare(index, grad, weight, wd_in_grad=True)
        lr /= 1. - self.beta1 ** self._index_update_count[index]
        m, u = state
        m[:] = self.beta1 * m + (1. - self.beta1) * grad
        u[:] = nd.maximum(self.beta2 * u, nd.abs(grad))
        weight[:] -= lr * m / u


@register
class Nadam(_Elementwise):
    """Nadam (Dozat): Adam with Nesterov momentum and the momentum schedule
    beta1 * (1 - 0.5 * 0.96^(t * schedule_decay))."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8, schedule_decay=0.004,
                 **kwargs):
        super(Nadam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (_zeros_like(weight), _zeros_like(weight))  # mean, variance

    def update(self, index, weight, grad, state):
        lr, _, grad = self._prepare(index, grad, weight, wd_in_grad=True)
        t = self._index_update_count[index]
        momentum_t = self.beta1 * (1. - 0.5 * 0.96 ** (t * self.schedule_decay))
        momentum_next = self.beta1 * (1. - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        self.m_schedule *= momentum_t
        m_schedule_next = self.m_schedule * momentum_next
        m, v = state
        m[:] = self.beta1 * m + (1. - self.beta1) * grad
        v[:] = self.beta2 * v + (1. - self.beta2) * grad * grad
        m_bar = (1. - momentum_t) * (grad / (1. - self.m_schedule)) + momentum_next * (m / (1. - m_schedule_next))
        weight[:] -= lr * m_bar / (nd.sqrt(v / (1. - self.beta2 ** t)) + self.epsilon)


@register
class SGLD(_Elementwise):
    """Stochastic gradient Langevin dynamics: half a gradient step, then normal noise of
    variance lr (from mx.random's stream)."""

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        lr, wd, grad = self._prepare(index, grad)
        weight[:] += -lr / 2 * (grad + wd * weight)
        weight[:] += nd.random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                      ctx=weight.context)


@register
class DCASGD(_Elementwise):
    """Delay-compensated asynchronous SGD (Zheng et al.): the gradient corrected by
    lamda * g * g * (w - w_previous), with momentum when given."""

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super(DCASGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        return (None if self.momentum == 0.0 else _zeros_like(weight), weight.copy())  # momentum, w_previous

    def update(self, index, weight, grad, state):
        lr, wd, grad = self._prepare(index, grad)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:  # MXNet 1.9.1 tests `if mom:`, the array's truth, and so fails here
            mom[:] = self.momentum * mom + step
            step = mom
        previous[:] = weight
        weight[:] += step


class Updater(object):
    """Applies an optimizer to weights by index, holding each weight's state: what
    ``kv.set_optimizer`` installs and ``Module.update`` calls as ``updater(index, grad, weight)``."""

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states = {}
        self.states_synced = {}
        self.aggregate_updates = False

    def __call__(self, index, grad, weight):
        if isinstance(index, (list, tuple)):
            indices, grads, weights = list(index), grad, weight
        else:
            indices, grads, weights = [index], [grad], [weight]
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        for i, w, g in zip(indices, weights, grads):
            if isinstance(i, bytes):
                i = i.decode()
            if i not in self.states:
                self.states[i] = self.optimizer.create_state_multi_precision(i, w)
                self.states_synced[i] = True
            elif not self.states_synced[i]:
                self.states[i] = self.sync_state_context(self.states[i], w.context)
                self.states_synced[i] = True
            self.optimizer.update_multi_precision(i, w, g, self.states[i])

    def sync_state_context(self, state, context):
        """The state moved to `context` (states loaded from a file live on the CPU)."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def set_states(self, states):
        """Restores states pickled by get_states (with the optimizer, when it was dumped too)."""
        states = pickle.loads(states)
        if isinstance(states, tuple) and len(states) == 2:
            self.states, self.optimizer = states
        else:
            self.states = states
        self.states_synced = dict.fromkeys(self.states.keys(), False)

    def get_states(self, dump_optimizer=False):
        """The states pickled (with the optimizer when dump_optimizer), as MXNet writes them."""
        return pickle.dumps((self.states, self.optimizer) if dump_optimizer else self.states)

    def save_states(self, fname, dump_optimizer=False):
        """Writes get_states() to `fname` (MXNet's .states file), atomically."""
        _core.write_file_atomically(fname, self.get_states(dump_optimizer))

    def load_states(self, fname):
        """Restores the states from a file written by save_states."""
        with open(fname, 'rb') as fin:
            self.set_states(fin.read())


def get_updater(optimizer):
    """The Updater of `optimizer` (a callable ``updater(index, grad, weight)``)."""
    return Updater(optimizer)
