"""The linear-algebra operators (mx.nd.linalg, mx.sym.linalg, the _linalg_* ops and their
linalg_* aliases): the same snippets under MXNet 1.9.1 and under mxplug give the same outputs and
the same gradients (autograd with random head gradients, and an executor's backward), in batches,
in float32 and float64, for every parameter combination; bad shapes, dtypes and matrices LAPACK
cannot factor raise MXNetError (at the call, or at the next wait as MXNet defers them). The
factorizations are also checked against what they must satisfy (L L^T = A, U A = diag(L) U)."""
import numpy as np

from parity import assert_parity

# Seen by every case: the same random arrays on both sides, and `grads`, which records f on the
# arrays given, runs backward with random head gradients and returns outputs and gradients.
PRE = """
rs = np.random.RandomState(7)
def arr(*shape, dtype='float64'):
    return mx.nd.array(rs.randn(*shape), dtype=dtype)
def spd(n, batch=(), dtype='float64'):
    x = rs.randn(*(batch + (n, n)))
    return mx.nd.array(np.matmul(x, np.swapaxes(x, -1, -2)) + n * np.eye(n), dtype=dtype)
def tri(n, lower, batch=()):
    x = rs.randn(*(batch + (n, n))) + 3 * np.eye(n)
    return mx.nd.array(np.tril(x) if lower else np.triu(x), dtype='float64')
def grads(f, *xs):
    for x in xs:
        x.attach_grad()
    with mx.autograd.record():
        out = f(*xs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    heads = [mx.nd.array(rs.randn(*o.shape), dtype=o.dtype) for o in outs]
    mx.autograd.backward(outs, heads)
    return outs + [x.grad for x in xs]
"""


def cases(**snippets):
    return {name: PRE + code for name, code in snippets.items()}


def test_products_match_mxnet():
    assert_parity(cases(
        gemm="r = grads(lambda a, b, c: mx.nd.linalg.gemm(a, b, c, transpose_a=True, alpha=2., beta=.5), "
             "arr(2, 4, 3), arr(2, 4, 5), arr(2, 3, 5))",
        gemm_transposes="r = [grads(lambda a, b, c: mx.nd.linalg.gemm(a, b, c, transpose_a=ta, transpose_b=tb), "
                        "arr(*((4, 3) if ta else (3, 4))), arr(*((5, 4) if tb else (4, 5))), arr(3, 5)) "
                        "for ta in (False, True) for tb in (False, True)]",
        gemm_axis="r = grads(lambda a, b, c: mx.nd.linalg.gemm(a, b, c, axis=1, beta=2.), "
                  "arr(2, 3, 5, 4), arr(2, 4, 5, 6), arr(2, 3, 5, 6))",
        gemm2_float32="r = grads(lambda a, b: mx.nd.linalg.gemm2(a, b, transpose_b=True, alpha=-1.5), "
                      "arr(3, 2, 4, dtype='float32'), arr(3, 5, 4, dtype='float32'))",
        gemm2_axis="r = grads(lambda a, b: mx.nd.linalg.gemm2(a, b, axis=-3, transpose_a=True), "
                   "arr(4, 3, 2), arr(4, 5, 2))",
        syrk="r = [grads(lambda a: mx.nd.linalg.syrk(a, transpose=t, alpha=.7), arr(2, 3, 4)) for t in (False, True)]",
        aliases="a, b = arr(2, 3), arr(3, 2); r = (mx.nd.linalg_gemm2(a, b), mx.nd.linalg_syrk(a), "
                "mx.sym.linalg_gemm2(mx.sym.var('a'), mx.sym.var('b')).eval(a=a, b=b))",
    ), rtol=1e-5)


def test_triangular_products_and_solves_match_mxnet():
    combos = "[(t, right, lower) for t in (False, True) for right in (False, True) for lower in (False, True)]"
    assert_parity(cases(
        trmm="r = [grads(lambda a, b: mx.nd.linalg.trmm(a, b, transpose=t, rightside=right, lower=lower, alpha=1.5), "
             "arr(2, 3, 3), arr(*((2, 4, 3) if right else (2, 3, 4)))) for t, right, lower in %s]" % combos,
        trsm="r = [grads(lambda a, b: mx.nd.linalg.trsm(a, b, transpose=t, rightside=right, lower=lower, alpha=-2.), "
             "tri(3, lower, (2,)), arr(*((2, 4, 3) if right else (2, 3, 4)))) for t, right, lower in %s]" % combos,
    ), rtol=1e-6)


