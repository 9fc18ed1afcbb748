"""Evaluation metrics (MXNet's ``mx.metric``). A metric accumulates over ``update(labels,
preds)`` calls (lists of NDArrays) and reports ``get() -> (name, value)``; the local sums restart
with ``reset_local`` (each Speedometer period) while the global ones run until ``reset``.
"""
import math

import numpy

from . import ndarray as nd
from .ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC", "PCC", "Perplexity",
           "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood", "PearsonCorrelation", "Loss",
           "CustomMetric", "np", "create", "register"]

_REGISTRY = {}


def register(klass, *aliases):
    """Registers a metric class under its lower-cased name and `aliases` for ``create``."""
    for name in (klass.__name__,) + aliases:
        _REGISTRY[name.lower()] = klass
    return klass


def alias(*names):
    def decorate(klass):
        return register(klass, *names)
    return decorate


def create(metric, *args, **kwargs):
    """A metric from a name ('acc', 'ce', 'mse', 'top_k_accuracy', ...), a function
    ``feval(label, pred)`` (a CustomMetric), an EvalMetric, or a list of any of these (a
    CompositeEvalMetric)."""
    if callable(metric) and not isinstance(metric, type):
        return CustomMetric(metric, *args, **kwargs)
    if isinstance(metric, EvalMetric):
        return metric
    if isinstance(metric, list):
        composite = CompositeEvalMetric()
        for child in metric:
            composite.add(create(child, *args, **kwargs))
        return composite
    if not isinstance(metric, str):
        raise TypeError("metric create: a name, a function, an EvalMetric or a list, got %r" % (metric,))
    klass = _REGISTRY.get(metric.lower())
    if klass is None:
        raise ValueError("Metric must be either callable or in mx.metric: %s is not; metrics are: %s"
                         % (metric, ", ".join(sorted(_REGISTRY))))
    return klass(*args, **kwargs)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Checks that labels and preds agree in number (or in shape with shape=True); with wrap,
    single arrays are made lists."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape
    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of predictions {}"
                         .format(label_shape, pred_shape))
    if wrap:
        if isinstance(labels, NDArray):
            labels = [labels]
        if isinstance(preds, NDArray):
            preds = [preds]
    return labels, preds


def _numpy_pairs(labels, preds):
    """(label, pred) as NumPy arrays, one pair per output, after check_label_shapes."""
    labels, preds = check_label_shapes(labels, preds, True)
    for label, pred in zip(labels, preds):
        yield label.asnumpy(), pred.asnumpy()


class EvalMetric(object):
    """Base class: ``update`` adds to ``sum_metric`` and ``num_inst`` (and their global twins);
    ``get`` is their ratio, NaN before any update."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        """The keyword arguments that make this metric again with ``create(**config)``."""
        config = self._kwargs.copy()
        config.update({'metric': self.__class__.__name__, 'name': self.name,
                       'output_names': self.output_names, 'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """update from dicts of name to array, restricted to output_names / label_names."""
        pred = [pred[n] for n in self.output_names] if self.output_names is not None else list(pred.values())
        label = [label[n] for n in self.label_names] if self.label_names is not None else list(label.values())
        self.update(label, pred)

    def update(self, labels, preds):
        raise NotImplementedError()

    def _add(self, value, count):
        self.sum_metric += value
        self.global_sum_metric += value
        self.num_inst += count
        self.global_num_inst += count

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        self.num_inst = 0
        self.sum_metric = 0.0

    def _value(self, total, count):
        return float('nan') if count == 0 else total / count

    def get(self):
        return (self.name, self._value(self.sum_metric, self.num_inst))

    def get_global(self):
        if not self._has_global_stats:
            return self.get()
        return (self.name, self._value(self.global_sum_metric, self.global_num_inst))

    @staticmethod
    def _pairs(name, value):
        names = name if isinstance(name, list) else [name]
        values = value if isinstance(value, list) else [value]
        return list(zip(names, values))

    def get_name_value(self):
        return self._pairs(*self.get())

    def get_global_name_value(self):
        return self._pairs(*self.get_global())


@alias("composite")
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; get() gives lists of names and values."""

    def __init__(self, metrics=None, name='composite', output_names=None, label_names=None):
        super(CompositeEvalMetric, self).__init__(name, output_names=output_names,
                                                  label_names=label_names, has_global_stats=True)
        self.metrics = [create(m) for m in (metrics or [])]

    def add(self, metric):
        self.metrics.append(create(metric))

    def get_metric(self, index):
        try:
            return self.metrics[index]
        except IndexError:
            raise ValueError("Metric index {} is out of range 0 and {}".format(index, len(self.metrics)))

    def update_dict(self, labels, preds):
        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        for metric in getattr(self, "metrics", []):
            metric.reset()

    def reset_local(self):
        for metric in self.metrics:
            metric.reset_local()

    def _collect(self, how):
        names, values = [], []
        for metric in self.metrics:
            name, value = getattr(metric, how)()
            names += name if isinstance(name, list) else [name]
            values += value if isinstance(value, list) else [value]
        return (names, values)

    def get(self):
        return self._collect("get")

    def get_global(self):
        return self._collect("get_global")

    def get_config(self):
        config = super(CompositeEvalMetric, self).get_config()
        config.update({'metrics': [m.get_config() for m in self.metrics]})
        return config


