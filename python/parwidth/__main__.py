"""`python -m parwidth ...` and the `parwidth` script: replace this Python
process with the command, so its exit code, signals and stdin are the command's own."""
import os
import sys

from parwidth import command


def main() -> int:
    exe = command()
    try:
        os.execv(exe, [str(exe), *sys.argv[1:]])
    except OSError as e:
        print(f"parwidth: error: cannot run {exe}: {e.strerror}", file=sys.stderr)
        return 127
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