def test_factorizations_match_mxnet_and_hold(mx):
    assert_parity(cases(
        potrf="r = grads(mx.nd.linalg.potrf, spd(4, (2,)))",
        potrf_float32="r = grads(mx.nd.linalg.potrf, spd(3, dtype='float32'))",
        potri="l = mx.nd.linalg.potrf(spd(4, (3,))); r = grads(mx.nd.linalg.potri, l)",
        gelqf="r = grads(mx.nd.linalg.gelqf, arr(2, 3, 5))",
        gelqf_q_only="r = grads(lambda a: mx.nd.linalg.gelqf(a)[0], arr(3, 4))",
        syevd="a = arr(2, 4, 4); r = grads(mx.nd.linalg.syevd, a + a.transpose((0, 2, 1)))",
        syevd_eigenvalues_only="a = arr(3, 3); r = grads(lambda x: mx.nd.linalg.syevd(x)[1], a + a.T)",
        inverse="r = grads(mx.nd.linalg.inverse, arr(2, 3, 3))",
        det="r = grads(mx.nd.linalg.det, arr(3, 4, 4))",
        det_2d_and_singular="r = (grads(mx.nd.linalg.det, arr(3, 3)), "
                            "grads(mx.nd.linalg.det, mx.nd.array([[[1., 2], [2, 4]], [[2, 1], [1, 3]]])))",
        slogdet="r = grads(mx.nd.linalg.slogdet, mx.nd.array([[[2., 3], [1, 4]], [[1, 2], [2, 4]], [[1, 2], [4, 3]]]))",
        slogdet_batch="r = grads(mx.nd.linalg.slogdet, arr(2, 2, 5, 5))",
        sumlogdiag="r = grads(mx.nd.linalg.sumlogdiag, spd(3, (2, 2)))",
    ), rtol=1e-6)
    # What the factors must satisfy, whatever MXNet does.
    rs = np.random.RandomState(0)
    x = rs.randn(3, 4, 4)
    a = x @ x.transpose(0, 2, 1) + 4 * np.eye(4)
    l = mx.nd.linalg.potrf(mx.nd.array(a, dtype="float64")).asnumpy()
    np.testing.assert_allclose(l @ l.transpose(0, 2, 1), a, rtol=1e-12)
    assert np.allclose(l, np.tril(l))
    np.testing.assert_allclose(mx.nd.linalg.potri(mx.nd.array(l, dtype="float64")).asnumpy(),
                               np.linalg.inv(a), rtol=1e-10)
    u, lam = (t.asnumpy() for t in mx.nd.linalg.syevd(mx.nd.array(a, dtype="float64")))
    np.testing.assert_allclose(u @ a, lam[..., None] * u, atol=1e-10)
    np.testing.assert_allclose(lam, np.linalg.eigvalsh(a), rtol=1e-12)
    m = rs.randn(2, 3, 6)
    q, l = (t.asnumpy() for t in mx.nd.linalg.gelqf(mx.nd.array(m, dtype="float64")))
    np.testing.assert_allclose(l @ q, m, atol=1e-12)
    np.testing.assert_allclose(q @ q.transpose(0, 2, 1), np.broadcast_to(np.eye(3), (2, 3, 3)), atol=1e-12)
    np.testing.assert_allclose(mx.nd.linalg.det(mx.nd.array(x, dtype="float64")).asnumpy(), np.linalg.det(x),
                               rtol=1e-10)


def test_diagonals_and_triangles_match_mxnet():
    assert_parity(cases(
        extractdiag="r = [grads(lambda a: mx.nd.linalg.extractdiag(a, offset=k), arr(2, 4, 4)) for k in (0, 1, -2)]",
        makediag="r = [grads(lambda a: mx.nd.linalg.makediag(a, offset=k), arr(2, 3)) for k in (0, 2, -1)]",
        extracttrian="r = [grads(lambda a: mx.nd.linalg.extracttrian(a, offset=k, lower=lo), arr(2, 4, 4)) "
                     "for k in (0, 1, -1, 2) for lo in (True, False)]",
        maketrian="r = [grads(lambda a: mx.nd.linalg.maketrian(a, offset=k, lower=lo), arr(2, 6)) "
                  "for k in (0, 1, -2) for lo in (True, False)]",
        float32="r = grads(lambda a: mx.nd.linalg.maketrian(mx.nd.linalg.extracttrian(a)), arr(3, 3, dtype='float32'))",
    ))


