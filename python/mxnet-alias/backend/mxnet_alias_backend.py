"""The alias's build backend: flit_core's, refusing where a real MXNet is installed.

pip builds in an isolated environment but with the target interpreter, so the target
environment's site-packages are found from the interpreter's prefix; a distribution named mxnet
(or mxnet-cu*, mxnet-mkl...) there that is not this alias is a real MXNet, which installing the
alias would uninstall."""
import importlib.metadata
import sys
import sysconfig

from flit_core import buildapi

ALIAS_TAG = "+mxplug"


def _real_mxnet():
    paths = {sysconfig.get_paths(vars={"base": sys.prefix, "platbase": sys.prefix})[k]
             for k in ("purelib", "platlib")}
    for dist in importlib.metadata.distributions(path=sorted(paths)):
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if (name == "mxnet" or name.startswith("mxnet-")) and ALIAS_TAG not in (dist.version or ""):
            return "%s %s (%s)" % (dist.metadata["Name"], dist.version, dist.locate_file(""))
    return None


def _refuse_over_real_mxnet():
    real = _real_mxnet()
    if real:
        raise RuntimeError(
            "the mxnet alias of mxplug will not install over a real MXNet: %s is installed in %s. "
            "Use `import mxplug as mx` there, or install the alias in another environment."
            % (real, sys.prefix))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _refuse_over_real_mxnet()
    return buildapi.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    _refuse_over_real_mxnet()
    return buildapi.build_editable(wheel_directory, config_settings, metadata_directory)


get_requires_for_build_wheel = buildapi.get_requires_for_build_wheel
get_requires_for_build_sdist = buildapi.get_requires_for_build_sdist
get_requires_for_build_editable = buildapi.get_requires_for_build_editable
prepare_metadata_for_build_wheel = buildapi.prepare_metadata_for_build_wheel
prepare_metadata_for_build_editable = buildapi.prepare_metadata_for_build_editable
build_sdist = buildapi.build_sdist
