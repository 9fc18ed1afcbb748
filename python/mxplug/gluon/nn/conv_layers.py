"""Gluon's convolution and pooling layers (MXNet 1.9.1's ``Conv1D``...``Conv3DTranspose``,
``MaxPool1D``...``GlobalAvgPool3D``, ``ReflectionPad2D``): the Convolution, Deconvolution, Pooling
and pad operators with MXNet's parameter names, shapes and defaults."""
from ..block import HybridBlock
from .basic_layers import Activation


def _tuple(value, n):
    return (value,) * n if isinstance(value, int) else tuple(value)


class _Conv(HybridBlock):
    """A convolution (``op_name`` Convolution or Deconvolution) of ``channels`` output channels;
    ``in_channels`` 0 infers the input channels at the first call."""

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout, in_channels=0,
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 op_name='Convolution', adj=None, prefix=None, params=None):
        super(_Conv, self).__init__(prefix=prefix, params=params)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            n = len(kernel_size)
            strides, padding, dilation = _tuple(strides, n), _tuple(padding, n), _tuple(dilation, n)
            self._op_name = op_name
            self._kwargs = {'kernel': kernel_size, 'stride': strides, 'dilate': dilation, 'pad': padding,
                            'num_filter': channels, 'num_group': groups, 'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            # (out, in / groups, *kernel) for a convolution, (in, out / groups, *kernel) transposed;
            # channels last for the layouts that put them last.
            if op_name == 'Convolution':
                outer, inner = channels, in_channels // groups if in_channels else 0
            else:
                outer, inner = in_channels, channels // groups
            wshape = (outer, inner) + tuple(kernel_size)
            if layout.endswith('C'):
                wshape = (outer,) + tuple(kernel_size) + (inner,)
            self.weight = self.params.get('weight', shape=wshape, init=weight_initializer, allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            self.act = Activation(activation, prefix=activation + '_') if activation is not None else None

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        return self.act(out) if self.act is not None else out

    def _alias(self):
        return 'conv'

    def __repr__(self):
        s = '{name}({mapping}, kernel_size={kernel}, stride={stride}'
        len_kernel_size = len(self._kwargs['kernel'])
        if self._kwargs['pad'] != (0,) * len_kernel_size:
            s += ', padding={pad}'
        if self._kwargs['dilate'] != (1,) * len_kernel_size:
            s += ', dilation={dilate}'
        if hasattr(self, 'out_pad') and self.out_pad != (0,) * len_kernel_size:
            s += ', output_padding={out_pad}'.format(out_pad=self.out_pad)
        if self._kwargs['num_group'] != 1:
            s += ', groups={num_group}'
        if self.bias is None:
            s += ', bias=False'
        if self.act:
            s += ', {}'.format(self.act)
        s += ')'
        shape = self.weight.shape
        return s.format(name=self.__class__.__name__,
                        mapping='{0} -> {1}'.format(shape[1] if shape[1] else None, shape[0]), **self._kwargs)


class _ConvNd(_Conv):
    """Conv1D/2D/3D: MXNet's signature, with ints taken for every axis."""
    _dims = 0
    _layout = ''

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout, activation, use_bias,
                 weight_initializer, bias_initializer, in_channels, **kwargs):
        kernel_size = _tuple(kernel_size, self._dims)
        if len(kernel_size) != self._dims:
            raise AssertionError("kernel_size must be a number or a list of %d ints" % self._dims)
        super(_ConvNd, self).__init__(channels, kernel_size, strides, padding, dilation, groups, layout, in_channels,
                                      activation, use_bias, weight_initializer, bias_initializer, **kwargs)


class Conv1D(_ConvNd):
    """1D convolution over (N, C, W) data."""
    _dims = 1

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1, layout='NCW',
                 activation=None, use_bias=True, weight_initializer=None, bias_initializer='zeros', in_channels=0,
                 **kwargs):
        super(Conv1D, self).__init__(channels, kernel_size, strides, padding, dilation, groups, layout, activation,
                                     use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv2D(_ConvNd):
    """2D convolution over (N, C, H, W) data."""
    _dims = 2

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1,
                 layout='NCHW', activation=None, use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        super(Conv2D, self).__init__(channels, kernel_size, strides, padding, dilation, groups, layout, activation,
                                     use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class Conv3D(_ConvNd):
    """3D convolution over (N, C, D, H, W) data."""
    _dims = 3

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0), dilation=(1, 1, 1), groups=1,
                 layout='NCDHW', activation=None, use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        super(Conv3D, self).__init__(channels, kernel_size, strides, padding, dilation, groups, layout, activation,
                                     use_bias, weight_initializer, bias_initializer, in_channels, **kwargs)


class _ConvNdTranspose(_Conv):
    """Conv1D/2D/3DTranspose (the Deconvolution operator, ``output_padding`` its adj)."""
    _dims = 0

    def __init__(self, channels, kernel_size, strides, padding, output_padding, dilation, groups, layout,
                 activation, use_bias, weight_initializer, bias_initializer, in_channels, **kwargs):
        kernel_size = _tuple(kernel_size, self._dims)
        output_padding = _tuple(output_padding, self._dims)
        if len(kernel_size) != self._dims or len(output_padding) != self._dims:
            raise AssertionError("kernel_size and output_padding must be numbers or lists of %d ints" % self._dims)
        super(_ConvNdTranspose, self).__init__(
            channels, kernel_size, strides, padding, dilation, groups, layout, in_channels, activation, use_bias,
            weight_initializer, bias_initializer, op_name='Deconvolution', adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv1DTranspose(_ConvNdTranspose):
    """1D transposed convolution."""
    _dims = 1

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0, dilation=1, groups=1,
                 layout='NCW', activation=None, use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        super(Conv1DTranspose, self).__init__(channels, kernel_size, strides, padding, output_padding, dilation,
                                              groups, layout, activation, use_bias, weight_initializer,
                                              bias_initializer, in_channels, **kwargs)


class Conv2DTranspose(_ConvNdTranspose):
    """2D transposed convolution."""
    _dims = 2

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0), output_padding=(0, 0),
                 dilation=(1, 1), groups=1, layout='NCHW', activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        super(Conv2DTranspose, self).__init__(channels, kernel_size, strides, padding, output_padding, dilation,
                                              groups, layout, activation, use_bias, weight_initializer,
                                              bias_initializer, in_channels, **kwargs)


class Conv3DTranspose(_ConvNdTranspose):
    """3D transposed convolution."""
    _dims = 3

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0), output_padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        super(Conv3DTranspose, self).__init__(channels, kernel_size, strides, padding, output_padding, dilation,
                                              groups, layout, activation, use_bias, weight_initializer,
                                              bias_initializer, in_channels, **kwargs)


