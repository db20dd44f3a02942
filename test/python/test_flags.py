"""tf.app.flags and tf.app.run, as TensorFlow 1.x (absl) programs use them: definitions,
parsing (forms, booleans, lists, enums, bounds), unknown flags left to main's argv, parsing on
first access, --help, and errors."""

import subprocess
import sys
import textwrap

import pytest

import troupe as tf
from troupe import flags as flags_lib


@pytest.fixture
def flags():
    """A FlagValues of the test's own, with every kind of flag."""
    values = flags_lib.FlagValues()
    flags_lib.DEFINE_string("job_name", "", "One of 'ps', 'worker'", flag_values=values)
    flags_lib.DEFINE_integer("task_index", 0, "Index of task within the job", flag_values=values)
    flags_lib.DEFINE_float("learning_rate", 0.01, "Learning rate", flag_values=values)
    flags_lib.DEFINE_boolean("sync_replicas", False, "Synchronous training", flag_values=values)
    flags_lib.DEFINE_bool("log", True, "Log", flag_values=values)
    flags_lib.DEFINE_list("ps_hosts", "localhost:2222", "ps hosts", flag_values=values)
    flags_lib.DEFINE_enum("optimizer", "adam", ["adam", "sgd"], "optimizer", flag_values=values)
    return values


def test_defaults_before_anything_is_parsed_and_parse_leaves_positionals(flags):
    rest = flags(["prog", "a", "--task_index=3", "b"])
    assert rest == ["prog", "a", "b"]
    assert flags.job_name == ""
    assert flags.task_index == 3
    assert flags.learning_rate == 0.01
    assert flags.sync_replicas is False
    assert flags.ps_hosts == ["localhost:2222"]
    assert flags.optimizer == "adam"


def test_every_form_of_a_flag(flags):
    flags(["prog", "--job_name", "worker", "-task_index=2", "--learning_rate=0.5",
           "--sync_replicas", "--nolog", "--ps_hosts=h1:1,h2:2", "--optimizer", "sgd"])
    assert (flags.job_name, flags.task_index, flags.learning_rate) == ("worker", 2, 0.5)
    assert flags.sync_replicas is True and flags.log is False
    assert flags.ps_hosts == ["h1:1", "h2:2"]
    assert flags.optimizer == "sgd"
    flags(["prog", "--sync_replicas=false", "--log=1", "--task_index=0x10"])
    assert flags.sync_replicas is False and flags.log is True and flags.task_index == 16


def test_unknown_flags_are_left_with_known_only_and_refused_otherwise(flags):
    rest = flags(["prog", "--unknown=1", "--task_index=1", "--other"], known_only=True)
    assert rest == ["prog", "--unknown=1", "--other"]
    with pytest.raises(flags_lib.UnrecognizedFlagError, match="unknown"):
        flags(["prog", "--unknown=1"])


def test_double_dash_ends_the_flags(flags):
    assert flags(["prog", "--", "--task_index=5"]) == ["prog", "--task_index=5"]
    assert flags.task_index == 0


def test_bad_values_are_illegal_flag_values_naming_the_flag(flags):
    for argv, needle in [(["--task_index=x"], "--task_index=x"),
                         (["--learning_rate=fast"], "--learning_rate=fast"),
                         (["--sync_replicas=maybe"], "Non-boolean"),
                         (["--optimizer=rmsprop"], "value should be one of <adam|sgd>")]:
        with pytest.raises(flags_lib.IllegalFlagValueError, match=needle):
            flags(["prog"] + argv)
    with pytest.raises(flags_lib.Error, match="Missing value"):
        flags(["prog", "--job_name"])
    values = flags_lib.FlagValues()
    flags_lib.DEFINE_integer("workers", 1, "", lower_bound=1, flag_values=values)
    with pytest.raises(flags_lib.IllegalFlagValueError, match="0 is not >= 1"):
        values(["prog", "--workers=0"])


def test_definitions_attributes_and_errors(flags):
    with pytest.raises(flags_lib.DuplicateFlagError, match="'task_index' is defined twice"):
        flags_lib.DEFINE_integer("task_index", 1, "", flag_values=flags)
    with pytest.raises(AttributeError):
        flags.undefined_flag
    flags(["prog"])
    flags.task_index = "7"  # set values convert as parsed ones do
    assert flags.task_index == 7
    with pytest.raises(flags_lib.IllegalFlagValueError):
        flags.task_index = "seven"
    with pytest.raises(AttributeError, match="not a defined flag"):
        flags.nothing = 1
    assert flags.flag_values_dict()["task_index"] == 7
    assert getattr(flags, "__flags")["job_name"] == ""
    assert "task_index" in flags and flags.is_parsed()
    with pytest.raises(TypeError):
        flags("prog --task_index=1")
    with pytest.raises(ValueError, match="program name"):
        flags([])
    with pytest.raises(ValueError, match="enum_values"):
        flags_lib.DEFINE_enum("e", "a", [], "", flag_values=flags)


def run_program(body, *args):
    program = textwrap.dedent("""\
        import troupe as tf
        flags = tf.app.flags
        flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
        flags.DEFINE_integer("task_index", 0, "Index of task within the job")
        FLAGS = flags.FLAGS
        """) + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", program] + list(args), capture_output=True,
                          text=True, timeout=60)


def test_tf_app_run_passes_main_the_arguments_that_are_not_flags():
    done = run_program("""
        def main(argv):
            print(FLAGS.job_name, FLAGS.task_index, argv[1:])
            return 3
        tf.app.run()
        """, "--job_name=ps", "--task_index", "1", "--undefined", "file.txt")
    assert done.returncode == 3, done.stderr
    assert done.stdout.strip() == "ps 1 ['--undefined', 'file.txt']"


def test_flags_parse_sys_argv_on_first_access():
    done = run_program("print(FLAGS.task_index, FLAGS.job_name)", "--task_index=4", "--x=1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "4"


def test_a_bad_value_in_tf_app_run_is_a_fatal_parsing_error():
    done = run_program("tf.app.run(lambda argv: 0)", "--task_index=one")
    assert done.returncode == 1
    assert "FATAL Flags parsing error: flag --task_index=one" in done.stderr


def test_help_lists_the_flags_and_exits():
    done = run_program("tf.app.run(lambda argv: 0)", "--help")
    assert done.returncode == 1
    assert "--task_index: Index of task within the job" in done.stdout
    assert "(default: '0')" in done.stdout
