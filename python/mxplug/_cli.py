"""The `mxplug` command of an installed wheel: runs the CLI binary the wheel holds (mxplug/bin),
whose RPATH finds libmxplug inside the package."""
import os
import sys


def main():
    binary = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "mxplug")
    if not os.path.exists(binary):
        sys.exit("mxplug: the CLI is not in this installation (%s); it comes with the wheel "
                 "(pip install .) and with the CMake install tree (bin/mxplug)" % binary)
    os.execv(binary, [binary] + sys.argv[1:])


if __name__ == "__main__":
    main()
