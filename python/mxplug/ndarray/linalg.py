"""Linear algebra on arrays (MXNet's ``mx.nd.linalg``): ``gemm``, ``gemm2``, ``potrf``, ``potri``,
``trmm``, ``trsm``, ``sumlogdiag``, ``extractdiag``, ``makediag``, ``extracttrian``, ``maketrian``,
``syrk``, ``gelqf``, ``syevd``, ``inverse``, ``det`` and ``slogdet``: the ``_linalg_<x>`` operators
under their short names, added here by ``register.populate`` when the linalg plugin is loaded."""