@alias("acc")
class Accuracy(EvalMetric):
    """The fraction of samples whose predicted class (the argmax along `axis`, unless the
    prediction already has the label's shape) equals the label."""

    def __init__(self, axis=1, name='accuracy', output_names=None, label_names=None):
        super(Accuracy, self).__init__(name, axis=axis, output_names=output_names,
                                       label_names=label_names, has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            if pred.shape != label.shape:
                pred = nd.argmax(pred, axis=self.axis)
            pred = pred.asnumpy().astype('int32').ravel()
            label = label.asnumpy().astype('int32').ravel()
            check_label_shapes(label, pred)
            self._add(int((pred == label).sum()), len(pred))


@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(EvalMetric):
    """The fraction of samples whose label is among the top_k highest predictions."""

    def __init__(self, top_k=1, name='top_k_accuracy', output_names=None, label_names=None):
        super(TopKAccuracy, self).__init__(name, top_k=top_k, output_names=output_names,
                                           label_names=label_names, has_global_stats=True)
        self.top_k = top_k
        if top_k <= 1:
            raise ValueError('Please use Accuracy if top_k is no more than 1')
        self.name += '_%d' % self.top_k

    def update(self, labels, preds):
        for label, scores in _numpy_pairs(labels, preds):
            if scores.ndim > 2:
                raise ValueError('Predictions should be no more than 2 dims, got %s' % (scores.shape,))
            label = label.astype('int32').ravel()
            if scores.ndim == 1:
                correct = int((numpy.argmax(scores) == label).sum())
            else:
                k = min(scores.shape[1], self.top_k)
                top = numpy.argpartition(scores, -k, axis=1)[:, -k:]
                correct = int((top == label[:, None]).any(axis=1).sum())
            self._add(correct, scores.shape[0])


def _binary_counts(labels, preds, metric):
    """(true positives, false positives, false negatives, true negatives) of a binary
    classification (class 1 positive; the prediction is the argmax of each row)."""
    counts = numpy.zeros(4)
    for label, pred in _numpy_pairs(labels, preds):
        label = label.astype('int32').ravel()
        predicted = numpy.argmax(pred, axis=1)
        check_label_shapes(label, predicted)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification." % metric)
        counts += [((predicted == 1) & (label == 1)).sum(), ((predicted == 1) & (label != 1)).sum(),
                   ((predicted != 1) & (label == 1)).sum(), ((predicted != 1) & (label != 1)).sum()]
    return counts


class _BinaryScore(EvalMetric):
    """A score of a binary classification's counts (_binary_counts). average 'macro': the mean of
    each update's score; 'micro': the score of all samples counted together."""

    def __init__(self, name, output_names, label_names, average):
        if average not in ("macro", "micro"):
            raise ValueError("%s: average must be 'macro' or 'micro', got %r" % (type(self).__name__, average))
        self.average = average
        super(_BinaryScore, self).__init__(name, output_names=output_names, label_names=label_names,
                                           has_global_stats=True)

    @staticmethod
    def _score(tp, fp, fn, tn):
        raise NotImplementedError()

    def update(self, labels, preds):
        counts = _binary_counts(labels, preds, type(self).__name__)
        if self.average == "macro":
            self._add(self._score(*counts), 1)
        else:
            self._counts += counts
            self._global_counts += counts
            self.num_inst = self._counts.sum()
            self.global_num_inst = self._global_counts.sum()
            self.sum_metric = self._score(*self._counts) * self.num_inst
            self.global_sum_metric = self._score(*self._global_counts) * self.global_num_inst

    def reset(self):
        super(_BinaryScore, self).reset()
        self._counts = numpy.zeros(4)
        self._global_counts = numpy.zeros(4)

    def reset_local(self):
        super(_BinaryScore, self).reset_local()
        self._counts = numpy.zeros(4)


@alias("f1")
class F1(_BinaryScore):
    """F1 score of a binary classification (class 1 positive)."""

    def __init__(self, name='f1', output_names=None, label_names=None, average="macro"):
        super(F1, self).__init__(name, output_names, label_names, average)

    @staticmethod
    def _score(tp, fp, fn, tn):
        precision = tp / float(tp + fp) if tp + fp else 0.
        recall = tp / float(tp + fn) if tp + fn else 0.
        return 2 * precision * recall / (precision + recall) if precision + recall else 0.


@register
class MCC(_BinaryScore):
    """Matthews correlation coefficient of a binary classification (class 1 positive); a factor
    of the denominator that is 0 is left out, as MXNet leaves it."""

    def __init__(self, name='mcc', output_names=None, label_names=None, average="macro"):
        super(MCC, self).__init__(name, output_names, label_names, average)

    @staticmethod
    def _score(tp, fp, fn, tn):
        if tp + fp + fn + tn == 0:
            return 0.
        denominator = 1.
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            denominator *= term if term else 1.
        return float((tp * tn - fp * fn) / math.sqrt(denominator))


@register
class PCC(EvalMetric):
    """Multi-class Matthews correlation of the confusion matrix (rows: predictions, the argmax
    of each row of scores, or the labels given; columns: labels), grown as classes appear."""

    def __init__(self, name='pcc', output_names=None, label_names=None, has_global_stats=True):
        self.k = 2
        super(PCC, self).__init__(name, output_names=output_names, label_names=label_names,
                                  has_global_stats=has_global_stats)

    @staticmethod
    def _mcc(cmat):
        n = cmat.sum()
        x, y = cmat.sum(axis=1), cmat.sum(axis=0)
        cov_xx, cov_yy = numpy.sum(x * (n - x)), numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        return numpy.sum(cmat.diagonal() * n - x * y) / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        for label, pred in _numpy_pairs(labels, preds):
            label = label.astype('int32')
            pred = pred.argmax(axis=1) if pred.shape != label.shape else pred.astype('int32')
            n = max(pred.max(), label.max())
            if n >= self.k:  # more classes than seen so far: grow both matrices
                grow = int(n + 1 - self.k)
                self.lcm = numpy.pad(self.lcm, ((0, grow), (0, grow)), 'constant')
                self.gcm = numpy.pad(self.gcm, ((0, grow), (0, grow)), 'constant')
                self.k += grow
            counts = numpy.zeros((self.k, self.k))
            numpy.add.at(counts, (pred.ravel(), label.ravel()), 1)
            self.lcm += counts
            self.gcm += counts
        self.num_inst += 1
        self.global_num_inst += 1

    sum_metric = property(lambda self: self._mcc(self.lcm) * self.num_inst, lambda self, value: None)
    global_sum_metric = property(lambda self: self._mcc(self.gcm) * self.global_num_inst, lambda self, value: None)

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


@alias("pearsonr")
class PearsonCorrelation(EvalMetric):
    """Pearson's correlation of predictions and labels: 'macro', the mean of each update's;
    'micro', of all the values seen (running means and sums of squares, Welford's way)."""

    def __init__(self, name='pearsonr', output_names=None, label_names=None, average='macro'):
        self.average = average
        super(PearsonCorrelation, self).__init__(name, output_names=output_names, label_names=label_names,
                                                 has_global_stats=True)

    def reset(self):
        super(PearsonCorrelation, self).reset()
        self._n = self._mean_p = self._mean_l = self._sse_p = self._sse_l = self._cov = 0

    @staticmethod
    def _welford(values, count, mean, m2):
        count += len(values)
        delta = values - mean
        mean += numpy.sum(delta / count)
        m2 += numpy.sum(delta * (values - mean))
        return count, mean, m2

    def update(self, labels, preds):
        for label, pred in _numpy_pairs(labels, preds):
            check_label_shapes(label, pred, False, True)
            label, pred = label.ravel().astype(numpy.float64), pred.ravel().astype(numpy.float64)
            self.num_inst += 1
            self.global_num_inst += 1
            if self.average == 'macro':
                r = numpy.corrcoef(pred, label)[0, 1]
                self.sum_metric += r
                self.global_sum_metric += r
            else:
                n, self._mean_l, self._sse_l = self._welford(label, self._n, self._mean_l, self._sse_l)
                self._cov += numpy.sum((label - self._mean_l) * (pred - self._mean_p))
                self._n, self._mean_p, self._sse_p = self._welford(pred, self._n, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        if self.average == 'macro':
            return (self.name, self.sum_metric / self.num_inst)
        n = self._n
        return (self.name, self._cov / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1)) * numpy.sqrt(self._sse_l / (n - 1))))


