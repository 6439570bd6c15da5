"""The data plane's rules: each key's version order, the consumers' references, and one module per
family of anomalies of ../shared/anomalies.md (lost and unseen writes, offsets, aborted and garbage
reads, poll and send order, precommitted reads), run per key by per_key.py."""