class _Pooling(HybridBlock):
    """Pooling of ``pool_type`` over windows of ``pool_size`` (strides default to it);
    ``ceil_mode`` rounds the output size up (MXNet's 'full' convention)."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type, layout,
                 count_include_pad=None, **kwargs):
        super(_Pooling, self).__init__(**kwargs)
        if strides is None:
            strides = pool_size
        n = len(pool_size)
        self._kwargs = {'kernel': pool_size, 'stride': _tuple(strides, n), 'pad': _tuple(padding, n),
                        'global_pool': global_pool, 'pool_type': pool_type, 'layout': layout,
                        'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        s = '{name}(size={kernel}, stride={stride}, padding={pad}, ceil_mode={ceil_mode}'
        s += ', global_pool={global_pool}, pool_type={pool_type}, layout={layout})'
        return s.format(name=self.__class__.__name__, ceil_mode=self._kwargs['pooling_convention'] == 'full',
                        **self._kwargs)


# The pools, with MXNet's signatures (whose order of layout and ceil_mode differs among them).
class MaxPool1D(_Pooling):
    """Max pooling over (N, C, W) data."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False, **kwargs):
        super(MaxPool1D, self).__init__(_tuple(pool_size, 1), strides, padding, ceil_mode, False, 'max', layout,
                                        **kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over (N, C, H, W) data."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW', ceil_mode=False, **kwargs):
        super(MaxPool2D, self).__init__(_tuple(pool_size, 2), strides, padding, ceil_mode, False, 'max', layout,
                                        **kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over (N, C, D, H, W) data."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, layout='NCDHW', **kwargs):
        super(MaxPool3D, self).__init__(_tuple(pool_size, 3), strides, padding, ceil_mode, False, 'max', layout,
                                        **kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over (N, C, W) data."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False, count_include_pad=True,
                 **kwargs):
        super(AvgPool1D, self).__init__(_tuple(pool_size, 1), strides, padding, ceil_mode, False, 'avg', layout,
                                        count_include_pad, **kwargs)


class AvgPool2D(_Pooling):
    """Average pooling over (N, C, H, W) data."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False, layout='NCHW',
                 count_include_pad=True, **kwargs):
        super(AvgPool2D, self).__init__(_tuple(pool_size, 2), strides, padding, ceil_mode, False, 'avg', layout,
                                        count_include_pad, **kwargs)


class AvgPool3D(_Pooling):
    """Average pooling over (N, C, D, H, W) data."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False, layout='NCDHW',
                 count_include_pad=True, **kwargs):
        super(AvgPool3D, self).__init__(_tuple(pool_size, 3), strides, padding, ceil_mode, False, 'avg', layout,
                                        count_include_pad, **kwargs)


class _GlobalPooling(_Pooling):
    _dims, _type = 0, ''

    def __init__(self, layout, **kwargs):
        super(_GlobalPooling, self).__init__((1,) * self._dims, None, 0, True, True, self._type, layout, **kwargs)


class GlobalMaxPool1D(_GlobalPooling):
    """The maximum over the whole width."""
    _dims, _type = 1, 'max'

    def __init__(self, layout='NCW', **kwargs):
        super(GlobalMaxPool1D, self).__init__(layout, **kwargs)


class GlobalMaxPool2D(_GlobalPooling):
    """The maximum over each channel's whole plane."""
    _dims, _type = 2, 'max'

    def __init__(self, layout='NCHW', **kwargs):
        super(GlobalMaxPool2D, self).__init__(layout, **kwargs)


class GlobalMaxPool3D(_GlobalPooling):
    """The maximum over each channel's whole volume."""
    _dims, _type = 3, 'max'

    def __init__(self, layout='NCDHW', **kwargs):
        super(GlobalMaxPool3D, self).__init__(layout, **kwargs)


class GlobalAvgPool1D(_GlobalPooling):
    """The mean over the whole width."""
    _dims, _type = 1, 'avg'

    def __init__(self, layout='NCW', **kwargs):
        super(GlobalAvgPool1D, self).__init__(layout, **kwargs)


class GlobalAvgPool2D(_GlobalPooling):
    """The mean over each channel's whole plane."""
    _dims, _type = 2, 'avg'

    def __init__(self, layout='NCHW', **kwargs):
        super(GlobalAvgPool2D, self).__init__(layout, **kwargs)


class GlobalAvgPool3D(_GlobalPooling):
    """The mean over each channel's whole volume."""
    _dims, _type = 3, 'avg'

    def __init__(self, layout='NCDHW', **kwargs):
        super(GlobalAvgPool3D, self).__init__(layout, **kwargs)


class ReflectionPad2D(HybridBlock):
    """Pads the two spatial axes of NCHW data by reflection (``padding``: an int, or MXNet's
    8-tuple of pad_width)."""

    def __init__(self, padding=0, **kwargs):
        super(ReflectionPad2D, self).__init__(**kwargs)
        if isinstance(padding, int):
            padding = (0, 0, 0, 0, padding, padding, padding, padding)
        if len(padding) != 8:
            raise AssertionError("padding must be an int or 8 ints (pad_width)")
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)
