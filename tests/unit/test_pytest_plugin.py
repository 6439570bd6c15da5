"""The pytest plugin's collection logic, in generated test files (pytester), without clusters:
which versions a chaos test runs on, the cluster spec it gets, its marking, bad input.
The fixtures on real clusters are tested in tests/integration/test_pytest_plugin.py."""

import pytest

from kafka_chaos.harness.versions import DEFAULT_VERSION

SPEC_TEST = """
import pytest

{marker}
def test_spec(kafka_spec):
    print("SPEC", kafka_spec.version, kafka_spec.nodes, kafka_spec.controllers, kafka_spec.brokers,
          sorted(kafka_spec.config.items()))
"""


def ids(result: pytest.RunResult) -> list[str]:
    return sorted(line.split("::")[-1] for line in result.outlines if "::" in line and "[" in line)


def test_the_default_version_when_nothing_says_otherwise(pytester):
    pytester.makepyfile(f"def test_v(kafka_version):\n    assert kafka_version == {DEFAULT_VERSION!r}\n")
    result = pytester.runpytest_subprocess("--collect-only", "-q")
    assert ids(result) == [f"test_v[kafka-{DEFAULT_VERSION}]"]
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


def test_kafka_versions_parametrizes_every_chaos_test(pytester):
    pytester.makepyfile(
        """
        def test_a(kafka_version):
            pass

        def test_b(kafka_spec):
            pass

        def test_plain():
            pass
        """
    )
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--kafka-versions", "3.9.1, 4.3.1")
    assert ids(result) == ["test_a[kafka-3.9.1]", "test_a[kafka-4.3.1]", "test_b[kafka-3.9.1]", "test_b[kafka-4.3.1]"]
    assert "test_plain" in result.stdout.str()


def test_the_marker_gives_versions_and_the_command_line_beats_it(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka(versions=["3.4.1", "3.5.2"])
        def test_m(kafka_version):
            pass
        """
    )
    assert ids(pytester.runpytest_subprocess("--collect-only", "-q")) == ["test_m[kafka-3.4.1]", "test_m[kafka-3.5.2]"]
    overridden = pytester.runpytest_subprocess("--collect-only", "-q", "--kafka-versions", "4.3.1")
    assert ids(overridden) == ["test_m[kafka-4.3.1]"]


def test_min_and_max_version_skip_the_versions_outside(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka(min_version="3.5.0", max_version="3.9.1")
        def test_m(kafka_version):
            pass
        """
    )
    result = pytester.runpytest_subprocess("-rs", "--kafka-versions", "3.4.1,3.5.0,3.9.1,4.3.1")
    result.assert_outcomes(passed=2, skipped=2)
    result.stdout.fnmatch_lines(["*holds for Kafka 3.5.0..3.9.1 only*"])


def test_shape_and_config_come_from_the_marker(pytester):
    marker = '@pytest.mark.kafka(controllers=1, brokers=2, config={"min.insync.replicas": "2"})'
    pytester.makepyfile(SPEC_TEST.format(marker=marker))
    result = pytester.runpytest_subprocess("-s", "--kafka-nodes", "5")
    result.assert_outcomes(passed=1)
    assert f"SPEC {DEFAULT_VERSION} 3 1 2 [('min.insync.replicas', '2')]" in result.stdout.str()


def test_the_command_line_shape_applies_when_the_marker_has_none(pytester):
    pytester.makepyfile(SPEC_TEST.format(marker='@pytest.mark.kafka(config={"a": "b"})'))
    result = pytester.runpytest_subprocess("-s", "--kafka-controllers", "3", "--kafka-brokers", "4")
    assert f"SPEC {DEFAULT_VERSION} 3 3 4 [('a', 'b')]" in result.stdout.str()
    result = pytester.runpytest_subprocess("-s", "--kafka-nodes", "1")
    assert f"SPEC {DEFAULT_VERSION} 1 0 3 [('a', 'b')]" in result.stdout.str()


def test_chaos_tests_are_marked_so_that_they_can_be_deselected(pytester):
    pytester.makepyfile("def test_c(kafka_version):\n    pass\n\ndef test_plain():\n    pass\n")
    pytester.runpytest_subprocess("-m", "not chaos").assert_outcomes(passed=1, deselected=1)
    pytester.runpytest_subprocess("-m", "chaos").assert_outcomes(passed=1, deselected=1)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--kafka-versions", "3.9"], "*kafka-chaos: --kafka-versions: malformed Kafka version '3.9'*"),
        (["--kafka-versions", "3.3.2"], "*kafka-chaos: --kafka-versions: *3.3.2*"),
        (["--kafka-versions", ","], "*kafka-chaos: --kafka-versions names no version*"),
        (["--kafka-controllers", "1"], "*kafka-chaos: --kafka-controllers and --kafka-brokers go together*"),
    ],
)
def test_bad_options_are_one_line_usage_errors(pytester, args, message):
    pytester.makepyfile("def test_v(kafka_version):\n    pass\n")
    result = pytester.runpytest_subprocess(*args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_marker_keyword_that_does_not_exist_is_an_error(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka(node=3)
        def test_m(kafka_version):
            pass
        """
    )
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*unknown kafka marker keyword(s) node*"])


def test_a_bad_workload_option_fails_the_test_in_one_line_before_any_cluster(pytester):
    pytester.makepyfile("def test_r(chaos_run):\n    chaos_run(acks='2')\n")
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*kafka-chaos: --acks must be one of 0, 1, all; got '2'*"])
    pytester.makepyfile("def test_r(chaos_run):\n    chaos_run(ack='1')\n")
    pytester.runpytest_subprocess().stdout.fnmatch_lines(["*unknown workload option(s) ack*"])


def test_a_bad_version_in_the_marker_names_the_test(pytester):
    pytester.makepyfile(
        """
        import pytest

        @pytest.mark.kafka(min_version="3.5")
        def test_m(kafka_version):
            pass
        """
    )
    result = pytester.runpytest_subprocess()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*test_m*kafka marker: malformed Kafka version '3.5'*"])


def test_kafka_clients_parametrizes_every_test_that_runs_chaos(pytester):
    pytester.makepyfile(
        """
        def test_run(chaos_run, kafka_client):
            assert kafka_client in ("java", "librdkafka")

        def test_cluster_only(kafka_spec):
            pass
        """
    )
    result = pytester.runpytest_subprocess("--collect-only", "-q", "--kafka-clients", "java, librdkafka")
    assert ids(result) == [
        f"test_cluster_only[kafka-{DEFAULT_VERSION}]",
        f"test_run[client-java-kafka-{DEFAULT_VERSION}]",
        f"test_run[client-librdkafka-kafka-{DEFAULT_VERSION}]",
    ]
    pytester.runpytest_subprocess("--kafka-clients", "java,librdkafka", "-k", "test_run").assert_outcomes(passed=2)
    default = pytester.runpytest_subprocess("--collect-only", "-q")
    assert ids(default) == [f"test_cluster_only[kafka-{DEFAULT_VERSION}]", f"test_run[kafka-{DEFAULT_VERSION}]"]


def test_an_unknown_client_is_a_usage_error(pytester):
    pytester.makepyfile("def test_run(chaos_run):\n    pass\n")
    result = pytester.runpytest_subprocess("--kafka-clients", "java,rdkafka")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kafka-clients: unknown client 'rdkafka'*"])
