"""One container runs the log decoder once per request; its output is split back by marks."""

from kafka_chaos.harness.logdump import _one

MARK = "@@kafka-chaos-0123"


def test_each_request_gets_its_own_output_or_its_error(tmp_path):
    out = f"{MARK} 0\nDumping /logs/a.log\n| offset: 0\n{MARK} 0 0\n{MARK} 1\nError: no such file\n{MARK} 1 1\n"
    assert _one(out, MARK, 0, "", tmp_path) == "Dumping /logs/a.log\n| offset: 0\n"
    failed = _one(out, MARK, 1, "java.nio.file.NoSuchFileException", tmp_path)
    assert isinstance(failed, RuntimeError) and "exit 1" in str(failed) and "NoSuchFile" in str(failed)
    # A JVM killed before its closing mark, and one that printed nothing to decode.
    assert isinstance(_one(f"{MARK} 0\nDumping /logs/a.log\n", MARK, 0, "", tmp_path), RuntimeError)
    assert isinstance(_one(f"{MARK} 0\n{MARK} 0 0\n", MARK, 0, "", tmp_path), RuntimeError)
