"""tf.contrib.training.HParams (TensorFlow 1.x's hparam_test cases, rewritten): typed
hyperparameters set from code, strings and JSON, with TensorFlow's errors."""

import json

import pytest

import troupe as tf

HParams = tf.contrib.training.HParams


def test_values_types_and_parse():
    hparams = HParams(aaa=1, b=2.0, c_c="relu6", d="/a/b=c/d", e=True, f=[1, 2], g=[0.5])
    assert hparams.values() == {"aaa": 1, "b": 2.0, "c_c": "relu6", "d": "/a/b=c/d", "e": True,
                                "f": [1, 2], "g": [0.5]}
    assert "aaa" in hparams and "zzz" not in hparams
    hparams.parse("aaa=12,b=3, c_c=relu4, d=/x/y, e=false, f=[5,6,7], g[0]=1.5")
    assert (hparams.aaa, hparams.b, hparams.c_c, hparams.d, hparams.e) == \
        (12, 3.0, "relu4", "/x/y", False)
    assert hparams.f == [5, 6, 7] and hparams.g == [1.5]
    hparams.parse("b=4")  # an int for a float: cast
    assert hparams.b == 4.0 and isinstance(hparams.b, float)
    hparams.parse("e=1")
    assert hparams.e is True


def test_errors_as_tensorflows():
    hparams = HParams(aaa=1, b=2.0, e=False, f=[1])
    with pytest.raises(ValueError, match="Unknown hyperparameter type for unknown"):
        hparams.parse("unknown=1")
    with pytest.raises(ValueError, match="Could not parse hparam 'aaa' of type 'int'"):
        hparams.parse("aaa=2.5")
    with pytest.raises(ValueError, match="Malformed hyperparameter value"):
        hparams.parse("aaa")
    with pytest.raises(ValueError, match="Multiple assignments to variable 'aaa'"):
        hparams.parse("aaa=1,aaa=2")
    with pytest.raises(ValueError, match="Could not cast hparam 'aaa'"):
        hparams.set_hparam("aaa", 2.5)  # a float for an int
    with pytest.raises(ValueError, match="Could not cast hparam 'e'"):
        hparams.set_hparam("e", 1)  # a number for a bool
    with pytest.raises(ValueError, match="Must pass a list for multi-valued parameter: f"):
        hparams.set_hparam("f", 3)
    with pytest.raises(ValueError, match="Must not pass a list for single-valued parameter"):
        hparams.set_hparam("aaa", [3])
    with pytest.raises(ValueError, match="Hyperparameter name is reserved: values"):
        hparams.add_hparam("values", 1)
    with pytest.raises(ValueError, match="Multi-valued hyperparameters cannot be empty"):
        hparams.add_hparam("empty", [])


def test_json_get_and_delete():
    hparams = HParams(aaa=1, b=2.0, c="x")
    again = HParams(aaa=0, b=0.0, c="").parse_json(hparams.to_json())
    assert again.values() == hparams.values()
    assert json.loads(hparams.to_json(sort_keys=True)) == {"aaa": 1, "b": 2.0, "c": "x"}
    assert hparams.get("aaa") == 1 and hparams.get("missing", 7) == 7
    with pytest.raises(ValueError, match="incompatible with default"):
        hparams.get("aaa", "text")
    hparams.del_hparam("c")
    assert "c" not in hparams and not hasattr(hparams, "c")
    assert hparams.override_from_dict({"aaa": 5}).aaa == 5
    assert str(hparams) == "[('aaa', 5), ('b', 2.0)]"


def test_indexed_and_spaced_values():
    hparams = HParams(f=[1, 2, 3], s=["a"], n=1)
    hparams.parse("f[1]=7,s=[x y]")
    assert hparams.f == [1, 7, 3] and hparams.s == ["x", "y"]
    for bad, message in (("f[0]=1,f[0]=2", "Multiple assignments"),
                         ("n[0]=2", "single-valued parameter"),
                         ("f[9]=1", "out of range"), ("n=1,n[0]=2", "Multiple assignments")):
        with pytest.raises(ValueError, match=message):
            HParams(f=[1, 2, 3], n=1).parse(bad)
