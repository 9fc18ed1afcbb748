"""Where the model zoo finds pretrained parameters: ``<root>/<name>-<hash>.params``, the files
MXNet 1.9.1 downloads into ``$MXNET_HOME/models`` (default ~/.mxnet/models). mxplug downloads
nothing (the project's machines have no network): a model whose file is not there is refused,
naming where it was looked for."""
import glob
import os


def _default_root():
    return os.path.join(os.environ.get('MXNET_HOME', os.path.join('~', '.mxnet')), 'models')


def get_model_file(name, root=None):
    """The path of ``name``'s parameter file under ``root``."""
    root = os.path.expanduser(root if root is not None else _default_root())
    found = sorted(glob.glob(os.path.join(root, name + '-*.params')))
    if not found:
        raise IOError("pretrained parameters of %s not found: expected %s-<hash>.params in %s (MXNet's file; "
                      "mxplug does not download)" % (name, name, root))
    return found[0]


def purge(root=None):
    """Removes the parameter files under ``root``."""
    root = os.path.expanduser(root if root is not None else _default_root())
    for f in glob.glob(os.path.join(root, '*.params')):
        os.remove(f)
