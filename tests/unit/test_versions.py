import pytest

from kafka_chaos.harness.errors import UsageError
from kafka_chaos.harness.versions import DEFAULT_VERSION, OLDEST_SUPPORTED, KafkaVersion


@pytest.mark.parametrize("text", ["3.4.0", "3.4.1", "3.9.1", "4.0.0", "4.3.1", " 3.7.2 "])
def test_supported_versions_parse(text):
    assert str(KafkaVersion.parse(text)) == text.strip()


@pytest.mark.parametrize("text", ["", "latest", "3.9", "3.9.1.0", "v3.9.1", "3.9.x", "3.9.1-rc1", None])
def test_malformed_versions_are_usage_errors(text):
    with pytest.raises(UsageError, match="malformed Kafka version"):
        KafkaVersion.parse(text)


@pytest.mark.parametrize("text", ["2.8.2", "3.3.2", "3.0.0"])
def test_versions_before_3_4_are_refused(text):
    with pytest.raises(UsageError, match="not supported"):
        KafkaVersion.parse(text)


def test_ordering_is_numeric_not_lexical():
    assert KafkaVersion.parse("3.10.0") > KafkaVersion.parse("3.9.1")
    assert KafkaVersion.parse("4.0.0") > KafkaVersion.parse("3.9.2")


def test_per_version_facts():
    assert not KafkaVersion.parse("3.9.1").uses_log4j2
    assert KafkaVersion.parse("4.0.0").uses_log4j2
    assert not KafkaVersion.parse("3.6.2").has_official_image
    assert KafkaVersion.parse("3.7.0").has_official_image


def test_defaults_are_supported_releases():
    assert KafkaVersion.parse(OLDEST_SUPPORTED) < KafkaVersion.parse(DEFAULT_VERSION)
