"""Checkpoints in MXNet's files (``mx.model``): ``prefix-symbol.json`` for the network and
``prefix-%04d.params`` for its parameters, names prefixed ``arg:`` and ``aux:``. Files written
by MXNet 1.x load here and the other way round."""
import logging
from collections import namedtuple

from . import ndarray as nd
from . import symbol as sym
from .context import cpu

__all__ = ["BatchEndParam", "save_checkpoint", "load_params", "load_checkpoint"]

# What batch-end callbacks receive: the epoch, the batch number, the metric and the caller's locals.
BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Writes ``prefix-symbol.json`` (unless symbol is None) and ``prefix-%04d.params``."""
    if symbol is not None:
        symbol.save('%s-symbol.json' % prefix)
    save_dict = {'arg:%s' % k: v.as_in_context(cpu()) for k, v in arg_params.items()}
    save_dict.update({'aux:%s' % k: v.as_in_context(cpu()) for k, v in aux_params.items()})
    param_name = '%s-%04d.params' % (prefix, epoch)
    nd.save(param_name, save_dict)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """(arg_params, aux_params) from ``prefix-%04d.params``."""
    fname = "%s-%04d.params" % (prefix, epoch)
    save_dict = nd.load(fname)
    arg_params, aux_params = {}, {}
    if not save_dict:
        logging.warning("Params file '%s' is empty", fname)
        return arg_params, aux_params
    if not isinstance(save_dict, dict):
        raise ValueError("%s holds unnamed arrays; a checkpoint names them arg:<name> / aux:<name>" % fname)
    for key, value in save_dict.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
        else:
            raise ValueError("%s: array '%s' is neither arg:<name> nor aux:<name>" % (fname, key))
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) from ``prefix-symbol.json`` and ``prefix-%04d.params``."""
    symbol = sym.load('%s-symbol.json' % prefix)
    arg_params, aux_params = load_params(prefix, epoch)
    return symbol, arg_params, aux_params
