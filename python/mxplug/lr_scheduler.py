"""Learning-rate schedules (MXNet's ``mx.lr_scheduler``): a scheduler maps the number of updates
done so far to a learning rate, with an optional warm-up from ``warmup_begin_lr``."""
import logging
from math import cos, pi

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler(object):
    """Base class: ``scheduler(num_update)`` is the learning rate after ``num_update`` updates
    (the most updates any weight has had)."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode='linear'):
        if not isinstance(warmup_steps, int):
            raise TypeError("warmup_steps must be an int, got %r" % (warmup_steps,))
        if warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_begin_lr > base_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if warmup_mode not in ('linear', 'constant'):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        if self.warmup_mode == 'constant':
            return self.warmup_begin_lr
        fraction = float(num_update) / float(self.warmup_steps)
        return self.warmup_begin_lr + (self.warmup_final_lr - self.warmup_begin_lr) * fraction

    def __call__(self, num_update):
        raise NotImplementedError("must override this")


class FactorScheduler(LRScheduler):
    """``base_lr * factor ** floor((num_update - 1) / step)``, never below ``stop_factor_lr``."""

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super(FactorScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # A loop, not an if: a resumed run may be several steps ahead of the schedule.
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr = max(self.base_lr * self.factor, self.stop_factor_lr)
            logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiplies the rate by ``factor`` each time ``num_update`` passes one of ``step``."""

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super(MultiFactorScheduler, self).__init__(base_lr, warmup_steps, warmup_begin_lr,
                                                   warmup_mode)
        if not isinstance(step, list) or not step:
            raise ValueError("step must be a non-empty list of update counts, got %r" % (step,))
        for i, s in enumerate(step):
            if i and s <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor > 1.0:
            raise ValueError("Factor must be no more than 1 to make lr reduce")
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


class _DecayToFinal(LRScheduler):
    """Schedules that go from base_lr to final_lr over max_update updates after the warm-up."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr, warmup_mode):
        super(_DecayToFinal, self).__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(max_update, int):
            raise TypeError("max_update must be an int, got %r" % (max_update,))
        if max_update < 1:
            raise ValueError("maximum number of updates must be strictly positive")
        self.base_lr_orig = base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = max_update - warmup_steps

    def _shape(self, fraction):
        raise NotImplementedError

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            fraction = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = self.final_lr + (self.base_lr_orig - self.final_lr) * self._shape(fraction)
        return self.base_lr


class PolyScheduler(_DecayToFinal):
    """``final_lr + (base_lr - final_lr) * (1 - t / max_update) ** pwr``."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0, warmup_steps=0,
                 warmup_begin_lr=0, warmup_mode='linear'):
        super(PolyScheduler, self).__init__(max_update, base_lr, final_lr, warmup_steps,
                                            warmup_begin_lr, warmup_mode)
        self.power = pwr

    def _shape(self, fraction):
        return pow(1 - fraction, self.power)


class CosineScheduler(_DecayToFinal):
    """``final_lr + (base_lr - final_lr) * (1 + cos(pi * t / max_update)) / 2``."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode='linear'):
        super(CosineScheduler, self).__init__(max_update, base_lr, final_lr, warmup_steps,
                                              warmup_begin_lr, warmup_mode)

    def _shape(self, fraction):
        return (1 + cos(pi * fraction)) / 2
