"""parwidth: a thread governor for deep-learning programs on CPUs.

The wheel carries the `parwidth` command and the preload library inside this
package, in the same layout as every other install (bin/parwidth,
lib/libparwidth.so: the command finds the library at ../lib). The `parwidth`
script on PATH and `python -m parwidth` both run the command.
"""
from pathlib import Path

__all__ = ["command", "library"]

_ROOT = Path(__file__).resolve().parent


def command() -> Path:
    """The `parwidth` executable of this installation."""
    return _ROOT / "bin" / "parwidth"


def library() -> Path:
    """libparwidth.so, for LD_PRELOAD (same as `parwidth --print-lib`)."""
    return _ROOT / "lib" / "libparwidth.so"
