"""tf.app: run(main, argv) and flags (tf.app.flags).

run() parses the defined flags out of `argv` (sys.argv by default), leaving the arguments that
are not defined flags, calls main(those arguments) and exits with its return value, as
TensorFlow 1.x's tf.app.run does. A flag value that does not parse ends the program with
"FATAL Flags parsing error: ..." and status 1; `--help` prints the flags.
"""

import sys

from . import flags


def run(main=None, argv=None):
    if main is None:
        main = sys.modules["__main__"].main
    try:
        remaining = flags.FLAGS(sys.argv if argv is None else argv, known_only=True)
    except flags.Error as e:
        sys.stderr.write("FATAL Flags parsing error: %s\n" % e)
        sys.stderr.write("Pass --helpshort or --helpfull to see help on flags.\n")
        sys.exit(1)
    sys.exit(main(remaining))