@alias("perplexity")
class Perplexity(EvalMetric):
    """exp of the mean negative log-probability of the labels (labels equal to ignore_label
    are skipped)."""

    def __init__(self, ignore_label, axis=-1, name='perplexity', output_names=None, label_names=None):
        super(Perplexity, self).__init__(name, ignore_label=ignore_label, output_names=output_names,
                                         label_names=label_names, has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        if len(labels) != len(preds):
            raise ValueError("Perplexity: %d labels but %d predictions" % (len(labels), len(preds)))
        loss, num = 0., 0
        for label, pred in zip(labels, preds):
            probs = numpy.moveaxis(pred.asnumpy(), self.axis, -1).reshape(-1, pred.shape[self.axis])
            label = label.asnumpy().ravel().astype('int64')
            if label.size != probs.shape[0]:
                raise ValueError("shape mismatch: %s vs. %s" % (label.shape, pred.shape))
            keep = numpy.ones(label.size, bool) if self.ignore_label is None else label != self.ignore_label
            picked = probs[numpy.arange(label.size), label][keep]
            loss -= numpy.log(numpy.maximum(1e-10, picked)).sum()
            num += int(keep.sum())
        self._add(loss, num)

    def _value(self, total, count):
        return float('nan') if count == 0 else math.exp(total / count)


class _Regression(EvalMetric):
    """Per-batch errors of (label, pred) pairs, averaged over batches as MXNet does."""

    def __init__(self, name, output_names=None, label_names=None):
        super(_Regression, self).__init__(name, output_names=output_names, label_names=label_names,
                                          has_global_stats=True)

    def _error(self, diff):
        raise NotImplementedError

    def update(self, labels, preds):
        for label, pred in _numpy_pairs(labels, preds):
            label = label.reshape(label.shape[0], 1) if label.ndim == 1 else label
            pred = pred.reshape(pred.shape[0], 1) if pred.ndim == 1 else pred
            self._add(self._error(label - pred), 1)


@alias("mae")
class MAE(_Regression):
    """Mean absolute error."""

    def __init__(self, name='mae', output_names=None, label_names=None):
        super(MAE, self).__init__(name, output_names, label_names)

    def _error(self, diff):
        return numpy.abs(diff).mean()


@alias("mse")
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name='mse', output_names=None, label_names=None):
        super(MSE, self).__init__(name, output_names, label_names)

    def _error(self, diff):
        return (diff ** 2.0).mean()


