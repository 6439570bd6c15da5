from kafka_chaos.harness.maven import RELOAD4J, logging_binding


def libs(tmp_path, *names):
    for name in names:
        (tmp_path / name).write_bytes(b"")
    return tmp_path


def test_kafka_3_gets_reload4j_matching_slf4j(tmp_path):
    d = libs(tmp_path, "kafka_2.13-3.4.1.jar", "slf4j-api-1.7.36.jar")
    assert logging_binding(d) == [RELOAD4J, ("org.slf4j", "slf4j-reload4j", "1.7.36")]


def test_kafka_4_with_slf4j_1_gets_log4j_slf4j_impl(tmp_path):
    d = libs(tmp_path, "log4j-api-2.24.3.jar", "log4j-core-2.24.3.jar", "slf4j-api-1.7.36.jar")
    assert logging_binding(d) == [("org.apache.logging.log4j", "log4j-slf4j-impl", "2.24.3")]


def test_kafka_4_with_slf4j_2_gets_log4j_slf4j2_impl(tmp_path):
    d = libs(tmp_path, "log4j-core-2.25.4.jar", "slf4j-api-2.0.17.jar")
    assert logging_binding(d) == [("org.apache.logging.log4j", "log4j-slf4j2-impl", "2.25.4")]