def test_symbols_and_executors_match_mxnet():
    assert_parity(cases(
        shapes="a, b, c = mx.sym.var('a'), mx.sym.var('b'), mx.sym.var('c'); "
               "r = (mx.sym.linalg.gemm(a, b, c, axis=1).infer_shape_partial(a=(2, 3, 5, 4), b=(2, 4, 5, 6)), "
               "mx.sym.linalg.gelqf(a).infer_shape(a=(2, 3, 5)), mx.sym.linalg.syevd(a).infer_shape(a=(4, 4)), "
               "mx.sym.linalg.det(a).infer_shape(a=(2, 2)), mx.sym.linalg.slogdet(a).infer_shape(a=(3, 2, 2)), "
               "mx.sym.linalg.maketrian(a, offset=-1).infer_shape(a=(5, 6)), "
               "mx.sym.linalg.extracttrian(a).infer_shape(a=(4, 4)), mx.sym.linalg.syrk(a, transpose=True).infer_shape(a=(2, 5)))",
        names="a = mx.sym.var('a'); r = [s.list_outputs() for s in (mx.sym.linalg.gelqf(a, name='lq'), "
              "mx.sym.linalg.syevd(a, name='e'), mx.sym.linalg.potrf(a, name='c'), mx.sym.linalg.slogdet(a, name='d'))]"
              " + [mx.sym.linalg_trsm(a, mx.sym.var('b')).list_arguments()]",
        executor="a = mx.sym.var('a'); s = mx.sym.linalg.sumlogdiag(mx.sym.linalg.potrf(a)); "
                 "x = spd(3, (2,)); ex = s.bind(mx.cpu(), {'a': x}, args_grad={'a': mx.nd.zeros((2, 3, 3), dtype='float64')}); "
                 "ex.forward(is_train=True); ex.backward(mx.nd.array([1., 2.], dtype='float64')); "
                 "r = (ex.outputs[0], ex.grad_dict['a'])",
    ))


def test_gradients_accumulate_with_grad_req_add(mx):
    # MXNet 1.9.1's linalg backward overwrites an 'add' gradient (its dot accumulates): mxplug
    # accumulates for both.
    rs = np.random.RandomState(1)
    b = mx.nd.array(rs.randn(3, 4), dtype="float64")
    for f in (lambda a: mx.nd.linalg.gemm2(a, b), lambda a: mx.nd.dot(a, b), mx.nd.linalg.syrk,
              lambda a: mx.nd.linalg.extractdiag(mx.nd.linalg.syrk(a))):
        a = mx.nd.array(rs.randn(2, 3), dtype="float64")
        a.attach_grad()
        with mx.autograd.record():
            y = f(a)
        y.backward()
        once = a.grad.asnumpy().copy()
        a.attach_grad(grad_req="add")
        for _ in range(2):
            with mx.autograd.record():
                y = f(a)
            y.backward()
        np.testing.assert_allclose(a.grad.asnumpy(), 2 * once, rtol=1e-12)


def test_bad_input_raises_as_mxnet():
    assert_parity(cases(
        gelqf_tall="r = mx.nd.linalg.gelqf(arr(3, 2))",
        maketrian_not_a_triangle="r = mx.nd.linalg.maketrian(arr(4))",
        extractdiag_offset="r = mx.nd.linalg.extractdiag(arr(3, 3), offset=5)",
        gemm2_mismatch="r = mx.nd.linalg.gemm2(arr(2, 3), arr(4, 2))",
        trsm_not_square="r = mx.nd.linalg.trsm(arr(2, 3), arr(2, 3))",
        float16="r = mx.nd.linalg.gemm2(arr(2, 3, dtype='float16'), arr(3, 2, dtype='float16'))",
        potrf_not_positive_definite="r = mx.nd.linalg.potrf(mx.nd.array([[1., 2], [2, 1]]))",
        inverse_singular="r = mx.nd.linalg.inverse(mx.nd.array([[1., 2], [2, 4]]))",
        then_it_works="try:\n    mx.nd.linalg.inverse(mx.nd.array([[1., 2], [2, 4]])).wait_to_read()\nexcept Exception:\n    pass\n"
                      "r = mx.nd.linalg.inverse(mx.nd.array([[2., 0], [0, 4]]))",
    ))