@alias("rmse")
class RMSE(_Regression):
    """Root mean squared error (of each batch, averaged)."""

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super(RMSE, self).__init__(name, output_names, label_names)

    def _error(self, diff):
        return numpy.sqrt((diff ** 2.0).mean())


@alias("ce", "cross-entropy")
class CrossEntropy(EvalMetric):
    """Mean of -log(p[label] + eps) over samples; preds are probabilities (softmax outputs)."""

    def __init__(self, eps=1e-12, name='cross-entropy', output_names=None, label_names=None):
        super(CrossEntropy, self).__init__(name, eps=eps, output_names=output_names,
                                           label_names=label_names, has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        for label, pred in _numpy_pairs(labels, preds):
            label = label.ravel()
            if label.shape[0] != pred.shape[0]:
                raise ValueError("CrossEntropy: %d labels for %d predictions" % (label.shape[0], pred.shape[0]))
            prob = pred[numpy.arange(label.shape[0]), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), label.shape[0])


@alias("nll_loss")
class NegativeLogLikelihood(CrossEntropy):
    """Mean of -log(p[label] + eps) over samples, named 'nll-loss' (MXNet's second name for
    cross-entropy of probabilities)."""

    def __init__(self, eps=1e-12, name='nll-loss', output_names=None, label_names=None):
        super(NegativeLogLikelihood, self).__init__(eps, name, output_names, label_names)


@alias("loss")
class Loss(EvalMetric):
    """The mean of the outputs themselves (a network ending in MakeLoss)."""

    def __init__(self, name='loss', output_names=None, label_names=None):
        super(Loss, self).__init__(name, output_names=output_names, label_names=label_names,
                                   has_global_stats=True)

    def update(self, _, preds):
        for pred in [preds] if isinstance(preds, NDArray) else preds:
            self._add(float(pred.asnumpy().sum()), pred.size)


@alias("custom")
class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on NumPy arrays, returning a value (one instance) or
    ``(sum, count)``."""

    def __init__(self, feval, name=None, allow_extra_outputs=False, output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if '<' in name:
                name = 'custom(%s)' % name
        super(CustomMetric, self).__init__(name, feval=feval, allow_extra_outputs=allow_extra_outputs,
                                           output_names=output_names, label_names=label_names,
                                           has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)
        for pred, label in zip(preds, labels):
            value = self._feval(label.asnumpy(), pred.asnumpy())
            if isinstance(value, tuple):
                self._add(*value)
            else:
                self._add(value, 1)

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):
    """A CustomMetric from a function of NumPy arrays ``feval(label, pred) -> float``."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)
