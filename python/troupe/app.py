"""tf.app.run: runs main(argv) and exits with its return value."""

import sys


def run(main=None, argv=None):
    if main is None:
        main = sys.modules["__main__"].main
    args = sys.argv if argv is None else argv
    sys.exit(main(args))
