"""The scenario library: reproductions of the KIP loss scenarios against chosen Kafka versions."""
