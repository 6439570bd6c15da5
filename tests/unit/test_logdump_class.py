"""Which DumpLogSegments a run's version has: the class moved from the broker's core jar to
kafka-tools in 4.3, so the tools jars are asked (harness/logdump.py `has_class`)."""

import zipfile

from kafka_chaos.harness.logdump import _TOOLS_CLASS, has_class


def _jar(path, *entries):
    with zipfile.ZipFile(path, "w") as z:
        for entry in entries:
            z.writestr(entry, b"")


def test_the_tools_class_is_found_only_in_a_jar_that_holds_it(tmp_path):
    old, new = tmp_path / "4.2.2-tools", tmp_path / "4.3.1-tools"
    old.mkdir(), new.mkdir()
    _jar(old / "kafka-tools-4.2.2.jar", "org/apache/kafka/tools/ConsumerPerformance.class")
    _jar(new / "kafka-tools-4.3.1.jar", "org/apache/kafka/tools/ConsumerPerformance.class", _TOOLS_CLASS)
    (new / "broken.jar").write_bytes(b"not a zip")
    assert _TOOLS_CLASS == "org/apache/kafka/tools/DumpLogSegments.class"
    assert not has_class(old, _TOOLS_CLASS)
    assert has_class(new, _TOOLS_CLASS)
